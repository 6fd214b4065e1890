// The crd target over the bundled examples and the corpus: golden files, determinism, no output on errors.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import path from 'node:path';
import { compile, resolveTargets } from '../../compiler/compile.js';
import type { SourceText } from '../../compiler/lint.js';
import { parse as parseYaml } from 'yaml';
import { assertGolden } from '../support/golden.js';
import { CORPUS_DIR, hasCorpus, itOnCorpus } from '../support/corpus.js';
import { REPO_ROOT } from '../support/paths.js';

const REJECTED = new Set([
  'hsp-audit-stig-ubuntu-20-010267-sensitive-syscall.yaml',
  'ksp-deny-remote-file-copy.yaml',
  'ksp-deny-write-in-shm-folder.yaml',
  'ksp-deny-write-under-etc-directory.yaml',
]);

function readDir(dir: string, label: string, skip: ReadonlySet<string> = new Set()): SourceText[] {
  return readdirSync(dir)
    .filter((f) => f.endsWith('.yaml') && !skip.has(f))
    .sort()
    .map((f) => ({ file: `${label}/${f}`, text: readFileSync(path.join(dir, f), 'utf8') }));
}

const examples = readDir(path.join(REPO_ROOT, 'policies', 'examples'), 'policies/examples');
// The external corpus when present (its golden test is reported as skipped otherwise).
const corpus = hasCorpus() ? readDir(CORPUS_DIR, 'corpus', REJECTED) : [];

describe('compile --target crd', () => {
  it('matches the golden build of policies/examples', () => {
    const r = compile(examples, { targets: ['crd'] });
    // Only the network and capability rules fanotify or AppArmor does not fully enforce are warned about
    // (line 17: raw, which names packet sockets too, which cgroup sock_create never sees; line 18: icmp, which
    // AppArmor reads as IPv4 raw ICMP sockets only).
    assert.deepEqual(
      r.diagnostics.filter((d) => d.severity !== 'info').map((d) => `${d.code} ${d.file}:${d.start?.line}`),
      [17, 18, 22, 23].map((l) => `RT3018 policies/examples/restrict-network-tools.yaml:${l}`),
    );
    assertGolden(path.join(REPO_ROOT, 'test', 'golden', 'compile', 'examples'), r.artifacts);
  });

  itOnCorpus('matches the golden build of the accepted corpus', () => {
    const r = compile(corpus, { targets: ['crd'] });
    assert.equal(r.diagnostics.filter((d) => d.severity === 'error').length, 0);
    assertGolden(path.join(REPO_ROOT, 'test', 'golden', 'compile', 'corpus'), r.artifacts);
  });

  it('is deterministic: twice, and with the input order reversed, gives byte-identical artifacts', () => {
    const digest = (sources: SourceText[]) =>
      compile(sources, { targets: ['crd'] }).artifacts.map(
        (a) => `${a.path} ${createHash('sha256').update(a.content).digest('hex')}`,
      );
    const first = digest([...examples, ...corpus]);
    assert.deepEqual(digest([...examples, ...corpus]), first);
    assert.deepEqual(digest([...examples, ...corpus].reverse()), first);
  });

  it('writes index.json with the sha256 of every other artifact', () => {
    const r = compile(examples, { targets: ['crd'] });
    const index = r.artifacts.find((a) => a.path === 'index.json');
    assert.ok(index !== undefined);
    const parsed = JSON.parse(String(index.content)) as {
      artifacts: Array<{ path: string; sha256: string }>;
    };
    const others = r.artifacts.filter((a) => a.path !== 'index.json');
    assert.equal(parsed.artifacts.length, others.length);
    for (const a of others) {
      const entry = parsed.artifacts.find((e) => e.path === a.path);
      assert.equal(entry?.sha256, createHash('sha256').update(a.content).digest('hex'));
    }
  });

  it('emits structural CRDs: no additionalProperties beside properties, short names rp and rhp', () => {
    const r = compile(examples, { targets: ['crd'] });
    const crds = r.artifacts
      .filter((a) => a.path.startsWith('crds/'))
      .map((a) => parseYaml(String(a.content)) as Record<string, unknown>);
    assert.equal(crds.length, 2);
    const shortNames = crds
      .map((c) => (c['spec'] as { names: { shortNames: string[] } }).names.shortNames[0])
      .sort();
    assert.deepEqual(shortNames, ['rhp', 'rp']);
    const walk = (n: unknown, at: string): void => {
      if (n === null || typeof n !== 'object') return;
      const o = n as Record<string, unknown>;
      assert.ok(
        !('properties' in o && o['additionalProperties'] === false),
        `additionalProperties: false beside properties at ${at}`,
      );
      for (const [k, v] of Object.entries(o)) walk(v, `${at}/${k}`);
    };
    for (const c of crds) walk(c, '');
  });

  it('emits nothing when any document has an error', () => {
    const bad = {
      file: 'bad.yaml',
      text: 'apiVersion: security.runtime.com/v1\nkind: RuntimePolicy\nmetadata: {name: x}\nspec: {action: Block}\n',
    };
    const r = compile([...examples, bad], { targets: ['crd'] });
    assert.equal(r.artifacts.length, 0);
    assert.ok(r.diagnostics.some((d) => d.code === 'RT2008'));
  });

  it('rejects an unknown target as a usage error', () => {
    assert.throws(() => resolveTargets(['crd', 'nonsense']), /unknown target "nonsense"/);
  });
});
