// Stage 1 for API objects: one decoded object → its one document (no text, so no parse and no positions).
import { createObjectLocator } from './document-locator.js';
import type { ParsedInput } from './parse-text.js';
import type { SourceObject } from './source-text.js';

/** The input of one API object. `null` and `undefined` are an empty input, as an empty YAML document. */
export function readObject(source: SourceObject): ParsedInput {
  const locator = createObjectLocator(source.file);
  const empty = source.object === null || source.object === undefined;
  return { locator, documents: empty ? [] : [{ locator, index: 0, value: source.object }], diagnostics: [] };
}
