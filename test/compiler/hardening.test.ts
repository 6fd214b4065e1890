// The hardening bundles: every policy lints with no finding (together, so bundles never conflict), selects
// every pod of its namespace or every Linux node, and names the catalogue it implements in its tags. Bundles are
// the folders of policies/hardening/ (imds/ included when present); allow/ holds the example Allow policies of
// the quiet-on-services test, which select one service each.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { lintTexts } from '../../compiler/lint.js';
import { REPO_ROOT } from '../support/paths.js';

const ROOT = path.join(REPO_ROOT, 'policies', 'hardening');
const CATALOGUE_BUNDLES = ['cis', 'mitre', 'nist', 'stig'] as const;
const BUNDLES = readdirSync(ROOT, { withFileTypes: true })
  .filter((d) => d.isDirectory() && d.name !== 'allow')
  .map((d) => d.name)
  .sort();

describe('hardening bundles', () => {
  const sources = BUNDLES.flatMap((b) =>
    readdirSync(path.join(ROOT, b))
      .filter((f) => f.endsWith('.yaml'))
      .map((f) => ({ bundle: b, file: `${b}/${f}`, text: readFileSync(path.join(ROOT, b, f), 'utf8') })),
  );

  it('has policies in every bundle', () => {
    for (const b of CATALOGUE_BUNDLES)
      assert.ok(
        sources.some((s) => s.bundle === b),
        b,
      );
  });

  it('lints together with no finding but what some targets do not enforce (RT3018)', () => {
    const { diagnostics, ruleSet } = lintTexts(sources);
    // Every rule of the bundles is enforced somewhere (no RT3016); raw sockets and capabilities are not on fanotify.
    assert.deepEqual(
      diagnostics
        .filter((d) => d.code !== 'RT3018')
        .map((d) => `${d.file}:${d.start?.line} ${d.code} ${d.message}`),
      [],
    );
    assert.equal(ruleSet.policies.length, sources.length);
  });

  for (const s of sources.filter((x) => (CATALOGUE_BUNDLES as readonly string[]).includes(x.bundle))) {
    it(`${s.file} selects broadly and is tagged ${s.bundle.toUpperCase()}`, () => {
      const { ruleSet } = lintTexts([s]);
      const p = ruleSet.policies[0];
      assert.ok(p !== undefined);
      if (p.target.kind === 'pods') assert.deepEqual(p.target.matchLabels, {});
      else assert.deepEqual(p.target.nodeLabels, { 'kubernetes.io/os': 'linux' });
      assert.ok(p.rules.length > 0);
      for (const r of p.rules)
        assert.ok(r.tags.includes(s.bundle.toUpperCase()), `${r.location.pointer} tagged`);
    });
  }
});
