// The enforcement table against the schema, the backends and the lint findings: every rule form of the schema
// has a row; the AppArmor and SELinux backends warn for a form iff the table says they do not enforce it, and
// leave the rule out or write it as the cell says; lint's RT3016/RT3018 and `--require-enforced` follow it.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { emitApparmorProfiles } from '../../../compiler/backends/apparmor/apparmor-backend.js';
import { emitSelinuxModules } from '../../../compiler/backends/selinux/selinux-backend.js';
import { BACKEND_CODES } from '../../../compiler/diagnostics/codes/backend.js';
import {
  BackendEffect,
  ENFORCEMENT_TABLE,
  ENFORCEMENT_TARGETS,
  EnforcementLevel,
  EnforcementTarget,
  findEnforcementTarget,
  getEnforcementCell,
} from '../../../compiler/enforcement/enforcement-table.js';
import { listRuleEntries } from '../../../compiler/enforcement/rule-forms.js';
import { summarizeEnforcement, weakerLevel } from '../../../compiler/enforcement/summarize-enforcement.js';
import { parseEnforcementTargets } from '../../../compiler/enforcement/parse-enforcement-targets.js';
import { Action, Operation, type PolicyIR, type SourceLocation } from '../../../compiler/ir/rule-set.js';
import { lintTexts } from '../../../compiler/lint.js';
import { PROTOCOL_NAMES } from '../../../compiler/schema/policy-schema.js';
import { COMPILER_FIXTURES } from '../../support/paths.js';
import {
  capability,
  dir,
  execname,
  makeHostPolicy,
  makePodPolicy,
  path as pathM,
  pattern,
  protocol,
  address,
  srcDir,
  srcPath,
  type RuleSpec,
} from '../decide/rule-set-builder.js';

const EVERY_FIELD = path.join(COMPILER_FIXTURES, 'valid', 'every-field.yaml');
const LINE = 42;
const FILE = 'sample.yaml';
const P = Operation.Process;

function at(line: number, pointer: string): SourceLocation {
  return { file: FILE, line, column: 3, pointer };
}

/** A rule of the given path, protocol or capability form, or of an option on a file path rule. */
function ruleSpecFor(form: string): RuleSpec | undefined {
  const base = { action: Action.Block, line: LINE } as const;
  const kinds: Record<string, RuleSpec> = {
    'process.matchPaths.path': { ...base, operation: P, matcher: pathM('/usr/bin/x') },
    'process.matchPaths.execname': { ...base, operation: P, matcher: execname('nc') },
    'process.matchDirectories': { ...base, operation: P, matcher: dir('/opt/') },
    'process.matchDirectories.recursive': { ...base, operation: P, matcher: dir('/opt/', true) },
    'process.matchPatterns': { ...base, operation: P, matcher: pattern('/opt/*.sh') },
    'file.matchPaths': { ...base, matcher: pathM('/etc/x') },
    'file.matchDirectories': { ...base, matcher: dir('/etc/x/') },
    'file.matchDirectories.recursive': { ...base, matcher: dir('/etc/x/', true) },
    'file.matchPatterns': { ...base, matcher: pattern('/etc/*.conf') },
    'capabilities.matchCapabilities': { ...base, matcher: capability('net_raw') },
    'fromSource.path': { ...base, matcher: pathM('/etc/x'), fromSource: [srcPath('/bin/cat')] },
    'fromSource.dir': { ...base, matcher: pathM('/etc/x'), fromSource: [srcDir('/usr/bin/')] },
    'fromSource.dir.recursive': { ...base, matcher: pathM('/etc/x'), fromSource: [srcDir('/usr/', true)] },
    readOnly: { ...base, matcher: pathM('/etc/x'), readOnly: true },
    ownerOnly: { ...base, matcher: pathM('/etc/x'), ownerOnly: true },
    pts: { ...base, matcher: pathM('/etc/x'), pts: true },
    allowedArgs: { ...base, operation: P, matcher: pathM('/usr/bin/x'), allowedArgs: ['-V'] },
    'action.Allow': { action: Action.Allow, line: LINE, matcher: pathM('/etc/x') },
    'network.matchAddresses': { ...base, matcher: address('169.254.169.254/32', [80], 'tcp') },
    'network.fromSource': { ...base, matcher: protocol('tcp'), fromSource: [srcPath('/usr/bin/wget')] },
    'network.pts': { ...base, matcher: protocol('tcp'), pts: true },
    'path.procSys': { ...base, matcher: pathM('/proc/sys/kernel/yama/ptrace_scope') },
    'path.dev': { ...base, operation: P, matcher: dir('/dev/shm/') },
  };
  const p = /^network\.matchProtocols\.(.+)$/.exec(form)?.[1];
  if (p !== undefined) return { ...base, matcher: protocol(p) };
  return kinds[form];
}

