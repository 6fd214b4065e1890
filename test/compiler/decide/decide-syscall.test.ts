// The oracle for system calls and filelessExec (compiler/decide/decide-syscall.ts): precedence by example, order
// independence, and agreement with the records-level decision the system call plane uses
// (compiler/rule-table/syscall-records.ts) on generated rule sets and calls (fixed seed). The call numbers and
// path arguments of the plane against the kernel's header when it is installed.
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import fc from 'fast-check';
import '../../support/property-seed.js';
import {
  decideFilelessExec,
  decideSyscall,
  findSyscallWinner,
  type SyscallRequest,
} from '../../../compiler/decide/decide-syscall.js';
import type { Workload } from '../../../compiler/decide/decision-input.js';
import {
  Action,
  type PolicyIR,
  type PresetRule,
  type RuleSet,
  type SourceMatcher,
  type SyscallRule,
} from '../../../compiler/ir/rule-set.js';
import { buildRuleTableImage } from '../../../compiler/rule-table/build-rule-table.js';
import { findPresetRecord, findSyscallRecord } from '../../../compiler/rule-table/syscall-records.js';
import { SYSCALL_NAMES } from '../../../compiler/schema/syscall-names.js';
import { getPathArguments, getSyscallNumber } from '../../../enforcer/syscalls/syscall-arguments.js';
import { makePodPolicy } from './rule-set-builder.js';

const pod: Workload = { kind: 'container', namespace: 'default', labels: { app: 'web' }, nodeLabels: {} };

function rule(
  syscalls: string[],
  o: {
    path?: string | undefined;
    recursive?: boolean;
    fromSource?: SourceMatcher[];
    action?: Action;
    line?: number;
  } = {},
): SyscallRule {
  const r: SyscallRule = {
    syscalls,
    recursive: o.recursive ?? false,
    fromSource: o.fromSource ?? [],
    action: o.action ?? Action.Audit,
    severity: 5,
    tags: [],
    message: '',
    location: {
      file: 's.yaml',
      line: o.line ?? 1,
      column: 1,
      pointer: `/spec/syscalls/matchPaths/${o.line ?? 1}`,
    },
  };
  if (o.path !== undefined) r.path = o.path;
  return r;
}

function policy(name: string, rules: SyscallRule[], presets: PresetRule[] = [], app = 'web'): PolicyIR {
  return { ...makePodPolicy(name, [], { labels: { app } }), syscallRules: rules, presets };
}

const decide = (ruleSet: RuleSet, request: SyscallRequest) => decideSyscall(ruleSet, pod, request);

