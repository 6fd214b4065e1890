// Entry for texts (`rtctl lint`, `rtctl compile`, `rtctl explain`, the enforcer's directory source):
// texts → documents → checked documents → lowered rule set → cross checks. Each input is parsed, checked and
// lowered before the next (progress after each); the cross checks run once, across all of them.
import type { LocatedPolicy } from '../checks/cross/cross-rule.js';
import type { Diagnostic } from '../diagnostics/diagnostic.js';
import { checkDocuments, createCheckedDocuments } from './check-documents.js';
import { crossCheck } from './cross-check.js';
import { relateImdsPodGuards } from '../node-settings/imds-pod-guard.js';
import type { DocumentLocator } from './document-locator.js';
import { assembleLintResult, type LintOptions, type LintResult } from './lint-result.js';
import { lowerDocuments } from './lower-documents.js';
import { parseText, type ParsedInput } from './parse-text.js';
import type { SourceText } from './source-text.js';

/** Runs the stages over parsed inputs (shared by the texts and the API objects entries). */
export function lintInputs(
  inputs: Iterable<ParsedInput>,
  total: number,
  options: LintOptions = {},
): LintResult {
  const locators = new Map<string, DocumentLocator>();
  const parseDiagnostics: Diagnostic[] = [];
  const checked = createCheckedDocuments();
  const located: LocatedPolicy[] = [];
  let done = 0;
  for (const input of inputs) {
    locators.set(input.locator.file, input.locator);
    // One at a time: a spread of more than about 100 000 arguments overflows the stack.
    for (const d of input.diagnostics) parseDiagnostics.push(d);
    const before = checked.policies.length;
    checkDocuments(
      input.documents,
      locators,
      checked,
      options.requireEnforced === undefined ? {} : { requireEnforced: options.requireEnforced },
    );
    for (const l of lowerDocuments(checked.policies.slice(before))) located.push(l);
    options.onFile?.(++done, total);
  }
  const cross = [
    ...crossCheck(located, checked.namespaces, locators),
    ...relateImdsPodGuards(checked.diagnostics, located),
  ];
  return assembleLintResult(total, parseDiagnostics, checked, located, cross);
}

/** Lints texts: parse, check every document, lower the policies, check them across documents. */
export function lintTexts(sources: readonly SourceText[], options: LintOptions = {}): LintResult {
  return lintInputs(
    (function* () {
      for (const source of sources) yield parseText(source);
    })(),
    sources.length,
    options,
  );
}