/** A policy of `kind` holding one rule of `form` at line LINE. */
function samplePolicy(form: string, host: boolean): PolicyIR {
  const spec = ruleSpecFor(form);
  const policy = host
    ? makeHostPolicy('sample', spec === undefined ? [] : [spec])
    : makePodPolicy('sample', spec === undefined ? [] : [spec]);
  const rules = policy.rules.map((r) => ({ ...r, location: { ...r.location, file: FILE } }));
  const out: PolicyIR = { ...policy, rules, location: at(1, '') };
  if (form === 'syscalls.matchSyscalls' || form === 'syscalls.matchPaths' || form === 'syscalls.uncovered') {
    out.syscallRules = [
      {
        // getcwd: a call no LSM hook covers, under Block (syscalls.uncovered).
        syscalls: [form === 'syscalls.uncovered' ? 'getcwd' : 'unlink'],
        ...(form === 'syscalls.matchPaths' ? { path: '/etc/' } : {}),
        recursive: false,
        fromSource: [],
        action: form === 'syscalls.uncovered' ? Action.Block : Action.Audit,
        severity: 1,
        tags: [],
        message: '',
        location: at(LINE, `/spec/syscalls/${form.slice(9)}/0`),
      },
    ];
  }
  if (form === 'presets')
    out.presets = [
      {
        name: 'anonMapExec',
        action: Action.Block,
        severity: 1,
        tags: [],
        message: '',
        location: at(LINE, '/spec/presets/0'),
      },
    ];
  if (form === 'presets.filelessExec')
    out.presets = [
      {
        name: 'filelessExec',
        action: Action.Block,
        severity: 1,
        tags: [],
        message: '',
        location: at(LINE, '/spec/presets/0'),
      },
    ];
  if (form === 'network.matchDNSQueries') {
    out.dnsQueryRules = [
      {
        domain: 'example.com',
        fromSource: [],
        action: Action.Block,
        location: at(LINE, '/spec/network/matchDNSQueries/0'),
      },
    ];
  }
  if (form === 'device.matchDevice') {
    out.deviceRules = [
      { deviceClass: 'MASS-STORAGE', action: Action.Block, location: at(LINE, '/spec/device/matchDevice/0') },
    ];
  }
  return out;
}

