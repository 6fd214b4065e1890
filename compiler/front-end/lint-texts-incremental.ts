// Incremental lint of texts (the enforcer's directory source, which lints the whole directory on every
// change): the per-file stages (parse, document checks, lowering) are kept per file and run again only for
// a file whose text changed; the cross checks, which look across files, run over everything every time.
// The result equals lintTexts over the same sources (test/compiler/lint-texts-incremental.test.ts): the
// document checks of one document depend on that document only.
import type { LocatedPolicy } from '../checks/cross/cross-rule.js';
import type { Diagnostic } from '../diagnostics/diagnostic.js';
import { relateImdsPodGuards } from '../node-settings/imds-pod-guard.js';
import { checkDocuments, createCheckedDocuments } from './check-documents.js';
import type { CheckedDocuments } from './checked-documents.js';
import { crossCheck } from './cross-check.js';
import type { DocumentLocator } from './document-locator.js';
import { assembleLintResult, type LintResult } from './lint-result.js';
import { lowerDocuments } from './lower-documents.js';
import { parseText, type ParsedInput } from './parse-text.js';
import type { SourceText } from './source-text.js';

/** What the per-file stages made of one text. */
interface FileStages {
  text: string;
  parsed: ParsedInput;
  checked: CheckedDocuments;
  located: LocatedPolicy[];
}

/** A linter that remembers the per-file stages of the texts it saw last. */
export interface IncrementalLinter {
  /** Lints `sources` (the whole input, every time), reusing the stages of unchanged files. */
  lint(sources: readonly SourceText[]): LintResult;
  /** Files whose stages ran again in the last lint (for tests and logs). */
  readonly lastRelinted: readonly string[];
}

function runFileStages(source: SourceText): FileStages {
  const parsed = parseText(source);
  const own = new Map<string, DocumentLocator>([[parsed.locator.file, parsed.locator]]);
  const checked = checkDocuments(parsed.documents, own, createCheckedDocuments());
  return { text: source.text, parsed, checked, located: lowerDocuments(checked.policies) };
}

/** Creates an incremental linter (no options: the enforcer's lint has none). */
export function createIncrementalLinter(): IncrementalLinter {
  let files = new Map<string, FileStages>();
  let relinted: string[] = [];
  return {
    get lastRelinted() {
      return relinted;
    },
    lint(sources) {
      const next = new Map<string, FileStages>();
      relinted = [];
      const locators = new Map<string, DocumentLocator>();
      const parseDiagnostics: Diagnostic[] = [];
      const checked = createCheckedDocuments();
      const located: LocatedPolicy[] = [];
      for (const source of sources) {
        let stages = next.get(source.file) ?? files.get(source.file);
        if (stages === undefined || stages.text !== source.text) {
          stages = runFileStages(source);
          relinted.push(source.file);
        }
        next.set(source.file, stages);
        locators.set(source.file, stages.parsed.locator);
        // One at a time: a spread of more than about 100 000 arguments overflows the stack.
        for (const d of stages.parsed.diagnostics) parseDiagnostics.push(d);
        for (const p of stages.checked.policies) checked.policies.push(p);
        for (const [ns, postures] of stages.checked.namespaces) checked.namespaces.set(ns, postures);
        for (const d of stages.checked.diagnostics) checked.diagnostics.push(d);
        checked.documentCount += stages.checked.documentCount;
        for (const l of stages.located) located.push(l);
      }
      files = next;
      const cross = [
        ...crossCheck(located, checked.namespaces, locators),
        ...relateImdsPodGuards(checked.diagnostics, located),
      ];
      return assembleLintResult(sources.length, parseDiagnostics, checked, located, cross);
    },
  };
}
