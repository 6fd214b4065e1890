// Diagnostic codes as typed constants, derived from the code lists: `Code.relativePath === 'RT3001'`, keyed
// by each code's kebab-case name in camelCase. A misspelt key does not compile; code is never written as a
// bare 'RTnnnn' string outside the lists.
import { ADMISSION_CODES } from './admission.js';
import { BACKEND_CODES } from './backend.js';
import { PARSE_CODES } from './parse.js';
import { SCHEMA_CODES } from './schema.js';
import { SEMANTIC_CODES } from './semantic.js';

/** `relative-path` → `relativePath`, at the type level. */
type CamelCase<S extends string> = S extends `${infer Head}-${infer Tail}`
  ? `${Head}${Capitalize<CamelCase<Tail>>}`
  : S;

type CodeEntry =
  | (typeof PARSE_CODES)[number]
  | (typeof SCHEMA_CODES)[number]
  | (typeof SEMANTIC_CODES)[number]
  | (typeof BACKEND_CODES)[number]
  | (typeof ADMISSION_CODES)[number];

/** Every code by camel-cased name. */
export type CodeTable = { readonly [E in CodeEntry as CamelCase<E['name']>]: E['code'] };

/** The camel-cased name of a code (`relative-path` → `relativePath`). */
export function toCodeKey(name: string): string {
  return name.replace(/-([a-z0-9])/g, (_m, c: string) => c.toUpperCase());
}

function buildCodeTable(): CodeTable {
  const entries = [...PARSE_CODES, ...SCHEMA_CODES, ...SEMANTIC_CODES, ...BACKEND_CODES, ...ADMISSION_CODES];
  return Object.freeze(Object.fromEntries(entries.map((c) => [toCodeKey(c.name), c.code]))) as CodeTable;
}

/** The diagnostic codes by name. */
export const Code: CodeTable = buildCodeTable();
/** A diagnostic code string of the lists. */
export type Code = CodeTable[keyof CodeTable];