describe('enforcement table', () => {
  it('has one row per form, and a row for every protocol of the schema', () => {
    const forms = ENFORCEMENT_TABLE.map((r) => r.form);
    assert.equal(new Set(forms).size, forms.length);
    for (const p of PROTOCOL_NAMES) assert.ok(forms.includes(`network.matchProtocols.${p}`), p);
  });

  it('knows every form of a policy that uses every field of the schema', () => {
    const lint = lintTexts([{ file: 'every-field.yaml', text: readFileSync(EVERY_FIELD, 'utf8') }]);
    const forms = new Set(lint.ruleSet.policies.flatMap((p) => listRuleEntries(p).flatMap((e) => e.forms)));
    assert.ok(forms.size >= 15, [...forms].join(', '));
    const known = new Set(ENFORCEMENT_TABLE.map((r) => r.form));
    assert.deepEqual(
      [...forms].filter((f) => !known.has(f)),
      [],
    );
  });

  it('every backend gap names a code of its backend, every data-plane cell none', () => {
    const codes = new Map<string, unknown>(BACKEND_CODES.map((c) => [c.code, c]));
    for (const row of ENFORCEMENT_TABLE) {
      for (const t of ENFORCEMENT_TARGETS) {
        const cell = row.targets[t.target];
        const backend = t.target === EnforcementTarget.Apparmor || t.target === EnforcementTarget.Selinux;
        if (cell.level === EnforcementLevel.Enforced || !backend) {
          assert.equal(cell.backend, undefined, `${row.form} on ${t.target}`);
          continue;
        }
        assert.ok(cell.backend !== undefined, `${row.form} on ${t.target} needs a backend code`);
        assert.ok(codes.has(cell.backend.code), cell.backend.code);
        assert.match(cell.backend.code, t.target === EnforcementTarget.Apparmor ? /^RT40/ : /^RT41/);
        assert.ok((cell.reason ?? '').length > 5, `${row.form} on ${t.target} says why`);
      }
    }
  });

  it('states what the code does today for a few facts the issue names', () => {
    const level = (form: string, target: EnforcementTarget) => getEnforcementCell(form, target).level;
    const NE = EnforcementLevel.NotEnforced;
    for (const form of ['capabilities.matchCapabilities', 'network.matchProtocols.sctp'])
      assert.equal(level(form, EnforcementTarget.Fanotify), NE, form);
    // The fanotify target includes the cgroup network plane (enforcer/network/).
    for (const form of [
      'network.matchProtocols.tcp',
      'network.matchProtocols.icmp',
      'network.matchAddresses',
      // The cgroup programs name the acting executable and read its terminal (docs/network.md).
      'network.fromSource',
      'network.pts',
    ])
      assert.equal(level(form, EnforcementTarget.Fanotify), EnforcementLevel.Enforced, form);
    // raw and all name packet sockets too, which cgroup sock_create never sees: partly, so not enforced.
    for (const form of ['network.matchProtocols.raw', 'network.matchProtocols.all']) {
      const cell = getEnforcementCell(form, EnforcementTarget.Fanotify);
      assert.equal(cell.level, NE, form);
      assert.match(cell.reason ?? '', /^partly: .*packet sockets/, form);
    }
    // BPF-LSM reads the destination in its socket_connect and socket_sendmsg hooks (docs/bpf-lsm.md).
    assert.equal(level('network.matchAddresses', EnforcementTarget.BpfLsm), EnforcementLevel.Enforced);
    // System call rules are audited on the fanotify plane (enforcer/syscalls/), never denied; on BPF-LSM a
    // Block on a call an LSM hook covers is denied (a path rule decided in the hook on the object the kernel acts
    // on), other calls audited; filelessExec is enforced on both (the process is killed at sched_process_exec);
    // the other presets nowhere.
    for (const form of ['syscalls.matchSyscalls', 'syscalls.matchPaths', 'syscalls.uncovered'])
      assert.equal(level(form, EnforcementTarget.Fanotify), EnforcementLevel.AuditedOnly, form);
    for (const form of ['syscalls.matchSyscalls', 'syscalls.matchPaths'])
      assert.equal(level(form, EnforcementTarget.BpfLsm), EnforcementLevel.Enforced, form);
    assert.equal(level('syscalls.uncovered', EnforcementTarget.BpfLsm), EnforcementLevel.AuditedOnly);
    for (const target of [EnforcementTarget.Fanotify, EnforcementTarget.BpfLsm]) {
      assert.equal(level('presets.filelessExec', target), EnforcementLevel.Enforced);
      assert.equal(level('presets', target), NE);
    }
    // The fanotify helper marks the workloads' mounts only: not procfs, sysfs or /dev.
    assert.equal(level('path.procSys', EnforcementTarget.Fanotify), NE);
    assert.equal(level('path.dev', EnforcementTarget.Fanotify), NE);
    assert.equal(level('path.procSys', EnforcementTarget.BpfLsm), EnforcementLevel.Enforced);
    for (const t of ENFORCEMENT_TARGETS) assert.equal(level('presets', t.target), NE);
    for (const t of [EnforcementTarget.Apparmor, EnforcementTarget.Selinux])
      assert.equal(level('syscalls.matchPaths', t), NE);
    assert.equal(level('network.matchProtocols.tcp', EnforcementTarget.BpfLsm), EnforcementLevel.Enforced);
    assert.equal(level('network.matchProtocols.sctp', EnforcementTarget.BpfLsm), NE);
    assert.equal(level('ownerOnly', EnforcementTarget.Selinux), NE);
    assert.equal(level('unknown.form', EnforcementTarget.BpfLsm), NE);
  });

  it('the weaker of two levels', () => {
    assert.equal(weakerLevel('enforced', 'audited-only'), 'audited-only');
    assert.equal(weakerLevel('not-enforced', 'audited-only'), 'not-enforced');
    assert.equal(weakerLevel('enforced', 'enforced'), 'enforced');
  });

  it('parses --require-enforced lists and refuses unknown targets', () => {
    assert.deepEqual(parseEnforcementTargets('bpf-lsm, fanotify,bpf-lsm'), ['bpf-lsm', 'fanotify']);
    assert.throws(() => parseEnforcementTargets('bpf'), /unknown target "bpf"/);
    assert.throws(() => parseEnforcementTargets(','), /at least one/);
    assert.equal(findEnforcementTarget('selinux'), 'selinux');
  });
});

