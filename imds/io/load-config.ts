// Reads the service configuration from a YAML or JSON file (YAML parses both) and validates it. Errors come
// back as data with the file, line and column of the offending node.
import { readFile } from 'node:fs/promises';
import { LineCounter, parseDocument, isCollection, type Document } from 'yaml';
import { parseConfig, type ConfigError, type ImdsConfig } from '../config.js';

/** A configuration error with its location in the file. */
export interface LocatedConfigError extends ConfigError {
  file: string;
  line?: number;
  column?: number;
}

function decodePointer(pointer: string): string[] {
  if (pointer === '') return [];
  return pointer
    .slice(1)
    .split('/')
    .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
}

/** Finds the line and column of the deepest existing node on the pointer's path. */
function locate(
  doc: Document,
  lines: LineCounter,
  pointer: string,
): { line: number; column: number } | undefined {
  const segments = decodePointer(pointer);
  for (let n = segments.length; n >= 0; n--) {
    const path = segments.slice(0, n).map((s) => (/^[0-9]+$/.test(s) ? Number(s) : s));
    const node: unknown = n === 0 ? doc.contents : doc.getIn(path, true);
    const range = (node as { range?: unknown } | null | undefined)?.range;
    if (Array.isArray(range) && typeof range[0] === 'number') {
      const pos = lines.linePos(range[0]);
      return { line: pos.line, column: pos.col };
    }
    if (n > 0 && !isCollection(doc.contents)) break;
  }
  return undefined;
}

/** Parses configuration text. `file` only names the source in errors. */
export function parseConfigText(
  text: string,
  file: string,
): { ok: true; config: ImdsConfig } | { ok: false; errors: LocatedConfigError[] } {
  const lines = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lines, prettyErrors: false, uniqueKeys: true });
  if (doc.errors.length > 0) {
    return {
      ok: false,
      errors: doc.errors.map((e) => {
        const pos = lines.linePos(e.pos[0]);
        return {
          code: 'imds-config-syntax',
          message: e.message.split('\n')[0] ?? e.message,
          pointer: '',
          file,
          line: pos.line,
          column: pos.col,
        };
      }),
    };
  }
  const parsed = parseConfig(doc.toJS());
  if (parsed.ok) return parsed;
  return {
    ok: false,
    errors: parsed.errors.map((e) => ({ ...e, file, ...(locate(doc, lines, e.pointer) ?? {}) })),
  };
}

/** Reads and parses a configuration file. */
export async function loadConfigFile(
  file: string,
): Promise<{ ok: true; config: ImdsConfig } | { ok: false; errors: LocatedConfigError[] }> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    return { ok: false, errors: [{ code: 'imds-config-read', message, pointer: '', file }] };
  }
  return parseConfigText(text, file);
}

/** Formats an error as `file:line:col: code: message (at pointer)`. */
export function formatConfigError(e: LocatedConfigError): string {
  const where = e.line === undefined ? e.file : `${e.file}:${e.line}:${e.column ?? 1}`;
  const at = e.pointer === '' ? '' : ` (at ${e.pointer})`;
  return `${where}: ${e.code}: ${e.message}${at}`;
}
