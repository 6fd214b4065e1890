// The AppArmor backend: rule rendering, escaping against injection (property-tested, and checked by the
// real apparmor_parser), golden profiles over the examples and the upstream corpus, each compiled by
// the real apparmor_parser (-Q, with a features file: this kernel has no AppArmor).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import '../../../support/property-seed.js';
import {
  APPARMOR_BACKEND,
  emitApparmorProfiles,
} from '../../../../compiler/backends/apparmor/apparmor-backend.js';
import {
  quoteApparmorGlob,
  quoteApparmorPath,
} from '../../../../compiler/backends/apparmor/escape-apparmor.js';
import { hasCommand, requirePrereqs } from '../../../support/prereq.js';
import { REAL_TOOL_TIMEOUT_MS } from '../../../support/timeouts.js';
import {
  Action,
  Operation,
  dir,
  execname,
  makeHostPolicy,
  makePodPolicy,
  path as pathM,
  pattern,
  protocol,
  capability,
  srcPath,
  type RuleSpec,
} from '../../decide/rule-set-builder.js';
import { arbRuleSet } from '../../decide/arbitrary-rule-set.js';
import {
  checkGolden,
  emitCorpus,
  itOnCorpus,
  loadCorpora,
  renderDiagnostics,
  repoRoot,
} from '../golden-support.js';

const FEATURES = path.join(repoRoot, 'test/fixtures/apparmor/features');

/** Runs the real apparmor_parser on a profile file; returns its exit status and output. */
function parseProfile(file: string, extra: string[] = []): { status: number | null; output: string } {
  const r = spawnSync('apparmor_parser', ['-Q', '-K', '--features-file', FEATURES, ...extra, file], {
    encoding: 'utf8',
  });
  return { status: r.status, output: `${r.stdout}${r.stderr}` };
}

function profileOf(rules: RuleSpec[]): string {
  const out = emitApparmorProfiles({ ruleSet: { policies: [makePodPolicy('p', rules)] }, documents: [] });
  const profile = out.artifacts.find((a) => a.path !== 'apparmor/profiles.json');
  assert.ok(profile);
  return String(profile.content);
}

/** Decodes the octal escapes of a quoted AppArmor path back to its bytes. */
function decodeQuoted(quoted: string): Buffer {
  assert.ok(quoted.startsWith('"') && quoted.endsWith('"'));
  const body = quoted.slice(1, -1);
  const bytes: number[] = [];
  for (let i = 0; i < body.length; i++) {
    if (body[i] === '\\') {
      bytes.push(parseInt(body.slice(i + 1, i + 4), 8));
      i += 3;
    } else bytes.push(body.charCodeAt(i));
  }
  return Buffer.from(bytes);
}

const P = Operation.Process;

const renderCases: { name: string; rule: RuleSpec; lines: string[] }[] = [
  {
    name: 'file Block path',
    rule: { matcher: pathM('/etc/shadow'), action: Action.Block },
    lines: ['deny "/etc/shadow" rw,'],
  },
  {
    name: 'file Audit readOnly: writes audited',
    rule: { matcher: pathM('/etc/hosts'), action: Action.Audit, readOnly: true },
    lines: ['audit "/etc/hosts" w,'],
  },
  {
    name: 'file Block ownerOnly: other users denied',
    rule: { matcher: pathM('/home/u/f'), action: Action.Block, ownerOnly: true },
    lines: ['deny other "/home/u/f" rw,'],
  },
  {
    name: 'file Block ownerOnly+readOnly: only owner reads pass',
    rule: {
      matcher: pattern('/home/user1/secret_data*'),
      action: Action.Block,
      ownerOnly: true,
      readOnly: true,
    },
    lines: ['deny "/home/user1/secret_data*" w,', 'deny other "/home/user1/secret_data*" r,'],
  },
  {
    name: 'file Allow readOnly+ownerOnly directory recursive',
    rule: { matcher: dir('/home/user1/', true), action: Action.Allow, readOnly: true, ownerOnly: true },
    lines: ['owner "/home/user1/**" r,'],
  },
  {
    name: 'file Allow non-recursive directory',
    rule: { matcher: dir('/srv/'), action: Action.Allow },
    lines: ['"/srv/*" rw,'],
  },
  {
    name: 'process Block path',
    rule: { operation: P, matcher: pathM('/bin/sleep'), action: Action.Block },
    lines: ['deny "/bin/sleep" x,'],
  },
  {
    name: 'process Allow path inherits',
    rule: { operation: P, matcher: pathM('/usr/sbin/nginx'), action: Action.Allow },
    lines: ['"/usr/sbin/nginx" ix,'],
  },
  {
    name: 'process Block execname anywhere',
    rule: { operation: P, matcher: execname('apt'), action: Action.Block },
    lines: ['deny "/{,**/}apt" x,'],
  },
  {
    name: 'network Block all',
    rule: { matcher: protocol('all'), action: Action.Block },
    lines: ['deny network,'],
  },
  {
    name: 'network Audit icmp',
    rule: { matcher: protocol('icmp'), action: Action.Audit },
    lines: ['audit network icmp,'],
  },
  {
    name: 'capability Block net_raw',
    rule: { matcher: capability('net_raw'), action: Action.Block },
    lines: ['deny capability net_raw,'],
  },
  {
    name: 'a path with space, comma, quote, newline and glob characters stays one literal rule',
    rule: { matcher: pathM('/a b/c,d/"e"\n/f*?[x]{y}@{HOME}^#'), action: Action.Block },
    lines: [
      'deny "/a\\040b/c\\054d/\\042e\\042\\012/f\\052\\077\\133x\\135\\173y\\175\\100\\173HOME\\175\\136\\043" rw,',
    ],
  },
];