describe('the backends warn for a rule form iff the table says they do not enforce it', () => {
  const backends = [
    {
      target: EnforcementTarget.Apparmor,
      host: false,
      emit: emitApparmorProfiles,
      artifact: /^apparmor\/rtctl-/,
    },
    { target: EnforcementTarget.Selinux, host: true, emit: emitSelinuxModules, artifact: /\.cil$/ },
  ] as const;
  for (const b of backends) {
    for (const row of ENFORCEMENT_TABLE) {
      const cell = row.targets[b.target];
      it(`${b.target}: ${row.form} is ${cell.level}`, () => {
        const policy = samplePolicy(row.form, b.host);
        const out = b.emit({ ruleSet: { policies: [policy] }, documents: [] });
        const codes = out.diagnostics.filter((d) => d.start?.line === LINE).map((d) => d.code);
        const text = out.artifacts
          .filter((a) => b.artifact.test(a.path))
          .map((a) => String(a.content))
          .join('\n');
        const written = text.includes(`${FILE}:${LINE}`);
        if (cell.level === EnforcementLevel.Enforced) {
          assert.deepEqual(codes, [], out.diagnostics.map((d) => d.message).join('\n'));
          if (ruleSpecFor(row.form) !== undefined) assert.ok(written, `the rule is written:\n${text}`);
          return;
        }
        assert.deepEqual(codes, [cell.backend?.code]);
        const message = out.diagnostics.find((d) => d.start?.line === LINE)?.message ?? '';
        assert.ok(message.includes(row.title), message);
        if (ruleSpecFor(row.form) === undefined) return;
        // Written without the condition, or written as it is and read narrower by the target.
        const kept =
          cell.backend?.effect === BackendEffect.ConditionDropped ||
          cell.backend?.effect === BackendEffect.Narrowed;
        assert.equal(written, kept, `${cell.backend?.effect ?? ''}:\n${text}`);
      });
    }
  }
});

