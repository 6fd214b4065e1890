// Conformance on the external real-world corpus (read where it lies, never copied; skipped with the reason
// when absent, see test/support/corpus.ts): every policy is accepted except
// four, each rejected with its code at the line of `spec:` (where the missing selector belongs).
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { lintTexts } from '../../compiler/lint.js';
import { CORPUS_DIR, describeOnCorpus } from '../support/corpus.js';

const REJECTED: Readonly<Record<string, string>> = {
  'hsp-audit-stig-ubuntu-20-010267-sensitive-syscall.yaml': 'RT2009',
  'ksp-deny-remote-file-copy.yaml': 'RT2008',
  'ksp-deny-write-in-shm-folder.yaml': 'RT2008',
  'ksp-deny-write-under-etc-directory.yaml': 'RT2008',
};

function specLine(text: string): number {
  return text.split('\n').findIndex((l) => /^spec:/.test(l)) + 1;
}

describeOnCorpus('conformance on the upstream corpus', () => {
  const files = readdirSync(CORPUS_DIR)
    .filter((f) => f.endsWith('.yaml'))
    .sort();

  it('finds the 61 corpus files', () => {
    assert.equal(files.length, 61);
  });

  for (const file of files) {
    const expected = REJECTED[file];
    it(expected === undefined ? `accepts ${file}` : `rejects ${file} with ${expected} at spec:`, () => {
      const text = readFileSync(path.join(CORPUS_DIR, file), 'utf8');
      const { diagnostics, documents, ruleSet } = lintTexts([{ file, text }]);
      const errors = diagnostics.filter((d) => d.severity === 'error');
      if (expected === undefined) {
        assert.deepEqual(
          errors.map((d) => `${d.code} ${d.message}`),
          [],
        );
        assert.equal(documents.length, 1);
        assert.equal(ruleSet.policies.length, 1);
      } else {
        assert.deepEqual(
          errors.map((d) => d.code),
          [expected],
        );
        assert.equal(errors[0]?.start?.line, specLine(text));
        assert.equal(documents.length, 0);
      }
    });
  }

  it('lints the whole corpus together with only the four errors', () => {
    const sources = files.map((file) => ({ file, text: readFileSync(path.join(CORPUS_DIR, file), 'utf8') }));
    const { diagnostics, ruleSet } = lintTexts(sources);
    const errors = diagnostics.filter((d) => d.severity === 'error');
    assert.deepEqual(errors.map((d) => d.file).sort(), Object.keys(REJECTED).sort());
    assert.equal(ruleSet.policies.length, 57);
  });
});
