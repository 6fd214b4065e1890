// The hardening bundles as data and through `rtctl bundles`: the metadata convention on every policy, each bundle
// applied alone, all of them together, the profiles, the coverage formats and the areas the issue lists.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { buildCatalog, coverage, selectProfile, type Catalog } from '../../compiler/bundles/catalog.js';
import { readBundleSources } from '../../compiler/bundles/load.js';
import { CATALOGUES, CONTROL_ID_FORMS } from '../../compiler/bundles/metadata.js';
import { renderCoverage, renderHardeningDoc } from '../../compiler/bundles/render.js';
import { lintTexts } from '../../compiler/lint.js';
import type { Rule } from '../../compiler/ir/rule-set.js';
import { REPO_ROOT } from '../support/paths.js';

const run = promisify(execFile);
const ROOT = path.join(REPO_ROOT, 'policies', 'hardening');
/** Codes allowed when bundles are linted: what the fanotify plane does not enforce. */
const ENFORCEMENT_ONLY = new Set(['RT3018']);

async function rtctl(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const r = await run(
      process.execPath,
      ['--import', 'tsx', path.join(REPO_ROOT, 'bin', 'rtctl.ts'), ...args],
      {
        cwd: REPO_ROOT,
        maxBuffer: 64 << 20,
      },
    );
    return { code: 0, stdout: r.stdout, stderr: r.stderr };
  } catch (err) {
    const e = err as { code?: number; stdout?: string; stderr?: string };
    return { code: typeof e.code === 'number' ? e.code : -1, stdout: e.stdout ?? '', stderr: e.stderr ?? '' };
  }
}

function describeFindings(c: { diagnostics: { file: string; code: string; message: string }[] }): string[] {
  return c.diagnostics
    .filter((d) => !ENFORCEMENT_ONLY.has(d.code))
    .map((d) => `${d.file} ${d.code} ${d.message}`);
}

