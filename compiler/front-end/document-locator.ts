// Turns (document, JSON pointer) into file positions, for one input. A text's locator resolves pointers in the
// parsed YAML and computes line starts on first use only (a clean compile never reads positions); an API
// object has no text, so its locator knows no positions and diagnostics carry the pointer alone.
import type { Position } from '../diagnostics/diagnostic.js';
import { LineIndex } from '../parse/line-index.js';
import type { YamlFile } from '../parse/parse-yaml.js';

/** Where a pointer is: the start and end of its node (or of its nearest existing ancestor). */
export interface PositionRange {
  start: Position;
  end: Position;
}

/** Positions inside one input. */
export interface DocumentLocator {
  readonly file: string;
  /** The range of `pointer` in document `document`, or undefined when the input has no positions. */
  locate(document: number, pointer: string): PositionRange | undefined;
  /** The position of a document's root node, or undefined when the input has no positions. */
  documentStart(document: number): Position | undefined;
  /** The position of a character offset (texts only). */
  positionAt(offset: number): Position | undefined;
}

/** The locator of a parsed text. */
export function createTextLocator(file: string, text: string, yaml: YamlFile): DocumentLocator {
  let lines: LineIndex | undefined;
  const positionAt = (offset: number): Position => {
    lines ??= new LineIndex(text);
    return lines.positionAt(offset);
  };
  return {
    file,
    locate(document, pointer) {
      const range = yaml.locate(document, pointer);
      return range === undefined
        ? undefined
        : { start: positionAt(range.offset), end: positionAt(range.endOffset) };
    },
    documentStart: (document) => positionAt(yaml.documentOffset(document)),
    positionAt,
  };
}

/** The locator of an API object: no text, no positions. */
export function createObjectLocator(file: string): DocumentLocator {
  return {
    file,
    locate: () => undefined,
    documentStart: () => undefined,
    positionAt: () => undefined,
  };
}
