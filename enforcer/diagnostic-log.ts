// Logs the findings of the policies a source read, once per distinct set: a rescan that finds the same
// problems does not repeat them in the log (issue 12 item 8). A changed set is logged whole.
import type { Logger } from 'pino';
import type { Diagnostic } from '../compiler/diagnostics/diagnostic.js';

/** The identity of a diagnostic set: code, place and message of each finding, in order. */
export function diagnosticSetKey(diagnostics: readonly Diagnostic[]): string {
  return JSON.stringify(
    diagnostics.map((d) => [d.code, d.file, d.pointer, d.start?.line, d.start?.column, d.message]),
  );
}

/** A logging function that writes a diagnostic set only when it differs from the last one written. */
export function createDiagnosticLog(logger: Logger): (diagnostics: readonly Diagnostic[]) => boolean {
  let last: string | undefined;
  return (diagnostics) => {
    const key = diagnosticSetKey(diagnostics);
    if (key === last) return false;
    last = key;
    for (const d of diagnostics) {
      logger.warn({ code: d.code, file: d.file, line: d.start?.line, column: d.start?.column }, d.message);
    }
    return true;
  };
}
