// Places a pointer-located finding of one document into its input: file, positions, related locations.
import type { Diagnostic, RelatedLocation } from '../diagnostics/diagnostic.js';
import type { Finding } from '../diagnostics/finding.js';
import type { DocumentLocator } from './document-locator.js';

/** The locators of every input, by file name (related findings may point into another file). */
export type Locators = ReadonlyMap<string, DocumentLocator>;

/** The diagnostic of `finding`, reported in document `document` of `locator`'s input. */
export function placeFinding(
  locator: DocumentLocator,
  document: number,
  finding: Finding,
  locators: Locators,
): Diagnostic {
  const d: Diagnostic = {
    code: finding.code,
    severity: finding.severity,
    message: finding.message,
    file: locator.file,
    pointer: finding.pointer,
    document,
  };
  const range = locator.locate(document, finding.pointer);
  if (range !== undefined) {
    d.start = range.start;
    d.end = range.end;
  }
  if (finding.related !== undefined && finding.related.length > 0) {
    d.related = finding.related.map((r): RelatedLocation => {
      const other = r.file === undefined ? locator : (locators.get(r.file) ?? locator);
      const rel: RelatedLocation = { message: r.message, file: other.file, pointer: r.pointer };
      const start = other.locate(r.document ?? document, r.pointer)?.start;
      if (start !== undefined) rel.start = start;
      return rel;
    });
  }
  return d;
}