describe('decideSyscall', () => {
  it('matches by name, path (file, directory, recursive) and source', () => {
    const set = {
      policies: [
        policy('p', [
          rule(['unlink'], { path: '/tmp/a' }),
          rule(['mkdir'], { path: '/var/', recursive: false }),
          rule(['rmdir'], { path: '/var/', recursive: true }),
          rule(['chmod'], { fromSource: [{ kind: 'directory', dir: '/bin/', recursive: false }] }),
        ]),
      ],
    };
    assert.equal(decide(set, { syscall: 'unlink', path: '/tmp/a' }).alert?.Operation, 'Syscall');
    assert.equal(decide(set, { syscall: 'unlink', path: '/tmp/./a' }).alert?.PolicyName, 'p');
    assert.equal(decide(set, { syscall: 'unlink', path: '/tmp/b' }).alert, null);
    assert.equal(decide(set, { syscall: 'unlink', path: 'a' }).alert, null, 'relative: no path rule matches');
    assert.equal(decide(set, { syscall: 'unlink' }).alert, null);
    assert.notEqual(decide(set, { syscall: 'mkdir', path: '/var/x' }).alert, null);
    assert.equal(decide(set, { syscall: 'mkdir', path: '/var/x/y' }).alert, null);
    assert.notEqual(decide(set, { syscall: 'rmdir', path: '/var/x/y' }).alert, null);
    assert.equal(
      decide(set, { syscall: 'rmdir', path: '/var/' }).alert,
      null,
      'the directory itself is not in it',
    );
    assert.notEqual(decide(set, { syscall: 'chmod', executable: '/bin/chmod' }).alert, null);
    assert.equal(decide(set, { syscall: 'chmod', executable: '/bin/x/chmod' }).alert, null);
    assert.equal(decide(set, { syscall: 'chmod' }).alert, null, 'unknown executable: no source matches');
  });

  it('the most specific rule wins, then Block > Audit > Allow; Block denies with EACCES', () => {
    const src: SourceMatcher[] = [{ kind: 'path', path: '/bin/rm' }];
    const set = {
      policies: [
        policy('any', [rule(['unlink'], { action: Action.Block, line: 1 })]),
        policy('dir', [rule(['unlink'], { path: '/tmp/', recursive: true, action: Action.Audit, line: 2 })]),
        policy('deeper', [rule(['unlink'], { path: '/tmp/x/', action: Action.Allow, line: 3 })]),
        policy('file', [rule(['unlink'], { path: '/tmp/x/f', action: Action.Audit, line: 4 })]),
        policy('file-src', [
          rule(['unlink'], { path: '/tmp/x/f', fromSource: src, action: Action.Allow, line: 5 }),
        ]),
      ],
    };
    const who = (r: SyscallRequest) => findSyscallWinner(set, pod, r)?.policy.name;
    assert.equal(who({ syscall: 'unlink', path: '/etc/x' }), 'any');
    assert.equal(decide(set, { syscall: 'unlink', path: '/etc/x' }).errno, 'EACCES');
    assert.equal(who({ syscall: 'unlink', path: '/tmp/y/z' }), 'dir');
    assert.equal(who({ syscall: 'unlink', path: '/tmp/x/g' }), 'deeper');
    assert.equal(decide(set, { syscall: 'unlink', path: '/tmp/x/g' }).alert, null, 'Allow: no alert');
    assert.equal(who({ syscall: 'unlink', path: '/tmp/x/f' }), 'file');
    assert.equal(who({ syscall: 'unlink', path: '/tmp/x/f', executable: '/bin/rm' }), 'file-src');
    const tie = {
      policies: [
        policy('a-audit', [rule(['unlink'], { action: Action.Audit })]),
        policy('b-block', [rule(['unlink'], { action: Action.Block })]),
      ],
    };
    assert.equal(decideSyscall(tie, pod, { syscall: 'unlink' }).alert?.PolicyName, 'b-block');
  });

  it('only the policies that select the workload take part', () => {
    const set = { policies: [policy('db', [rule(['unlink'])], [], 'db')] };
    assert.equal(decide(set, { syscall: 'unlink' }).alert, null);
  });
});

describe('decideFilelessExec', () => {
  const preset = (action: Action): PresetRule => ({
    name: 'filelessExec',
    action,
    severity: 7,
    tags: ['fileless'],
    message: 'no',
    location: { file: 'p.yaml', line: 3, column: 3, pointer: '/spec/presets/0' },
  });
  it('Block over Audit over Allow, with the policy severity, tags and message', () => {
    const set = {
      policies: [policy('a', [], [preset(Action.Audit)]), policy('b', [], [preset(Action.Block)])],
    };
    const d = decideFilelessExec(set, pod);
    assert.equal(d.allowed, false);
    assert.deepEqual(d.alert, {
      PolicyName: 'b',
      Type: 'MatchedPolicy',
      Operation: 'Process',
      Action: 'Block',
      Result: 'Permission denied',
      Severity: '7',
      Tags: 'fileless',
      Message: 'no',
    });
    assert.equal(
      decideFilelessExec({ policies: [policy('c', [], [preset(Action.Allow)])] }, pod).alert,
      null,
    );
    assert.equal(decideFilelessExec({ policies: [policy('d', [])] }, pod).alert, null);
  });
});

