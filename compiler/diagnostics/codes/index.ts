// The complete list of diagnostic codes, from every area's list. docs/diagnostics.md is generated from it.
import type { CodeInfo } from '../code-info.js';
import { ADMISSION_CODES } from './admission.js';
import { BACKEND_CODES } from './backend.js';
import { PARSE_CODES } from './parse.js';
import { SCHEMA_CODES } from './schema.js';
import { SEMANTIC_CODES } from './semantic.js';

/** Every code, ordered by code. */
export const ALL_CODES: readonly CodeInfo[] = [
  ...PARSE_CODES,
  ...SCHEMA_CODES,
  ...SEMANTIC_CODES,
  ...BACKEND_CODES,
  ...ADMISSION_CODES,
].sort((a, b) => (a.code < b.code ? -1 : a.code > b.code ? 1 : 0));

/** The entry of a code, if it exists. */
export function findCode(code: string): CodeInfo | undefined {
  return ALL_CODES.find((c) => c.code === code);
}
