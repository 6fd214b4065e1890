// The control catalogue (compiler/bundles/control-catalogue.ts) and the review record
// (compiler/bundles/control-review.ts): every id the bundles name is listed with a title and edition, nothing
// listed is unused, the policies agree with the review, lint warns about an unlisted id (RT3032) and only then,
// and `rtctl bundles` prints titles beside ids (and says so when an id is not listed).
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { buildCatalog, type Catalog } from '../../compiler/bundles/catalog.js';
import {
  CONTROL_CATALOGUE,
  EDITION_INFO,
  EDITIONS,
  lookupControl,
  type Edition,
} from '../../compiler/bundles/control-catalogue.js';
import {
  ADDED_BY_REVIEW,
  CHECKED_BEFORE_REVIEW,
  REVIEW_CHANGES,
  REVIEW_MOVES,
} from '../../compiler/bundles/control-review.js';
import { readBundleSources } from '../../compiler/bundles/load.js';
import { CATALOGUES, CONTROL_ID_FORMS, type Catalogue } from '../../compiler/bundles/metadata.js';
import { renderHardeningDoc, UNLISTED_TITLE } from '../../compiler/bundles/render.js';
import { lintTexts } from '../../compiler/lint.js';
import { REPO_ROOT } from '../support/paths.js';

const run = promisify(execFile);
const ROOT = path.join(REPO_ROOT, 'policies', 'hardening');

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

/** The edition an id's own form names (the CIS prefix, the STIG number range). */
function editionOf(catalogue: Catalogue, id: string): Edition {
  if (catalogue === 'cis')
    return id.startsWith('docker-')
      ? 'cis-docker'
      : id.startsWith('kubernetes-')
        ? 'cis-kubernetes'
        : 'cis-linux';
  if (catalogue === 'mitre') return 'mitre-attack';
  if (catalogue === 'nist') return 'nist-800-53';
  return id.startsWith('V-242') ? 'stig-kubernetes' : 'stig-rhel8';
}

/** A pod policy with the given hardening annotations, as text. */
function policyText(annotations: Partial<Record<Catalogue, string>>): string {
  const lines = Object.entries(annotations).map(
    ([c, v]) => `    hardening.security.runtime.com/${c}: ${JSON.stringify(v)}`,
  );
  return [
    'apiVersion: security.runtime.com/v1',
    'kind: RuntimePolicy',
    'metadata:',
    '  name: probe',
    '  namespace: default',
    '  labels:',
    '    hardening.security.runtime.com/profile: baseline',
    '  annotations:',
    ...lines,
    '    hardening.security.runtime.com/rationale: package managers change the image at run time',
    '    hardening.security.runtime.com/attack: apt-get install of a tool after compromise',
    '    hardening.security.runtime.com/may-break: image builds in the container',
    'spec:',
    '  selector:',
    '    matchLabels: {}',
    '  tags: [CIS]',
    '  process:',
    '    matchPaths:',
    '      - execname: apt-get',
    '  action: Block',
    '',
  ].join('\n');
}