describe('summarizeEnforcement', () => {
  const lint = lintTexts([{ file: 'every-field.yaml', text: readFileSync(EVERY_FIELD, 'utf8') }]);
  const pod = lint.ruleSet.policies.find((p) => p.name === 'every-field');
  const host = lint.ruleSet.policies.find((p) => p.name === 'every-host-field');

  it('fanotify: path, network and filelessExec rules enforced; syscalls audited; capabilities not', () => {
    assert.ok(pod !== undefined);
    const s = summarizeEnforcement(pod, EnforcementTarget.Fanotify);
    assert.equal(s.carried, true);
    assert.equal(s.level, EnforcementLevel.NotEnforced);
    assert.ok(s.enforced.includes('/spec/file/matchPaths/0'));
    const missing = s.notEnforced.map((g) => g.pointer);
    // Network rules by protocol are enforced by the cgroup network programs (enforcer/network/), but not for
    // packet sockets, which a raw rule names too: that rule is only partly enforced, and so shown as not.
    const raw = s.notEnforced.find((g) => g.pointer === '/spec/network/matchProtocols/0');
    assert.deepEqual(
      raw?.gaps.map((g) => g.form),
      ['network.matchProtocols.raw'],
    );
    for (const p of ['/spec/capabilities/matchCapabilities/0', '/spec/process/matchPaths/0'])
      assert.ok(missing.includes(p), `${p} in ${missing.join(', ')}`);
    // The system call plane: syscalls rules audited, filelessExec enforced.
    assert.ok(s.enforced.includes('/spec/presets/0'));
    const args = s.notEnforced.find((g) => g.pointer === '/spec/process/matchPaths/0');
    assert.deepEqual(
      args?.gaps.map((g) => g.form),
      ['allowedArgs'],
    );
    assert.ok((args?.line ?? 0) > 1);
    assert.deepEqual(
      s.auditedOnly.map((g) => [g.pointer, g.gaps.map((x) => x.form)]),
      [
        ['/spec/syscalls/matchSyscalls/0', ['syscalls.matchSyscalls']],
        ['/spec/syscalls/matchPaths/0', ['syscalls.matchPaths']],
      ],
    );
    assert.equal(
      s.enforced.length + s.notEnforced.length + s.auditedOnly.length,
      listRuleEntries(pod).length,
    );
  });

  it('bpf-lsm enforces network and capability rules', () => {
    assert.ok(pod !== undefined);
    const s = summarizeEnforcement(pod, EnforcementTarget.BpfLsm);
    for (const p of ['/spec/network/matchProtocols/0', '/spec/capabilities/matchCapabilities/1'])
      assert.ok(s.enforced.includes(p), p);
  });

  it('a target that does not carry the kind enforces none of its rules', () => {
    assert.ok(host !== undefined);
    const s = summarizeEnforcement(host, EnforcementTarget.Apparmor);
    assert.equal(s.carried, false);
    assert.equal(s.enforced.length, 0);
    assert.equal(s.notEnforced.length, listRuleEntries(host).length);
  });
});

