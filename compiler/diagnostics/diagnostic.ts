// Diagnostics as data: every finding of the parser, the schema, the semantic checks, the backends and the
// admission rules is one of these. Nothing here formats or prints; see diagnostics/format-*.ts for that.

/** How serious a finding is. `error` fails lint and admission; `warning` and `info` do not by default. */
export const Severity = { Error: 'error', Warning: 'warning', Info: 'info' } as const;
export type Severity = (typeof Severity)[keyof typeof Severity];

/** A position in a source text: 1-based line and column, and the 0-based character offset. */
export interface Position {
  line: number;
  column: number;
  offset: number;
}

/** A finding with a stable code, where it is, and what was expected. */
export interface Diagnostic {
  /** Stable code `RTnnnn`: RT1xxx parse, RT2xxx schema, RT3xxx semantic, RT4xxx backend, RT5xxx admission. */
  code: string;
  severity: Severity;
  /** Names the field, the value found and what was expected. */
  message: string;
  /** The file it is in (as given on the command line), or `<admission>` for webhook input. */
  file: string;
  /** Start of the offending node; absent only when the finding concerns a whole file that has no text. */
  start?: Position;
  /** End of the offending node (exclusive). */
  end?: Position;
  /** JSON pointer (RFC 6901) of the offending node inside its document, `` for the document itself. */
  pointer: string;
  /** 0-based index of the YAML document within the file. */
  document: number;
  /** Other places involved (the other side of a conflict), each with its own file and position. */
  related?: RelatedLocation[];
}

/** A second location attached to a diagnostic. */
export interface RelatedLocation {
  message: string;
  file: string;
  start?: Position;
  pointer: string;
}

/** True when any diagnostic is an error. */
export function hasErrors(diagnostics: readonly Diagnostic[]): boolean {
  return diagnostics.some((d) => d.severity === Severity.Error);
}

/** Orders diagnostics by file, then position, then code: the order every output format uses. */
export function compareDiagnostics(a: Diagnostic, b: Diagnostic): number {
  if (a.file !== b.file) return a.file < b.file ? -1 : 1;
  const ao = a.start?.offset ?? -1;
  const bo = b.start?.offset ?? -1;
  if (ao !== bo) return ao - bo;
  if (a.code !== b.code) return a.code < b.code ? -1 : 1;
  return a.message < b.message ? -1 : a.message > b.message ? 1 : 0;
}

/**
 * Paths by pointer: the findings of many documents name the same few pointers (`/spec/network/matchProtocols/0`).
 * Bounded in entries and in pointer length, so that odd input costs time, not memory.
 */
const paths = new Map<string, string>();
const MAX_PATHS = 4096;
const MAX_CACHED_POINTER = 200;

/** Converts a JSON pointer to the dotted JSON path used in admission messages (`spec.file.matchPaths[0].path`). */
export function pointerToPath(pointer: string): string {
  if (pointer === '') return '.';
  if (pointer.length > MAX_CACHED_POINTER) return convertPointer(pointer);
  let path = paths.get(pointer);
  if (path === undefined) {
    path = convertPointer(pointer);
    if (paths.size >= MAX_PATHS) paths.clear();
    paths.set(pointer, path);
  }
  return path;
}

function convertPointer(pointer: string): string {
  let out = '';
  for (const raw of pointer.slice(1).split('/')) {
    const seg = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    if (/^(0|[1-9][0-9]*)$/.test(seg)) out += `[${seg}]`;
    else if (/^[A-Za-z_][A-Za-z0-9_-]*$/.test(seg)) out += out === '' ? seg : `.${seg}`;
    else out += `[${JSON.stringify(seg)}]`;
  }
  return out;
}