describe('hardening control catalogue', function () {
  this.timeout(60000);
  let catalog: Catalog;
  before(() => {
    catalog = buildCatalog(readBundleSources(ROOT).filter((s) => !s.file.startsWith('allow/')));
  });
  const used = (c: Catalogue): Set<string> => new Set(catalog.policies.flatMap((p) => p.meta.controls[c]));

  it('lists every id a bundle policy names, and nothing no policy names', () => {
    for (const c of CATALOGUES) {
      const listed = Object.keys(CONTROL_CATALOGUE[c]).sort();
      assert.deepEqual(listed, [...used(c)].sort(), `${c}: listed ids are the ids in use`);
    }
  });

  it('gives each listed id its form, a one-line title and the edition its form names', () => {
    for (const c of CATALOGUES)
      for (const [id, control] of Object.entries(CONTROL_CATALOGUE[c])) {
        assert.match(id, CONTROL_ID_FORMS[c].pattern, id);
        assert.ok(control.title.length > 3 && !/[\r\n]/.test(control.title), `${id} title`);
        assert.equal(control.edition, editionOf(c, id), `${id} edition`);
        assert.equal(EDITION_INFO[control.edition].catalogue, c, `${id} edition's catalogue`);
      }
    for (const e of EDITIONS)
      assert.ok(
        Object.values(CONTROL_CATALOGUE[EDITION_INFO[e].catalogue]).some((k) => k.edition === e),
        `${e} has ids`,
      );
  });

  it('finds an id only under its own catalogue, and no inherited property', () => {
    assert.equal(lookupControl('mitre', 'T1496')?.title, 'Resource Hijacking');
    assert.equal(lookupControl('nist', 'T1496'), undefined);
    assert.equal(lookupControl('cis', 'toString'), undefined);
    assert.equal(lookupControl('stig', '__proto__'), undefined);
  });

  it('agrees with the review record: removed ids gone, replacements in place, moves done', () => {
    const byName = new Map(catalog.policies.map((p) => [p.name, p]));
    const keys = REVIEW_CHANGES.map((k) => `${k.policy} ${k.catalogue} ${k.id} ${k.replacement ?? '-'}`);
    assert.deepEqual(
      keys.filter((k, i) => keys.indexOf(k) !== i),
      [],
      'each change is recorded once',
    );
    for (const k of REVIEW_CHANGES) {
      const p = byName.get(k.policy);
      assert.ok(p !== undefined, `${k.policy} exists`);
      assert.ok(!p.meta.controls[k.catalogue].includes(k.id), `${k.policy} no longer names ${k.id}`);
      if (k.replacement !== undefined) {
        assert.ok(p.meta.controls[k.catalogue].includes(k.replacement), `${k.policy} names ${k.replacement}`);
        assert.ok(lookupControl(k.catalogue, k.replacement) !== undefined, `${k.replacement} listed`);
      }
      assert.ok(k.reason.length > 10, `${k.policy} ${k.id}: a reason`);
    }
    for (const m of REVIEW_MOVES) {
      assert.ok(!byName.has(m.from), `${m.from} renamed`);
      const moved = byName.get(m.to);
      assert.ok(moved !== undefined, `${m.to} exists`);
      // The new bundle is a catalogue the policy still names.
      assert.equal(m.to.split('-')[0], moved.bundle);
      assert.ok(
        moved.meta.controls[moved.bundle as Catalogue].length > 0,
        `${m.to} names ${moved.bundle} ids`,
      );
    }
  });

  it("names in its alert tags only controls (or their sections and parents) the policy's annotations name", () => {
    // Tags travel in every alert: CIS_Docker_5.12, CIS_Linux_6.1 (a section), MITRE_T1552 (a parent),
    // NIST_800-53_CM-7, STIG_V-230487.
    const tagged: Array<[RegExp, Catalogue, (m: RegExpMatchArray) => string]> = [
      [
        /^CIS_(Docker|Kubernetes|Linux)_([\d.]+)$/,
        'cis',
        (m) => `${(m[1] ?? '').toLowerCase()}-${m[2] ?? ''}`,
      ],
      [/^MITRE_(T\d{4}(?:\.\d{3})?)$/, 'mitre', (m) => m[1] ?? ''],
      [/^NIST_800-53_([A-Z]{2}-\d+(?:\(\d+\))?)$/, 'nist', (m) => m[1] ?? ''],
      [/^STIG_(V-\d+)$/, 'stig', (m) => m[1] ?? ''],
    ];
    const lint = lintTexts(readBundleSources(ROOT).filter((s) => /^(cis|mitre|nist|stig)\//.test(s.file)));
    let checked = 0;
    for (const p of lint.ruleSet.policies) {
      const meta = catalog.policies.find((x) => x.name === p.name)?.meta;
      assert.ok(meta !== undefined, p.name);
      for (const tag of new Set(p.rules.flatMap((r) => r.tags)))
        for (const [re, c, idOf] of tagged) {
          const m = tag.match(re);
          if (m === null) continue;
          const t = idOf(m);
          checked++;
          assert.ok(
            meta.controls[c].some((id) => id === t || id.startsWith(`${t}.`) || id.startsWith(`${t}(`)),
            `${p.name}: tag ${tag} names no control of ${meta.controls[c].join(', ') || 'no ' + c + ' id'}`,
          );
        }
    }
    assert.ok(checked > 50, `${checked} control tags checked`);
  });

  it('accounts for every id named before the review: kept in the catalogue or recorded as removed', () => {
    for (const c of CATALOGUES) {
      const kept = Object.keys(CONTROL_CATALOGUE[c]).filter((id) => !ADDED_BY_REVIEW[c].includes(id));
      const removed = REVIEW_CHANGES.filter((k) => k.catalogue === c).map((k) => k.id);
      const before = new Set([...kept, ...removed]);
      assert.equal(before.size, CHECKED_BEFORE_REVIEW[c], c);
      // An added id really is new: no review entry removed it from elsewhere.
      for (const id of ADDED_BY_REVIEW[c]) assert.ok(!removed.includes(id), id);
    }
  });

  // Lint: a well-formed id the catalogue lists passes; one it does not list is a warning at the annotation.
  const CASES: ReadonlyArray<{
    name: string;
    annotations: Partial<Record<Catalogue, string>>;
    unlisted: string[];
    malformed?: number;
  }> = [
    {
      name: 'listed ids of every catalogue',
      annotations: { cis: 'docker-4.3', mitre: 'T1105', nist: 'CM-7,CM-11', stig: 'V-230487' },
      unlisted: [],
    },
    {
      name: 'an unlisted CIS section',
      annotations: { cis: 'docker-4.3,linux-1.2.1' },
      unlisted: ['linux-1.2.1'],
    },
    { name: 'an unlisted technique', annotations: { mitre: 'T1072' }, unlisted: ['T1072'] },
    {
      name: 'an unlisted enhancement of a listed control',
      annotations: { nist: 'CM-7(5)' },
      unlisted: ['CM-7(5)'],
    },
    { name: 'an unlisted STIG id', annotations: { stig: 'V-230264' }, unlisted: ['V-230264'] },
    {
      name: 'a malformed id (RT3030 only, no RT3032 for it)',
      annotations: { mitre: 'TA0006' },
      unlisted: [],
      malformed: 1,
    },
    {
      name: 'a duplicate unlisted id (warned about once)',
      annotations: { mitre: 'T1072,T1072' },
      unlisted: ['T1072'],
      malformed: 1,
    },
  ];
  for (const t of CASES) {
    it(`lint: ${t.name}`, () => {
      const text = policyText(t.annotations);
      const { diagnostics } = lintTexts([{ file: 'probe.yaml', text }]);
      const unlisted = diagnostics.filter((d) => d.code === 'RT3032');
      assert.equal(unlisted.length, t.unlisted.length, unlisted.map((d) => d.message).join('\n'));
      for (const [i, id] of t.unlisted.entries()) {
        const d = unlisted[i];
        assert.ok(d !== undefined);
        assert.equal(d.severity, 'warning');
        assert.ok(d.message.includes(JSON.stringify(id)), d.message);
        assert.match(d.message, /control-catalogue\.ts/);
        // Located at the annotation that names it.
        const line = text.split('\n').findIndex((l) => l.includes(id)) + 1;
        assert.equal(d.start?.line, line);
      }
      assert.equal(diagnostics.filter((d) => d.code === 'RT3030').length, t.malformed ?? 0);
    });
  }

  it('rtctl bundles prints titles beside ids, and marks an id the catalogue does not list', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'rtctl-bundles-'));
    try {
      mkdirSync(path.join(dir, 'cis'));
      writeFileSync(
        path.join(dir, 'cis', 'probe.yaml'),
        policyText({ cis: 'docker-4.3,docker-9.9', mitre: 'T1105' }),
      );
      // Warnings do not stop the command.
      const cov = await rtctl('bundles', 'coverage', '--dir', dir);
      assert.equal(cov.code, 0, cov.stderr);
      assert.match(
        cov.stdout,
        /CIS +docker-4\.3 +probe +Ensure that unnecessary packages are not installed in the container\n/,
      );
      assert.match(
        cov.stdout,
        new RegExp(`CIS +docker-9\\.9 +probe +${UNLISTED_TITLE.replace(/[()]/g, '\\$&')}\n`),
      );
      const json = JSON.parse((await rtctl('bundles', 'coverage', '--dir', dir, '-o', 'json')).stdout) as {
        catalogues: {
          catalogue: string;
          controls: { id: string; title: string | null; edition: string | null }[];
        }[];
      };
      const cis = json.catalogues.find((c) => c.catalogue === 'cis')?.controls ?? [];
      assert.deepEqual(
        cis.map((k) => [k.id, k.title, k.edition]),
        [
          ['docker-4.3', 'Ensure that unnecessary packages are not installed in the container', 'cis-docker'],
          ['docker-9.9', null, null],
        ],
      );
      const list = JSON.parse((await rtctl('bundles', 'list', '--dir', dir, '-o', 'json')).stdout) as {
        bundles: { policies: { titles: Record<string, Record<string, string | null>> }[] }[];
      };
      assert.deepEqual(list.bundles[0]?.policies[0]?.titles.cis, {
        'docker-4.3': 'Ensure that unnecessary packages are not installed in the container',
        'docker-9.9': null,
      });
      const show = await rtctl('bundles', 'show', 'probe', '--dir', dir);
      assert.match(show.stdout, /CIS: +docker-4\.3 +Ensure that unnecessary packages/);
      assert.match(show.stdout, /\n +docker-9\.9 +\(not in the control catalogue\)/);
      assert.match(show.stdout, /MITRE: +T1105 +Ingress Tool Transfer/);
      const lint = await rtctl('lint', path.join(dir, 'cis', 'probe.yaml'));
      assert.match(lint.stdout + lint.stderr, /RT3032/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('docs/hardening.md shows titles, editions and the review', () => {
    const doc = renderHardeningDoc(catalog);
    assert.match(doc, /\| T1496 \| Resource Hijacking \| \[mitre-block-crypto-miners\]/);
    assert.match(doc, /- MITRE ATT&CK: T1496 \(Resource Hijacking\)/);
    for (const e of EDITIONS) assert.ok(doc.includes(EDITION_INFO[e].name), e);
    assert.match(doc, /## How the ids were verified/);
    for (const k of REVIEW_CHANGES)
      assert.ok(doc.includes(`| [${k.policy}](#${k.policy}) | ${k.id} |`), `${k.policy} ${k.id}`);
    for (const m of REVIEW_MOVES) assert.ok(doc.includes(`| ${m.from} | [${m.to}](#${m.to}) |`), m.from);
    assert.ok(!doc.includes(UNLISTED_TITLE), 'every id of the bundles is listed');
  });
});