describe('hardening bundles (catalogue, profiles, coverage)', function () {
  this.timeout(60000);
  const sources = readBundleSources(ROOT);
  const hardening = sources.filter((s) => !s.file.startsWith('allow/'));
  let catalog: Catalog;
  before(() => {
    catalog = buildCatalog(hardening);
  });

  it('has at least 60 policies, pod and node, and all bundles lint together with no conflict', () => {
    assert.ok(catalog.policies.length >= 60, `${catalog.policies.length} policies`);
    assert.ok(catalog.policies.some((p) => p.kind === 'RuntimeHostPolicy'));
    assert.ok(catalog.policies.some((p) => p.kind === 'RuntimePolicy'));
    assert.deepEqual(describeFindings(catalog), []);
  });

  it('lints each bundle alone with no finding but what fanotify does not enforce', () => {
    const bundles = [...new Set(hardening.map((s) => s.file.split('/')[0]))];
    assert.ok(bundles.length >= 4);
    for (const b of bundles) {
      const alone = lintTexts(hardening.filter((s) => s.file.startsWith(`${b}/`)));
      assert.deepEqual(describeFindings(alone), [], b);
    }
  });

  it('every catalogue policy carries controls, rationale, attack, what it may break and a profile', () => {
    for (const p of catalog.policies.filter((x) => x.bundle !== 'imds')) {
      const ids = CATALOGUES.flatMap((c) => p.meta.controls[c]);
      assert.ok(ids.length > 0, `${p.name}: controls`);
      assert.ok(
        p.meta.rationale !== undefined && p.meta.attack !== undefined,
        `${p.name}: rationale, attack`,
      );
      assert.ok(p.meta.mayBreak !== undefined, `${p.name}: may-break`);
      assert.ok(p.meta.profile !== undefined, `${p.name}: profile`);
      for (const c of CATALOGUES)
        for (const id of p.meta.controls[c]) assert.match(id, CONTROL_ID_FORMS[c].pattern);
      // The bundle's own catalogue is named by its policies.
      if ((CATALOGUES as readonly string[]).includes(p.bundle))
        assert.ok(
          p.meta.controls[p.bundle as (typeof CATALOGUES)[number]].length > 0,
          `${p.name}: ${p.bundle} ids`,
        );
    }
  });

  it('each policy has at least one rule the fanotify plane enforces (exec or open)', () => {
    // imds/ (the IMDS guard, another issue's) is a network rule by design: the fanotify plane cannot enforce it.
    const lint = lintTexts(hardening.filter((src) => !src.file.startsWith('imds/')));
    for (const p of lint.ruleSet.policies)
      assert.ok(
        p.rules.some((r) => r.operation === 'Process' || r.operation === 'File'),
        `${p.name} has a Process or File rule`,
      );
  });

  it('baseline is a subset of restricted, and both lint clean when emitted for a namespace', async () => {
    const baseline = selectProfile(catalog, 'baseline').map((p) => p.name);
    const restricted = selectProfile(catalog, 'restricted').map((p) => p.name);
    assert.ok(baseline.length > 0 && restricted.length > baseline.length);
    for (const n of baseline) assert.ok(restricted.includes(n), n);
    for (const profile of ['baseline', 'restricted']) {
      const r = await rtctl('bundles', 'show', '--profile', profile, '-o', 'yaml', '--namespace', 'shop');
      assert.equal(r.code, 0, r.stderr);
      const lint = lintTexts([{ file: `${profile}.yaml`, text: r.stdout }]);
      assert.deepEqual(describeFindings(lint), []);
      assert.equal(
        lint.ruleSet.policies.length,
        profile === 'baseline' ? baseline.length : restricted.length,
      );
      for (const p of lint.ruleSet.policies)
        if (p.kind === 'RuntimePolicy') assert.equal(p.namespace, 'shop');
      // Same input, same bytes.
      const again = await rtctl('bundles', 'show', '--profile', profile, '-o', 'yaml', '--namespace', 'shop');
      assert.equal(again.stdout, r.stdout);
    }
  });

  it('rtctl bundles list and show print the controls, rationale, attack and what a policy may break', async () => {
    // The CLI lists every folder, allow/ (the example Allow policies) included.
    const all = buildCatalog(sources);
    const list = await rtctl('bundles', 'list');
    assert.equal(list.code, 0, list.stderr);
    for (const p of all.policies) assert.ok(list.stdout.includes(p.name), p.name);
    assert.match(list.stdout, new RegExp(`${all.policies.length} policies in \\d+ bundles`));
    const json = JSON.parse((await rtctl('bundles', 'list', '-o', 'json')).stdout) as {
      bundles: { name: string; policies: { name: string }[] }[];
    };
    assert.equal(json.bundles.flatMap((b) => b.policies).length, all.policies.length);
    const show = await rtctl('bundles', 'show', 'mitre-block-crypto-miners');
    assert.equal(show.code, 0);
    assert.match(show.stdout, /MITRE: +T1496 +Resource Hijacking/);
    assert.match(show.stdout, /attack: +Dropping and running xmrig/);
    assert.match(show.stdout, /actions: +Block on Network, Process/);
    assert.match(show.stdout, /may break: +Clients of services that listen on one of the pool ports/);
    const missing = await rtctl('bundles', 'show', 'no-such-policy');
    assert.equal(missing.code, 1);
    assert.match(missing.stderr, /no policy named "no-such-policy"/);
    const both = await rtctl('bundles', 'show', 'x', '--profile', 'baseline');
    assert.equal(both.code, 2);
    const badDir = await rtctl('bundles', 'list', '--dir', '/nonexistent-rtctl');
    assert.equal(badDir.code, 2);
    assert.match(badDir.stderr, /does not exist/);
  });

  it('rtctl bundles list reports lint errors of a bundle folder with exit 1', async () => {
    const bad = path.join(REPO_ROOT, 'test', 'fixtures', 'compiler', 'invalid');
    const r = await rtctl('bundles', 'list', '--dir', bad);
    assert.equal(r.code, 1);
    assert.match(r.stderr, /RT3030/);
  });

  it('coverage in text, JSON and Markdown names every control of every policy', async () => {
    const covered = coverage(catalog.policies);
    const ids = new Set(
      catalog.policies.flatMap((p) => CATALOGUES.flatMap((c) => p.meta.controls[c].map((i) => `${c}:${i}`))),
    );
    assert.equal(covered.length, ids.size);
    const json = JSON.parse((await rtctl('bundles', 'coverage', '-o', 'json')).stdout) as {
      catalogues: {
        catalogue: string;
        controls: { id: string; title: string | null; edition: string | null; policies: string[] }[];
      }[];
    };
    assert.equal(json.catalogues.flatMap((c) => c.controls).length, ids.size);
    const t1496 = json.catalogues
      .find((c) => c.catalogue === 'mitre')
      ?.controls.find((c) => c.id === 'T1496');
    assert.deepEqual(t1496?.policies, ['mitre-block-crypto-miners']);
    // The title and edition from the control catalogue stand beside the id.
    assert.equal(t1496?.title, 'Resource Hijacking');
    assert.equal(t1496?.edition, 'mitre-attack');
    const md = (await rtctl('bundles', 'coverage', '-o', 'markdown')).stdout;
    assert.match(
      md,
      /\| T1496 \| Resource Hijacking \| \[mitre-block-crypto-miners\]\(#mitre-block-crypto-miners\) \|/,
    );
    const text = (await rtctl('bundles', 'coverage')).stdout;
    assert.match(text, /MITRE +T1496 +mitre-block-crypto-miners +Resource Hijacking\n/);
    assert.match(text, /controls covered: CIS \d+, MITRE \d+, NIST \d+, STIG \d+/);
    assert.equal(renderCoverage(catalog.policies, 'markdown'), md);
    // NIST ids sort by number: CM-5 before CM-11.
    const nist = json.catalogues.find((c) => c.catalogue === 'nist')?.controls.map((c) => c.id) ?? [];
    assert.ok(nist.indexOf('CM-5') < nist.indexOf('CM-11'));
  });

  it('docs/hardening.md lists every policy with its attack and what it may break', () => {
    const doc = renderHardeningDoc(catalog);
    for (const p of catalog.policies) {
      assert.ok(doc.includes(`#### ${p.name}`), p.name);
      if (p.meta.attack !== undefined) assert.ok(doc.includes(`- Attack: ${p.meta.attack}`), p.name);
    }
  });

  // The areas issue 15 lists, each found in some policy's rules (so a rename cannot drop one silently).
  const AREAS: ReadonlyArray<[string, (r: Rule, host: boolean) => boolean]> = [
    ['package managers', (r) => r.matcher.kind === 'execname' && r.matcher.name === 'apt-get'],
    ['compilers', (r) => r.matcher.kind === 'execname' && r.matcher.name === 'gcc'],
    [
      'shells spawned by servers',
      (r) => r.matcher.kind === 'execname' && r.matcher.name === 'dash' && r.fromSource.length > 0,
    ],
    ['download tools', (r) => r.matcher.kind === 'execname' && r.matcher.name === 'curl'],
    ['remote copy tools', (r) => r.matcher.kind === 'execname' && r.matcher.name === 'scp'],
    ['network scanners', (r) => r.matcher.kind === 'execname' && r.matcher.name === 'nmap'],
    ['raw sockets', (r) => r.matcher.kind === 'protocol' && r.matcher.protocol === 'raw'],
    ['crypto-miners', (r) => r.matcher.kind === 'execname' && r.matcher.name === 'xmrig'],
    [
      'cloud CLI credentials',
      (r) => r.matcher.kind === 'directory' && r.matcher.dir === '/root/.config/gcloud/',
    ],
    ['kube configs', (r) => r.matcher.kind === 'directory' && r.matcher.dir === '/root/.kube/'],
    ['SSH keys', (r) => r.matcher.kind === 'pattern' && r.matcher.pattern === '/root/.ssh/id_*'],
    [
      'service-account tokens',
      (r) => r.matcher.kind === 'directory' && r.matcher.dir === '/run/secrets/kubernetes.io/serviceaccount/',
    ],
    ['system binaries', (r) => r.matcher.kind === 'directory' && r.matcher.dir === '/usr/bin/' && r.readOnly],
    ['account databases', (r) => r.matcher.kind === 'path' && r.matcher.path === '/etc/passwd'],
    ['cron', (r) => r.matcher.kind === 'directory' && r.matcher.dir === '/etc/cron.d/'],
    ['systemd', (r) => r.matcher.kind === 'directory' && r.matcher.dir === '/etc/systemd/system/'],
    [
      'kernel module tools',
      (r, host) => !host && r.matcher.kind === 'execname' && r.matcher.name === 'modprobe',
    ],
    ['mount tools', (r) => r.matcher.kind === 'execname' && r.matcher.name === 'mount'],
    ['namespace tools', (r) => r.matcher.kind === 'execname' && r.matcher.name === 'nsenter'],
    ['ptrace tools', (r) => r.matcher.kind === 'execname' && r.matcher.name === 'strace'],
    ['log tampering', (r) => r.matcher.kind === 'path' && r.matcher.path === '/var/log/wtmp'],
    ['/proc sensitive paths', (r) => r.matcher.kind === 'path' && r.matcher.path === '/proc/kcore'],
    ['/sys sensitive paths', (r) => r.matcher.kind === 'directory' && r.matcher.dir === '/sys/kernel/'],
    ['docker.sock', (r) => r.matcher.kind === 'path' && r.matcher.path === '/var/run/docker.sock'],
    ['/run/containerd', (r) => r.matcher.kind === 'directory' && r.matcher.dir === '/run/containerd/'],
    [
      'kubelet PKI on nodes',
      (r, host) => host && r.matcher.kind === 'directory' && r.matcher.dir === '/var/lib/kubelet/pki/',
    ],
    [
      'static pod manifests on nodes',
      (r, host) =>
        host && r.matcher.kind === 'pattern' && r.matcher.pattern === '/etc/kubernetes/manifests/**',
    ],
    [
      'audit configuration on nodes',
      (r, host) => host && r.matcher.kind === 'directory' && r.matcher.dir === '/etc/audit/',
    ],
  ];
  for (const [area, pred] of AREAS) {
    it(`covers ${area}`, () => {
      const lint = lintTexts(hardening);
      assert.ok(
        lint.ruleSet.policies.some((p) => p.rules.some((r) => pred(r, p.kind === 'RuntimeHostPolicy'))),
        area,
      );
    });
  }
});
