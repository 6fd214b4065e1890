// Stage 1 for texts: one text → its documents, a locator for positions, and the parse diagnostics.
import type { Diagnostic } from '../diagnostics/diagnostic.js';
import { parseYaml } from '../parse/parse-yaml.js';
import { createTextLocator, type DocumentLocator } from './document-locator.js';
import type { SourceDocument } from './source-document.js';
import type { SourceText } from './source-text.js';

/** What parsing one text produced. */
export interface ParsedInput {
  locator: DocumentLocator;
  /** The non-empty documents that parsed, in order. */
  documents: SourceDocument[];
  /** Parse findings, placed. */
  diagnostics: Diagnostic[];
}

/** Parses one text. Never throws. */
export function parseText(source: SourceText): ParsedInput {
  const yaml = parseYaml(source.text);
  const locator = createTextLocator(source.file, source.text, yaml);
  const diagnostics = yaml.findings.map((pf): Diagnostic => {
    const d: Diagnostic = {
      code: pf.finding.code,
      severity: pf.finding.severity,
      message: pf.finding.message,
      file: source.file,
      pointer: '',
      document: Math.max(pf.document, 0),
    };
    const start = locator.positionAt(pf.offset);
    if (start !== undefined) d.start = start;
    const end = pf.endOffset === undefined ? undefined : locator.positionAt(pf.endOffset);
    if (end !== undefined) d.end = end;
    return d;
  });
  const documents = yaml.documents
    .filter((doc) => doc.value !== null && doc.value !== undefined)
    .map((doc): SourceDocument => ({ locator, index: doc.index, value: doc.value }));
  return { locator, documents, diagnostics };
}
