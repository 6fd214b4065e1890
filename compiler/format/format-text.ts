// Human-readable diagnostics: `file:line:col: severity RTnnnn message`, a code frame with a caret under the
// offending node, related places, and a summary line. Code frames are drawn here, at display time only.
import { escapeControl } from './escape-control.js';
import type { Diagnostic } from '../diagnostics/diagnostic.js';

/** Options of the text format. */
export interface TextFormatOptions {
  /** File texts by file name, for code frames. */
  texts: ReadonlyMap<string, string>;
  /** Include `info` diagnostics. */
  verbose?: boolean;
  /** ANSI colours. */
  color?: boolean;
}

function paint(on: boolean, code: number, s: string): string {
  return on ? `\u001b[${code}m${s}\u001b[0m` : s;
}

function frame(text: string, line: number, column: number, endLine: number, endColumn: number): string {
  const lines = text.split('\n');
  const out: string[] = [];
  const width = String(line + 1).length;
  for (let l = Math.max(1, line - 1); l <= Math.min(lines.length, line + 1); l++) {
    const src = (lines[l - 1] ?? '').replace(/\r$/, '').replace(/\t/g, ' ');
    out.push(`${l === line ? '>' : ' '} ${String(l).padStart(width)} | ${src}`);
    if (l === line) {
      const len =
        endLine === line && endColumn > column
          ? Math.min(endColumn - column, Math.max(1, src.length - column + 1))
          : 1;
      out.push(
        `  ${' '.repeat(width)} | ${' '.repeat(Math.max(0, column - 1))}${'^'.repeat(Math.max(1, len))}`,
      );
    }
  }
  return out.join('\n');
}

/** Formats diagnostics as text. */
export function formatText(diagnostics: readonly Diagnostic[], options: TextFormatOptions): string {
  const color = options.color === true;
  const shown = diagnostics.filter((d) => options.verbose === true || d.severity !== 'info');
  const parts: string[] = [];
  for (const d of shown) {
    const file = escapeControl(d.file);
    const loc = d.start === undefined ? file : `${file}:${d.start.line}:${d.start.column}`;
    const sev =
      d.severity === 'error'
        ? paint(color, 31, 'error')
        : d.severity === 'warning'
          ? paint(color, 33, 'warning')
          : paint(color, 36, 'info');
    let block = `${paint(color, 1, loc)}: ${sev} ${d.code} ${escapeControl(d.message)}`;
    const text = options.texts.get(d.file);
    if (text !== undefined && d.start !== undefined) {
      block += `\n${frame(text, d.start.line, d.start.column, d.end?.line ?? d.start.line, d.end?.column ?? d.start.column)}`;
    }
    for (const r of d.related ?? []) {
      const related = escapeControl(r.file);
      block += `\n  ${r.start === undefined ? related : `${related}:${r.start.line}:${r.start.column}`}: ${escapeControl(r.message)}`;
    }
    parts.push(block);
  }
  const errors = diagnostics.filter((d) => d.severity === 'error').length;
  const warnings = diagnostics.filter((d) => d.severity === 'warning').length;
  parts.push(`${errors} error${errors === 1 ? '' : 's'}, ${warnings} warning${warnings === 1 ? '' : 's'}`);
  return `${parts.join('\n\n')}\n`;
}
