// Maps character offsets of a text to 1-based line and column, built once per file and only when a position
// is actually needed.
import type { Position } from '../diagnostics/diagnostic.js';

/** Offsets of line starts, for binary search (one typed array: counted first, then filled). */
export class LineIndex {
  private readonly starts: Int32Array;

  constructor(text: string) {
    let lines = 1;
    for (let i = text.indexOf('\n'); i !== -1; i = text.indexOf('\n', i + 1)) lines++;
    this.starts = new Int32Array(lines);
    let n = 1;
    for (let i = text.indexOf('\n'); i !== -1; i = text.indexOf('\n', i + 1)) this.starts[n++] = i + 1;
  }

  /** The position of a 0-based offset. */
  positionAt(offset: number): Position {
    let lo = 0;
    let hi = this.starts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if ((this.starts[mid] ?? 0) <= offset) lo = mid;
      else hi = mid - 1;
    }
    return { line: lo + 1, column: offset - (this.starts[lo] ?? 0) + 1, offset };
  }
}
