// Golden-file support for the backend tests: compiles the example policies, the project's conformance
// fixtures and (when present) the external upstream corpus with the real front end (lintTexts) and compares
// each backend's artifacts with test/golden/<backend>/<corpus>/. UPDATE_GOLDEN=1 rewrites the golden files
// instead. Tests on an absent corpus are registered as pending with the reason (see test/support/corpus.ts).
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Backend, BackendOutput } from '../../../compiler/backends/backend.js';
import { lintTexts, type LintResult } from '../../../compiler/lint.js';
import { CORPUS_DIR, hasCorpus, skippedTitle } from '../../support/corpus.js';
import { CONFORMANCE_FIXTURES } from '../../support/paths.js';

export const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');

/** A named set of policy files. */
export interface Corpus {
  name: string;
  lint: LintResult;
}

/** A corpus of the golden tests, or the name of an optional one that is absent. */
export type CorpusEntry = Corpus | { name: string; lint?: undefined };

function readYamlTree(root: string, label: string): { file: string; text: string }[] {
  const out: { file: string; text: string }[] = [];
  const walk = (dir: string): void => {
    for (const entry of readdirSync(dir, { withFileTypes: true }).sort((a, b) =>
      a.name < b.name ? -1 : 1,
    )) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(full);
      else if (/\.ya?ml$/.test(entry.name))
        out.push({ file: `${label}/${path.relative(root, full)}`, text: readFileSync(full, 'utf8') });
    }
  };
  walk(root);
  return out;
}

/**
 * The corpora of the golden tests: policies/examples, test/fixtures/conformance, and the external upstream
 * corpus (an entry without `lint` when it is absent).
 */
export function loadCorpora(): CorpusEntry[] {
  const corpora: CorpusEntry[] = [
    {
      name: 'examples',
      lint: lintTexts(readYamlTree(path.join(repoRoot, 'policies/examples'), 'policies/examples')),
    },
    { name: 'conformance', lint: lintTexts(readYamlTree(CONFORMANCE_FIXTURES, 'conformance')) },
  ];
  corpora.push(
    hasCorpus()
      ? { name: 'upstream', lint: lintTexts(readYamlTree(CORPUS_DIR, 'upstream-examples')) }
      : { name: 'upstream' },
  );
  return corpora;
}

/** Registers `it(title, fn)` for a present corpus, or a pending test naming why it is absent. */
export function itOnCorpus(entry: CorpusEntry, title: string, fn: (corpus: Corpus) => void): void {
  const { lint } = entry;
  if (lint !== undefined) it(title, () => fn({ name: entry.name, lint }));
  else it.skip(skippedTitle(title));
}

/** Runs a backend over a corpus. */
export function emitCorpus(backend: Backend, corpus: Corpus): BackendOutput {
  return backend.emit({ ruleSet: corpus.lint.ruleSet, documents: corpus.lint.documents });
}

function toText(content: string | Uint8Array): string {
  return typeof content === 'string' ? content : Buffer.from(content).toString('base64');
}

/** A text rendering of a backend's diagnostics, one per line, for the golden directory. */
export function renderDiagnostics(output: BackendOutput): string {
  return output.diagnostics
    .map(
      (d) => `${d.code} ${d.severity} ${d.file}:${d.start?.line ?? 0}:${d.start?.column ?? 0} ${d.message}`,
    )
    .sort()
    .join('\n')
    .concat('\n');
}

/**
 * Compares the files with test/golden/<backend>/<corpus>/, or rewrites them under UPDATE_GOLDEN=1.
 * `files` maps relative paths to text content.
 */
export function checkGolden(
  backend: string,
  corpus: string,
  files: ReadonlyMap<string, string | Uint8Array>,
): void {
  const dir = path.join(repoRoot, 'test/golden', backend, corpus);
  if (process.env['UPDATE_GOLDEN'] === '1') {
    rmSync(dir, { recursive: true, force: true });
    for (const [rel, content] of files) {
      const full = path.join(dir, rel);
      mkdirSync(path.dirname(full), { recursive: true });
      writeFileSync(full, content);
    }
    return;
  }
  const expected = existsSync(dir) ? readYamlFreeTree(dir) : new Map<string, Buffer>();
  assert.deepEqual(
    [...files.keys()].sort(),
    [...expected.keys()].sort(),
    `golden file list of ${backend}/${corpus} (UPDATE_GOLDEN=1 to regenerate)`,
  );
  for (const [rel, content] of files) {
    const want = expected.get(rel);
    assert.ok(want, rel);
    if (typeof content === 'string')
      assert.equal(
        content,
        want.toString('utf8'),
        `${backend}/${corpus}/${rel} differs (UPDATE_GOLDEN=1 to regenerate)`,
      );
    else
      assert.equal(
        toText(content),
        want.toString('base64'),
        `${backend}/${corpus}/${rel} differs (UPDATE_GOLDEN=1 to regenerate)`,
      );
  }
}

function readYamlFreeTree(root: string): Map<string, Buffer> {
  const out = new Map<string, Buffer>();
  const walk = (dir: string): void => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(full);
      else out.set(path.relative(root, full), readFileSync(full));
    }
  };
  walk(root);
  return out;
}
