// The SELinux backend: what each rule becomes, what is left out with which warning, escaping of file
// contexts (property-tested, and checked by the real secilc), and golden CIL modules over the examples
// and the upstream corpus, each built by the real secilc with the minimal base policy of
// test/fixtures/selinux-base/.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import '../../../support/property-seed.js';
import {
  SELINUX_BACKEND,
  emitSelinuxModules,
} from '../../../../compiler/backends/selinux/selinux-backend.js';
import {
  convertGlobToRegex,
  escapeRegexLiteral,
  isRepresentableInFileContext,
} from '../../../../compiler/backends/selinux/escape-selinux.js';
import { matchesGlob } from '../../../../compiler/decide/path-match.js';
import { matchesResource } from '../../../../compiler/decide/match-rule.js';
import { hasCommand, requirePrereqs } from '../../../support/prereq.js';
import { REAL_TOOL_TIMEOUT_MS } from '../../../support/timeouts.js';
import { arbPath, arbPattern, arbRuleSet } from '../../decide/arbitrary-rule-set.js';
import {
  Action,
  Operation,
  capability,
  dir,
  execname,
  makeHostPolicy,
  makePodPolicy,
  path as pathM,
  pattern,
  protocol,
  srcDir,
  srcPath,
  type RuleSpec,
} from '../../decide/rule-set-builder.js';
import {
  checkGolden,
  emitCorpus,
  itOnCorpus,
  loadCorpora,
  renderDiagnostics,
  repoRoot,
} from '../golden-support.js';

const BASE = path.join(repoRoot, 'test/fixtures/selinux-base/base.cil');

function moduleOf(rules: RuleSpec[]): { text: string; codes: string[] } {
  const out = emitSelinuxModules({
    ruleSet: { policies: [makeHostPolicy('h', rules, { role: 'worker' })] },
    documents: [],
  });
  const cil = out.artifacts.find((a) => a.path.endsWith('.cil'));
  assert.ok(cil);
  return { text: String(cil.content), codes: out.diagnostics.map((d) => d.code).sort() };
}

/** Builds base + module with the real secilc; returns status, output and the file_contexts written. */
function buildWithSecilc(
  work: string,
  text: string,
): { status: number | null; output: string; fileContexts: string } {
  const mod = path.join(work, 'module.cil');
  const fcFile = path.join(work, 'file_contexts');
  writeFileSync(mod, text);
  writeFileSync(fcFile, '');
  const r = spawnSync('secilc', ['-o', path.join(work, 'policy.bin'), '-f', fcFile, BASE, mod], {
    encoding: 'utf8',
  });
  return { status: r.status, output: `${r.stdout}${r.stderr}`, fileContexts: readFileSync(fcFile, 'utf8') };
}

const P = Operation.Process;