describe('lint findings from the table', () => {
  const text = [
    'apiVersion: security.runtime.com/v1',
    'kind: RuntimePolicy',
    'metadata: {name: p, namespace: default}',
    'spec:',
    '  selector: {matchLabels: {app: web}}',
    '  network:',
    '    matchProtocols:',
    '      - protocol: sctp',
    '      - {protocol: raw, fromSource: [{path: /usr/bin/curl}]}',
    '  file:',
    '    matchPaths:',
    '      - path: /etc/x',
    '  action: Block',
    '',
  ].join('\n');
  const lint = (requireEnforced?: EnforcementTarget[]) =>
    lintTexts(
      [{ file: 'p.yaml', text }],
      requireEnforced === undefined ? {} : { requireEnforced },
    ).diagnostics.map((d) => `${d.severity} ${d.code} ${d.start?.line ?? 0}`);

  it('RT3016 for what no target enforces, RT3018 naming the targets', () => {
    assert.deepEqual(lint(), ['warning RT3016 8', 'warning RT3018 9']);
    const d = lintTexts([{ file: 'p.yaml', text }]).diagnostics.find((x) => x.code === 'RT3018');
    assert.match(
      d?.message ?? '',
      /not enforced on fanotify \(protocol raw\), apparmor \(protocol raw\); enforced on bpf-lsm$/,
    );
  });

  it('--require-enforced turns the gaps of the named targets into errors', () => {
    assert.deepEqual(lint([EnforcementTarget.BpfLsm]), ['error RT3016 8', 'warning RT3018 9']);
    assert.deepEqual(lint([EnforcementTarget.Fanotify]), ['error RT3016 8', 'error RT3018 9']);
    assert.deepEqual(lint([EnforcementTarget.Selinux]), [
      'error RT3018 2',
      'error RT3016 8',
      'warning RT3018 9',
    ]);
  });

  it('an empty fromSource lowers as no source restriction (RT3017)', () => {
    const withEmpty = text.replace('      - path: /etc/x', '      - path: /etc/x\n        fromSource:');
    const a = lintTexts([{ file: 'p.yaml', text: withEmpty }]);
    const b = lintTexts([{ file: 'p.yaml', text: text.replace('/etc/x', '/etc/x\n        fromSource: []') }]);
    assert.ok(a.diagnostics.some((d) => d.code === 'RT3017'));
    assert.ok(b.diagnostics.some((d) => d.code === 'RT3017'));
    assert.ok(!a.diagnostics.some((d) => d.severity === 'error'));
    for (const r of [a, b]) {
      const rule = r.ruleSet.policies[0]?.rules.find((x) => x.operation === Operation.File);
      assert.deepEqual(rule?.fromSource, []);
    }
  });
});

describe('paths on pseudo file systems the fanotify plane does not mark', () => {
  const cases: Array<{ rule: string; forms: string[] }> = [
    { rule: 'file:\n    matchPaths:\n      - path: /proc/kcore', forms: ['path.procSys'] },
    { rule: 'file:\n    matchDirectories:\n      - dir: /sys/kernel/', forms: ['path.procSys'] },
    { rule: 'file:\n    matchPatterns:\n      - pattern: /proc/*/environ', forms: ['path.procSys'] },
    { rule: 'process:\n    matchDirectories:\n      - dir: /dev/shm/', forms: ['path.dev'] },
    // A pattern whose fixed part is outside them, and names that only begin alike, are not flagged.
    { rule: 'file:\n    matchPatterns:\n      - pattern: /**/environ', forms: [] },
    { rule: 'file:\n    matchPaths:\n      - path: /devices/x', forms: [] },
    { rule: 'file:\n    matchPaths:\n      - path: /procfs.conf', forms: [] },
  ];
  for (const c of cases) {
    it(`${c.rule.split('\n').at(-1)?.trim() ?? ''} → ${c.forms.join(', ') || 'no pseudo-file-system form'}; lint names fanotify`, () => {
      const text = `apiVersion: security.runtime.com/v1\nkind: RuntimePolicy\nmetadata: {name: p, namespace: ns}\nspec:\n  selector: {matchLabels: {app: a}}\n  ${c.rule}\n  action: Block\n`;
      const lint = lintTexts([{ file: 'p.yaml', text }]);
      const policy = lint.ruleSet.policies[0];
      assert.ok(policy);
      const forms = listRuleEntries(policy).flatMap((e) => e.forms);
      assert.deepEqual(
        forms.filter((f) => f.startsWith('path.')),
        c.forms,
      );
      const warned = lint.diagnostics.some((d) => d.code === 'RT3018' && d.message.includes('fanotify'));
      assert.equal(warned, c.forms.length > 0, lint.diagnostics.map((d) => d.message).join('\n'));
    });
  }
});