describe('the plane’s records-level decision agrees with the oracle (generated, fixed seed)', () => {
  const names = ['unlink', 'unlinkat', 'mkdir', 'rmdir'];
  const paths = ['/tmp/a', '/tmp/b/c', '/var/x', '/tmp/'];
  const arbSource: fc.Arbitrary<SourceMatcher> = fc.oneof(
    fc.constantFrom('/bin/rm', '/usr/bin/rm').map((p): SourceMatcher => ({ kind: 'path', path: p })),
    fc
      .record({ dir: fc.constantFrom('/bin/', '/usr/', '/usr/bin/'), recursive: fc.boolean() })
      .map((d): SourceMatcher => ({ kind: 'directory', ...d })),
  );
  const arbRule = fc
    .record({
      syscalls: fc.subarray(names, { minLength: 1 }),
      path: fc.option(fc.constantFrom('/tmp/a', '/tmp/', '/tmp/b/', '/', '/var/x'), { nil: undefined }),
      recursive: fc.boolean(),
      fromSource: fc.array(arbSource, { maxLength: 2 }),
      action: fc.constantFrom(Action.Audit, Action.Block, Action.Allow),
      line: fc.integer({ min: 1, max: 50 }),
    })
    .map((r) => rule(r.syscalls, r));
  const arbSet = fc
    .array(fc.record({ rules: fc.array(arbRule, { maxLength: 3 }), app: fc.constantFrom('web', 'db') }), {
      minLength: 1,
      maxLength: 4,
    })
    .map((ps): RuleSet => ({ policies: ps.map((p, i) => policy(`p${i}`, p.rules, [], p.app)) }));
  const arbCall = fc.record({
    syscall: fc.constantFrom(...names),
    path: fc.option(fc.constantFrom(...paths), { nil: undefined }),
    executable: fc.option(fc.constantFrom('/bin/rm', '/usr/bin/rm', '/usr/local/bin/rm'), { nil: undefined }),
  });

  it('same deciding rule, for every generated case', () => {
    fc.assert(
      fc.property(arbSet, arbCall, (set, c) => {
        const call: SyscallRequest = { syscall: c.syscall };
        if (c.path !== undefined) call.path = c.path;
        if (c.executable !== undefined) call.executable = c.executable;
        const image = buildRuleTableImage(set);
        const selected = new Set(
          image.records.policies
            .map((p, i) => (p.labels.some((l) => l.value === 'web') ? i : -1))
            .filter((i) => i >= 0),
        );
        const found = findSyscallRecord(image.records, selected, call);
        const winner = findSyscallWinner(set, pod, call);
        assert.equal(found === undefined, winner === undefined);
        if (found !== undefined && winner !== undefined) {
          assert.equal(image.records.policies[found.record.policy]?.name, winner.policy.name);
          assert.equal(found.record.pointer, winner.rule.location.pointer);
          assert.equal(found.record.line, winner.rule.location.line);
        }
        // Order independence: the same decision with the policies reversed.
        const reversed = decideSyscall({ policies: [...set.policies].reverse() }, pod, call);
        assert.deepEqual(reversed, decideSyscall(set, pod, call));
      }),
      { numRuns: 400 },
    );
  });

  it('same filelessExec decision', () => {
    const arbPresets = fc.array(
      fc.record({
        action: fc.constantFrom(Action.Audit, Action.Block, Action.Allow),
        app: fc.constantFrom('web', 'db'),
      }),
      { maxLength: 4 },
    );
    fc.assert(
      fc.property(arbPresets, (ps) => {
        const set = {
          policies: ps.map((p, i) =>
            policy(
              `f${i}`,
              [],
              [
                {
                  name: 'filelessExec',
                  action: p.action,
                  severity: i,
                  tags: [],
                  message: '',
                  location: { file: `f${i}.yaml`, line: 2, column: 3, pointer: '/spec/presets/0' },
                },
              ],
              p.app,
            ),
          ),
        };
        const image = buildRuleTableImage(set);
        const selected = new Set(
          image.records.policies
            .map((p, i) => (p.labels.some((l) => l.value === 'web') ? i : -1))
            .filter((i) => i >= 0),
        );
        const record = findPresetRecord(image.records, selected, 'filelessExec');
        const oracle = decideFilelessExec(set, pod);
        const planeAlert =
          record === undefined || record.action === 0 ? null : image.records.policies[record.policy]?.name;
        assert.equal(planeAlert ?? null, oracle.alert?.PolicyName ?? null);
      }),
      { numRuns: 200 },
    );
  });
});

describe('call numbers and path arguments of the system call plane', () => {
  it('the schema’s names are the x86-64 table in number order (the kernel header, when installed)', function () {
    assert.equal(getSyscallNumber('read'), 0);
    assert.equal(getSyscallNumber('unlink'), 87);
    assert.equal(getSyscallNumber('unlinkat'), 263);
    assert.equal(getSyscallNumber('no_such_call'), undefined);
    const header = '/usr/include/x86_64-linux-gnu/asm/unistd_64.h';
    if (!existsSync(header)) this.skip();
    const numbers = new Map<string, number>();
    for (const m of readFileSync(header, 'utf8').matchAll(/#define __NR_(\w+) (\d+)/g))
      numbers.set(m[1] ?? '', Number(m[2]));
    for (const name of SYSCALL_NAMES) assert.equal(getSyscallNumber(name), numbers.get(name), name);
  });

  it('names the path argument of the path calls, and none of the others', () => {
    assert.deepEqual(getPathArguments('unlink'), [0, -1]);
    assert.deepEqual(getPathArguments('unlinkat'), [1, 0]);
    assert.deepEqual(getPathArguments('symlinkat'), [2, 1]);
    assert.deepEqual(getPathArguments('read'), [-1, -1]);
  });
});
