// Machine-readable diagnostics: a JSON array, one object per diagnostic.
import { pointerToPath } from '../diagnostics/diagnostic.js';
import type { Diagnostic } from '../diagnostics/diagnostic.js';

/** The JSON shape of one diagnostic. */
export interface JsonDiagnostic {
  code: string;
  severity: string;
  message: string;
  file: string;
  line: number | null;
  column: number | null;
  endLine: number | null;
  endColumn: number | null;
  path: string;
  pointer: string;
  document: number;
  related: Array<{ message: string; file: string; line: number | null; column: number | null; path: string }>;
}

/** Converts a diagnostic to its JSON shape. */
export function toJsonDiagnostic(d: Diagnostic): JsonDiagnostic {
  return {
    code: d.code,
    severity: d.severity,
    message: d.message,
    file: d.file,
    line: d.start?.line ?? null,
    column: d.start?.column ?? null,
    endLine: d.end?.line ?? null,
    endColumn: d.end?.column ?? null,
    path: pointerToPath(d.pointer),
    pointer: d.pointer,
    document: d.document,
    related: (d.related ?? []).map((r) => ({
      message: r.message,
      file: r.file,
      line: r.start?.line ?? null,
      column: r.start?.column ?? null,
      path: pointerToPath(r.pointer),
    })),
  };
}

/** Formats diagnostics as a JSON array. */
export function formatJson(diagnostics: readonly Diagnostic[]): string {
  return `${JSON.stringify(diagnostics.map(toJsonDiagnostic), null, 2)}\n`;
}