describe('AppArmor backend', () => {
  describe('rule rendering', () => {
    for (const c of renderCases) {
      it(c.name, () => {
        const text = profileOf([c.rule]);
        for (const line of c.lines) assert.ok(text.includes(`\n  ${line}\n`), `missing ${line} in\n${text}`);
      });
    }
  });

  it('least-permissive classes include the posture file, the others get blanket rules', () => {
    const text = profileOf([{ matcher: dir('/app/', true), action: Action.Allow }]);
    assert.match(text, /include if exists <rtctl\/posture\/default\/file>/);
    assert.match(text, /\n {2}"\/\{,\*\*\}" ix,/);
    assert.match(text, /\n {2}network,/);
    assert.doesNotMatch(text, /rwlkm/);
  });

  it('fromSource rules go into a child profile with the unscoped rules', () => {
    const text = profileOf([
      { matcher: dir('/etc/', true), action: Action.Block },
      { matcher: dir('/etc/default/', true), action: Action.Allow, fromSource: [srcPath('/usr/bin/head')] },
    ]);
    const m = /"\/usr\/bin\/head" cx -> (rtctl-src-[0-9a-f]+),/.exec(text);
    assert.ok(m, text);
    const child = text.slice(text.indexOf(`profile ${m[1] ?? ''}`));
    assert.match(child, /"\/etc\/default\/\*\*" rw,/);
    assert.match(child, /deny "\/etc\/\*\*" rw,/);
    assert.match(child, /include if exists <rtctl\/posture\/default\/file>/);
  });

  it('warns when AppArmor deny would override a more specific Allow (RT4001) and for unsupported protocols (RT4002)', () => {
    const out = emitApparmorProfiles({
      ruleSet: {
        policies: [
          makePodPolicy('p', [
            { matcher: dir('/etc/', true), action: Action.Block },
            { matcher: pathM('/etc/hostname'), action: Action.Allow, line: 7 },
            { matcher: protocol('sctp'), action: Action.Block, line: 8 },
          ]),
          makeHostPolicy('h', [{ matcher: pathM('/x'), action: Action.Block }]),
        ],
      },
      documents: [],
    });
    const codes = out.diagnostics.map((d) => `${d.code}:${d.start?.line ?? 0}`).sort();
    assert.deepEqual(codes, ['RT4001:7', 'RT4002:8', 'RT4005:1']);
  });

  it('does not warn RT4001 when the Block and the Allow cover different accesses', () => {
    const out = emitApparmorProfiles({
      ruleSet: {
        policies: [
          makePodPolicy('p', [
            { matcher: dir('/etc/', true), action: Action.Block, readOnly: true },
            { matcher: pathM('/etc/hostname'), action: Action.Allow, readOnly: true },
          ]),
        ],
      },
      documents: [],
    });
    assert.deepEqual(out.diagnostics, []);
  });

  it('rejects an apparmor snippet that could escape the profile (RT4003) and keeps a plain one', () => {
    const policy = makePodPolicy('p', [{ matcher: pathM('/x'), action: Action.Block }]);
    const bad = emitApparmorProfiles({
      ruleSet: { policies: [{ ...policy, apparmor: 'deny /x r,\n}\nprofile evil {' }] },
      documents: [],
    });
    assert.deepEqual(
      bad.diagnostics.map((d) => d.code),
      ['RT4003'],
    );
    assert.doesNotMatch(String(bad.artifacts[0]?.content), /evil/);
    const good = emitApparmorProfiles({
      ruleSet: { policies: [{ ...policy, apparmor: 'deny /y w,' }] },
      documents: [],
    });
    assert.deepEqual(good.diagnostics, []);
    assert.match(String(good.artifacts[0]?.content), /\n {2}deny \/y w,\n/);
  });

  it('escaping: any path becomes one quoted token of safe characters and octal escapes that decode to the path (fast-check)', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', minLength: 1, maxLength: 40 }), (s) => {
        const p = `/${s}`;
        const q = quoteApparmorPath(p);
        assert.match(q, /^"(?:[A-Za-z0-9/._-]|\\[0-7]{3})*"$/);
        assert.deepEqual(decodeQuoted(q), Buffer.from(p, 'utf8'));
      }),
      { numRuns: 1000 },
    );
  });

  it('escaping: patterns keep only * and ? as wildcards (fast-check)', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', minLength: 1, maxLength: 40 }), (s) => {
        const q = quoteApparmorGlob(`/${s}`);
        assert.match(q, /^"(?:[A-Za-z0-9/._*?-]|\\[0-7]{3})*"$/);
      }),
      { numRuns: 2000 },
    );
  });

  describe('with the real apparmor_parser', function () {
    this.timeout(REAL_TOOL_TIMEOUT_MS);
    let work = '';
    before(function () {
      requirePrereqs(this, [[hasCommand('apparmor_parser'), 'apparmor_parser (Debian package apparmor)']]);
      work = mkdtempSync(path.join(os.tmpdir(), 'rtctl-apparmor-'));
    });
    after(() => {
      if (work !== '') rmSync(work, { recursive: true, force: true });
    });

    it('compiles profiles of adversarial paths, each rule staying one rule (fast-check)', () => {
      fc.assert(
        fc.property(
          fc.uniqueArray(
            fc.string({ unit: 'grapheme', minLength: 1, maxLength: 24 }).filter((s) => !s.includes('\u0000')),
            { minLength: 1, maxLength: 12 },
          ),
          (names) => {
            const rules = names.map((n, i): RuleSpec => ({
              matcher: i % 2 === 0 ? pathM(`/adv/${n}`) : pattern(`/adv/${n}`),
              action: Action.Block,
            }));
            const file = path.join(work, 'adversarial');
            const text = profileOf(rules)
              .replace('include <tunables/global>', '')
              .replace(/\n\s*include <abstractions\/base>/g, '');
            writeFileSync(file, text);
            const r = parseProfile(file, ['-D', 'rule-exprs']);
            assert.equal(r.status, 0, r.output);
            const adv = r.output.split('aare: /adv/').length - 1;
            assert.equal(
              adv,
              new Set(
                names.map((n, i) =>
                  i % 2 === 0 ? quoteApparmorPath(`/adv/${n}`) : quoteApparmorGlob(`/adv/${n}`),
                ),
              ).size,
              r.output,
            );
          },
        ),
        { numRuns: 25 },
      );
    });

    const execConflictCases: { name: string; rules: RuleSpec[]; has: RegExp; codes: string[] }[] = [
      {
        name: 'a source that is also an allowed binary: the cx transition grants the exec',
        rules: [
          { operation: P, matcher: pathM('/usr/bin/head'), action: Action.Allow },
          {
            matcher: dir('/etc/default/', true),
            action: Action.Allow,
            fromSource: [srcPath('/usr/bin/head')],
          },
        ],
        has: /\n {2}"\/usr\/bin\/head" cx -> rtctl-src-/,
        codes: [],
      },
      {
        name: 'a source that is also an audited binary: the cx transition is audited',
        rules: [
          { operation: P, matcher: pathM('/usr/bin/head'), action: Action.Audit },
          { matcher: dir('/etc/', true), action: Action.Block, fromSource: [srcPath('/usr/bin/head')] },
        ],
        has: /\n {2}audit "\/usr\/bin\/head" cx -> rtctl-src-/,
        codes: [],
      },
      {
        name: 'a directory source is left out with RT4006 (a glob cx would conflict with the exec rules)',
        rules: [
          { operation: P, matcher: dir('/usr/bin/'), action: Action.Allow },
          {
            matcher: dir('/etc/', true),
            action: Action.Block,
            fromSource: [{ kind: 'directory', dir: '/usr/', recursive: true }],
          },
        ],
        has: /"\/usr\/bin\/\*" ix,/,
        codes: ['RT4006'],
      },
    ];
    for (const c of execConflictCases) {
      it(`exec transitions: ${c.name}; the profile compiles`, () => {
        const out = emitApparmorProfiles({
          ruleSet: { policies: [makePodPolicy('p', c.rules)] },
          documents: [],
        });
        const profile = out.artifacts.find(
          (a) => !a.path.endsWith('.json') && !a.path.includes('/postures/'),
        );
        assert.ok(profile);
        assert.match(String(profile.content), c.has);
        assert.deepEqual(
          out.diagnostics.map((d) => d.code),
          c.codes,
        );
        const file = path.join(work, 'exec-conflict');
        writeFileSync(file, profile.content);
        const r = parseProfile(file);
        assert.equal(r.status, 0, `${r.output}\n${String(profile.content)}`);
      });
    }

    it('every profile of random rule sets compiles (fast-check)', () => {
      fc.assert(
        fc.property(arbRuleSet, (ruleSet) => {
          const out = emitApparmorProfiles({ ruleSet, documents: [] });
          const files: string[] = [];
          for (const a of out.artifacts) {
            if (a.path.endsWith('.json') || a.path.includes('/postures/')) continue;
            const file = path.join(work, `random-${files.length}`);
            writeFileSync(file, a.content);
            files.push(file);
          }
          if (files.length === 0) return;
          const r = spawnSync('apparmor_parser', ['-Q', '-K', '--features-file', FEATURES, ...files], {
            encoding: 'utf8',
          });
          assert.equal(
            r.status,
            0,
            `${r.stdout}${r.stderr}\n${out.artifacts.map((a) => String(a.content)).join('\n')}`,
          );
        }),
        { numRuns: 60 },
      );
    });

    for (const entry of loadCorpora()) {
      itOnCorpus(entry, `golden profiles of ${entry.name} match and every profile compiles`, (corpus) => {
        const out = emitCorpus(APPARMOR_BACKEND, corpus);
        const files = new Map<string, string | Uint8Array>(
          out.artifacts.map((a) => [a.path.replace(/^apparmor\//, ''), a.content]),
        );
        files.set('diagnostics.txt', renderDiagnostics(out));
        checkGolden('apparmor', corpus.name, files);
        const again = emitCorpus(APPARMOR_BACKEND, corpus);
        assert.deepEqual(again.artifacts, out.artifacts, 'deterministic output');
        let profiles = 0;
        const postures = path.join(work, `postures-${corpus.name}`);
        const namespaces = (JSON.parse(String(files.get('profiles.json'))) as { namespace: string }[]).map(
          (p) => p.namespace,
        );
        for (const a of out.artifacts) {
          if (a.path.endsWith('.json') || a.path.includes('/postures/')) continue;
          const file = path.join(work, path.basename(a.path));
          writeFileSync(file, a.content);
          const bare = parseProfile(file);
          assert.equal(bare.status, 0, `${a.path}: ${bare.output}`);
          // With the posture includes installed as the enforcer would, for both postures.
          for (const posture of ['audit', 'block']) {
            for (const ns of namespaces) {
              mkdirSync(path.join(postures, posture, 'rtctl/posture', ns), { recursive: true });
              for (const cls of ['file', 'process', 'network', 'capabilities']) {
                const include = files.get(`postures/${posture}/${cls}`);
                assert.ok(include !== undefined, `postures/${posture}/${cls}`);
                writeFileSync(path.join(postures, posture, 'rtctl/posture', ns, cls), include);
              }
            }
            const r = parseProfile(file, ['-I', path.join(postures, posture)]);
            assert.equal(r.status, 0, `${a.path} with ${posture} postures: ${r.output}`);
          }
          profiles++;
        }
        assert.ok(profiles > 0);
      });
    }
  });
});