const cases: { name: string; rule: RuleSpec; has: RegExp[]; hasNot?: RegExp[]; codes?: string[] }[] = [
  {
    name: 'File Block path: labelled, no file access granted',
    rule: { matcher: pathM('/etc/shadow'), action: Action.Block },
    has: [/\(filecon "\/etc\/shadow" any \(system_u object_r t0/],
    hasNot: [/\(allow domain t0 \(file/],
  },
  {
    name: 'File Block readOnly: reads (and exec, a Process matter) granted, writes not',
    rule: { matcher: pathM('/etc/hosts'), action: Action.Block, readOnly: true },
    has: [/\(allow domain t0 \(file \(open read getattr ioctl lock map execute execute_no_trans\)\)\)/],
    hasNot: [/\(file \([^)]*write/],
  },
  {
    name: 'File Audit: read/write granted and audited',
    rule: { matcher: dir('/var/log/', true), action: Action.Audit },
    has: [/filecon "\/var\/log\/\.\+"/, /\(auditallow domain t0 \(file \(open read .*write/],
  },
  {
    name: 'File Allow: granted, least-permissive not expressible (RT4101)',
    rule: { matcher: dir('/srv/'), action: Action.Allow },
    has: [/filecon "\/srv\/\[\^\/\]\+"/, /\(allow domain t0 \(file \(open read getattr ioctl lock map write/],
    codes: ['RT4101'],
  },
  {
    name: 'Process Block: still readable and writable, not executable',
    rule: { operation: P, matcher: pathM('/usr/bin/wget'), action: Action.Block },
    has: [
      /\(allow domain t0 \(file \(open read getattr ioctl lock map write append create setattr unlink rename link\)\)\)/,
    ],
    hasNot: [/execute/],
  },
  {
    name: 'Process Audit: executable and audited',
    rule: { operation: P, matcher: execname('gdb'), action: Action.Audit },
    has: [/filecon "\(\.\*\/\)\?gdb"/, /\(auditallow domain t0 \(file \(execute execute_no_trans\)\)\)/],
  },
  {
    name: 'pattern becomes a regex',
    rule: { matcher: pattern('/home/*/secret?.d/**'), action: Action.Block },
    has: [/filecon "\/home\/\[\^\/\]\*\/secret\[\^\/\]\\\.d\/\.\*"/],
  },
  {
    name: 'network is left out (RT4104)',
    rule: { matcher: protocol('tcp'), action: Action.Block },
    has: [],
    hasNot: [/type t0/],
    codes: ['RT4104'],
  },
  {
    name: 'capabilities are left out (RT4104)',
    rule: { matcher: capability('net_raw'), action: Action.Block },
    has: [],
    hasNot: [/type t0/],
    codes: ['RT4104'],
  },
  {
    name: 'fromSource path: a domain entered by executing the source; a sourced Block denies only that domain',
    rule: { matcher: pathM('/etc/x'), action: Action.Block, fromSource: [srcPath('/bin/cat')] },
    has: [
      /\(type d0\)/,
      /\(typeattributeset domain \(d0\)\)/,
      /\(filecon "\/bin\/cat" any \(system_u object_r d0_exec/,
      /\(typetransition domain d0_exec process d0\)/,
      /\(typeattributeset others \(and domain \(not \(d0\)\)\)\)/,
      /\(allow others t0 \(file \(open read getattr ioctl lock map write/,
    ],
    hasNot: [/\(allow d0 t0 \(file/],
  },
  {
    name: 'fromSource by directory is left out (RT4102)',
    rule: { matcher: pathM('/etc/x'), action: Action.Block, fromSource: [srcDir('/usr/bin/')] },
    has: [],
    hasNot: [/type t0/],
    codes: ['RT4102'],
  },
  {
    name: 'ownerOnly is warned about (RT4103)',
    rule: { matcher: pathM('/etc/x'), action: Action.Block, ownerOnly: true },
    has: [/type t0/],
    codes: ['RT4103'],
  },
  {
    name: 'a path with a space or a quote is left out (RT4106)',
    rule: { matcher: pathM('/etc/a b"c'), action: Action.Block },
    has: [],
    hasNot: [/type t0/],
    codes: ['RT4106'],
  },
];

describe('SELinux backend', () => {
  for (const c of cases) {
    it(c.name, () => {
      const m = moduleOf([c.rule]);
      for (const re of c.has) assert.match(m.text, re);
      for (const re of c.hasNot ?? []) assert.doesNotMatch(m.text, re);
      assert.deepEqual(m.codes, c.codes ?? []);
    });
  }

  it('File and Process rules on one path share the label, each class keeps its own decision', () => {
    const m = moduleOf([
      { matcher: pathM('/usr/bin/tool'), action: Action.Block },
      { operation: P, matcher: pathM('/usr/bin/tool'), action: Action.Allow },
    ]);
    assert.equal(m.text.match(/\(type t\d\)/g)?.length, 1);
    assert.match(m.text, /\(allow domain t0 \(file \(execute execute_no_trans\)\)\)/);
  });

  it('a File Block alone also stops execution (no read, no execute)', () => {
    const m = moduleOf([{ matcher: pathM('/usr/bin/tool'), action: Action.Block }]);
    assert.doesNotMatch(m.text, /execute/);
  });

  it('pod policies produce no module', () => {
    const out = emitSelinuxModules({
      ruleSet: { policies: [makePodPolicy('p', [{ matcher: pathM('/x'), action: Action.Block }])] },
      documents: [],
    });
    assert.deepEqual(
      out.artifacts.map((a) => a.path),
      ['selinux/modules.json'],
    );
  });

  it('a node set module holds the policies whose node selector it implies (`*` included)', () => {
    const out = emitSelinuxModules({
      ruleSet: {
        policies: [
          makeHostPolicy('all-workers', [{ matcher: pathM('/a'), action: Action.Block }], { role: '*' }),
          makeHostPolicy('one-node', [{ matcher: pathM('/b'), action: Action.Block }], {
            role: 'worker',
            host: 'n1',
          }),
        ],
      },
      documents: [],
    });
    const index = JSON.parse(
      String(out.artifacts.find((a) => a.path === 'selinux/modules.json')?.content),
    ) as { policies: string[] }[];
    assert.deepEqual(index.map((m) => m.policies).sort(), [['all-workers'], ['all-workers', 'one-node']]);
  });

  it('escaping: literal regexes match exactly their path (fast-check)', () => {
    fc.assert(
      fc.property(
        fc.string({
          unit: fc.integer({ min: 0x21, max: 0x7e }).map((c) => String.fromCharCode(c)),
          maxLength: 30,
        }),
        (s) => {
          const p = `/${s}`;
          if (!isRepresentableInFileContext(p)) return;
          assert.ok(new RegExp(`^${escapeRegexLiteral(p)}$`).test(p));
          assert.ok(!new RegExp(`^${escapeRegexLiteral(p)}$`).test(`${p}x`));
        },
      ),
      { numRuns: 1000 },
    );
  });

  it('glob regexes match the same paths as the oracle (fast-check)', () => {
    fc.assert(
      fc.property(arbPattern, arbPath, (p, s) => {
        if (!isRepresentableInFileContext(p) || !isRepresentableInFileContext(s)) return;
        assert.equal(new RegExp(`^${convertGlobToRegex(p)}$`).test(s), matchesGlob(p, s));
      }),
      { numRuns: 1000 },
    );
  });

  describe('with the real secilc', function () {
    this.timeout(REAL_TOOL_TIMEOUT_MS);
    let work = '';
    before(function () {
      requirePrereqs(this, [[hasCommand('secilc'), 'secilc (Debian package secilc)']]);
      work = mkdtempSync(path.join(os.tmpdir(), 'rtctl-selinux-'));
    });
    after(() => {
      if (work !== '') rmSync(work, { recursive: true, force: true });
    });

    it('builds modules of adversarial printable paths, one file context per rule (fast-check)', () => {
      fc.assert(
        fc.property(
          fc.uniqueArray(
            fc.string({
              unit: fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)),
              minLength: 1,
              maxLength: 20,
            }),
            { minLength: 1, maxLength: 10 },
          ),
          (names) => {
            const rules = names.map((n): RuleSpec => ({ matcher: pathM(`/adv/${n}`), action: Action.Block }));
            const m = moduleOf(rules);
            const r = buildWithSecilc(work, m.text);
            assert.equal(r.status, 0, `${r.output}\n${m.text}`);
            const representable = names.filter((n) => isRepresentableInFileContext(`/adv/${n}`));
            const lines = r.fileContexts.split('\n').filter((l) => l.startsWith('/adv/'));
            assert.equal(lines.length, representable.length, r.fileContexts);
            assert.equal(m.codes.filter((c) => c === 'RT4106').length, names.length - representable.length);
          },
        ),
        { numRuns: 25 },
      );
    });

    it('file contexts label exactly the paths the oracle matches, checked with the real libselinux (matchpathcon) (fast-check)', function () {
      requirePrereqs(this, [[hasCommand('matchpathcon'), 'matchpathcon (Debian package selinux-utils)']]);
      const arbMatcherCase = fc.oneof(
        arbPath.map((p): RuleSpec['matcher'] => pathM(p)),
        fc.tuple(arbPath, fc.boolean()).map(([p, r]): RuleSpec['matcher'] => dir(`${p}/`, r)),
        arbPattern.map((p): RuleSpec['matcher'] => pattern(p)),
      );
      fc.assert(
        fc.property(arbMatcherCase, fc.array(arbPath, { minLength: 1, maxLength: 8 }), (matcher, extra) => {
          const m = moduleOf([{ matcher, action: Action.Block }]);
          if (m.codes.includes('RT4106')) return;
          const built = buildWithSecilc(work, m.text);
          assert.equal(built.status, 0, built.output);
          const fcFile = path.join(work, 'file_contexts');
          const near =
            matcher.kind === 'path'
              ? [matcher.path]
              : matcher.kind === 'directory'
                ? [`${matcher.dir}a`, `${matcher.dir}a/b`]
                : matcher.kind === 'pattern'
                  ? [matcher.pattern.replace(/\*\*/g, 'a/b').replace(/\*/g, 'a').replace(/\?/g, 'e')]
                  : [];
          const paths = [...new Set([...near, ...extra])].filter((p) => isRepresentableInFileContext(p));
          const r = spawnSync('matchpathcon', ['-f', fcFile, ...paths], { encoding: 'utf8' });
          assert.equal(r.status, 0, r.stderr);
          const labelled = new Map(
            r.stdout
              .trim()
              .split('\n')
              .map((line) => {
                const [p, label] = line.split('\t');
                return [p ?? '', label !== undefined && label !== '<<none>>'] as const;
              }),
          );
          for (const p of paths) {
            const expected = matchesResource(matcher, {
              operation: Operation.File,
              resource: p,
              write: false,
              owner: false,
            });
            assert.equal(labelled.get(p), expected, `${JSON.stringify(matcher)} on ${p}: ${r.stdout}`);
          }
        }),
        { numRuns: 40 },
      );
    });

    it('every module of random rule sets builds (fast-check)', () => {
      fc.assert(
        fc.property(arbRuleSet, (ruleSet) => {
          for (const a of emitSelinuxModules({ ruleSet, documents: [] }).artifacts) {
            if (!a.path.endsWith('.cil')) continue;
            const r = buildWithSecilc(work, String(a.content));
            assert.equal(r.status, 0, `${r.output}\n${String(a.content)}`);
          }
        }),
        { numRuns: 40 },
      );
    });

    for (const entry of loadCorpora()) {
      itOnCorpus(
        entry,
        `golden modules of ${entry.name} match and every module builds with the base policy`,
        (corpus) => {
          const out = emitCorpus(SELINUX_BACKEND, corpus);
          const files = new Map<string, string | Uint8Array>(
            out.artifacts.map((a) => [a.path.replace(/^selinux\//, ''), a.content]),
          );
          files.set('diagnostics.txt', renderDiagnostics(out));
          checkGolden('selinux', corpus.name, files);
          assert.deepEqual(
            emitCorpus(SELINUX_BACKEND, corpus).artifacts,
            out.artifacts,
            'deterministic output',
          );
          for (const a of out.artifacts) {
            if (!a.path.endsWith('.cil')) continue;
            const r = buildWithSecilc(work, String(a.content));
            assert.equal(r.status, 0, `${a.path}: ${r.output}`);
          }
        },
      );
    }
  });
});
