// The coverage table of the system call plane's deny part (compiler/enforcement/syscall-coverage.ts) against the
// places that must agree with it: the schema's call names, the RTS_HOOK_* bits of the C header, the loader's hook
// list and the BPF programs (read from the sources), docs/syscalls.md; the rule forms and lint findings it drives.
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  getSyscallDenyHookMask,
  getSyscallDenyHooks,
  isSyscallDecidedOnObject,
  listCoveredSyscalls,
  listSyscallCoverageByHook,
  listUncoveredSyscalls,
  SYSCALL_DENY_HOOKS,
  SYSCALL_OBJECT_HOOKS,
} from '../../../compiler/enforcement/syscall-coverage.js';
import { listSyscallRuleForms } from '../../../compiler/enforcement/rule-forms.js';
import { Action, type SyscallRule } from '../../../compiler/ir/rule-set.js';
import { lintTexts } from '../../../compiler/lint.js';
import { SYSCALL_NAMES } from '../../../compiler/schema/syscall-names.js';
import { COMPAT_SYSCALLS, getPathArguments } from '../../../enforcer/syscalls/syscall-arguments.js';
import { REPO_ROOT } from '../../support/paths.js';
import { requirePrereqs } from '../../support/prereq.js';

const read = (path: string): string => readFileSync(join(REPO_ROOT, path), 'utf8');

function rule(syscalls: string[], action: Action): SyscallRule {
  return {
    syscalls,
    recursive: false,
    fromSource: [],
    action,
    severity: 1,
    tags: [],
    message: '',
    location: { file: 'f.yaml', line: 1, column: 1, pointer: '/spec/syscalls/matchSyscalls/0' },
  };
}

describe('system call deny coverage (syscall-coverage.ts)', () => {
  it('names only calls the schema lists, each with at least one hook', () => {
    const names = new Set<string>(SYSCALL_NAMES);
    for (const call of listCoveredSyscalls()) {
      assert.ok(names.has(call), call);
      assert.ok((getSyscallDenyHooks(call) ?? []).length > 0, call);
    }
    assert.equal(getSyscallDenyHooks('getcwd'), undefined);
    assert.equal(getSyscallDenyHooks('constructor'), undefined, 'no prototype keys');
    assert.deepEqual(listUncoveredSyscalls(['unlink', 'getcwd', 'mkdir', 'read']), ['getcwd', 'read']);
    assert.equal(getSyscallDenyHookMask('unlinkat'), (1 << 1) | (1 << 2));
    assert.equal(getSyscallDenyHookMask('read'), 0);
  });

  it('hook bits are the C header’s RTS_HOOK_* and the loader’s and programs’ hook names', () => {
    const header = read('enforcer/syscalls/rtctl-sys-maps.h');
    const bits = [...header.matchAll(/#define RTS_HOOK_([A-Z_]+) (\d+)/g)].map((m) => Number(m[2]));
    assert.deepEqual(
      bits,
      SYSCALL_DENY_HOOKS.map((_, i) => i),
    );
    assert.match(header, new RegExp(`#define RTS_HOOKS ${SYSCALL_DENY_HOOKS.length}\\b`));
    const loader = read('enforcer/syscalls/rtctl-sys-loader.c');
    const list = /lsm_hooks\[RTS_HOOKS\] = \{([^}]*)\}/.exec(loader)?.[1] ?? '';
    assert.deepEqual(
      [...list.matchAll(/"([a-z_]+)"/g)].map((m) => m[1]),
      [...SYSCALL_DENY_HOOKS],
    );
    // One program per hook, in bit order: through a macro (RTS_LSM: deny only; RTS_LSM_ENTRY, RTS_LSM_PATH: the
    // object hooks) or written out (SEC("lsm/<hook>") and the hook's bit in its body).
    const bpf = read('enforcer/syscalls/rtctl-sys.bpf.c');
    const programs = [
      ...bpf.matchAll(
        /^(?:RTS_LSM(?:_ENTRY|_PATH)?\(([a-z_]+), RTS_HOOK_([A-Z_]+)\)|SEC\("lsm\/([a-z_]+)"\)\nint BPF_PROG\(rts_lsm_\3,[^{]*\{[^}]*?RTS_HOOK_([A-Z_]+))/gm,
      ),
    ].map((m) => [m[1] ?? m[3], m[2] ?? m[4]]);
    assert.deepEqual(
      programs.map((m) => m[0]),
      [...SYSCALL_DENY_HOOKS],
    );
    for (const [hook, bit] of programs)
      assert.equal(bit, hook?.toUpperCase().replace('BPRM_CHECK_SECURITY', 'BPRM_CHECK'));
  });

  it('the object hooks are the C header’s RTS_OBJECT_HOOKS, and every covered call naming a path reaches only them', () => {
    const header = read('enforcer/syscalls/rtctl-sys-maps.h');
    const macro = /#define RTS_OBJECT_HOOKS([^]*?)\n\n/.exec(header)?.[1] ?? '';
    assert.deepEqual(
      [...macro.matchAll(/RTS_HOOK_([A-Z_]+)/g)].map((m) => m[1]),
      SYSCALL_OBJECT_HOOKS.map((h) => h.toUpperCase().replace('BPRM_CHECK_SECURITY', 'BPRM_CHECK')),
    );
    // So a `matchPaths` rule on a covered call is decided on the object wherever it can match at all (a call
    // naming no path never matches one).
    const withPath = listCoveredSyscalls().filter((c) => getPathArguments(c)[0] >= 0);
    for (const call of withPath) assert.ok(isSyscallDecidedOnObject(call), call);
    assert.equal(isSyscallDecidedOnObject('kill'), false);
    assert.equal(isSyscallDecidedOnObject('getcwd'), false);
    // docs/syscalls.md lists them (its lines wrapped).
    const doc = read('docs/syscalls.md').replace(/\s+/g, ' ');
    assert.ok(
      doc.includes(`decided on the object: ${withPath.map((c) => `\`${c}\``).join(', ')}.`),
      withPath.join(', '),
    );
  });

  it('the 32-bit translation table is the kernel headers’ i386 numbering and has every covered call', function () {
    const header = '/usr/include/x86_64-linux-gnu/asm/unistd_32.h';
    requirePrereqs(this, [[existsSync(header), 'the i386 call numbers (linux-libc-dev, with libc6-dev)']]);
    const byNumber = new Map<number, string>();
    const byName = new Map<string, number>();
    for (const m of readFileSync(header, 'utf8').matchAll(/^#define __NR_(\w+) (\d+)$/gm)) {
      byNumber.set(Number(m[2]), m[1] ?? '');
      byName.set(m[1] ?? '', Number(m[2]));
    }
    for (const [i386, name] of COMPAT_SYSCALLS) {
      const named = byNumber.get(i386) ?? '';
      // The 32-bit-uid variants (chown32) and the 64-bit-time one (clock_settime64) are the same call.
      assert.ok(
        named === name || named === `${name}32` || named === `${name}64`,
        `${i386}: ${named} is not ${name}`,
      );
    }
    const translated = new Set(COMPAT_SYSCALLS.map(([, name]) => name));
    for (const call of listCoveredSyscalls())
      if (byName.has(call))
        assert.ok(translated.has(call), `${call} (i386 ${byName.get(call)}) is not translated`);
  });

  it('docs/syscalls.md shows the table as it is', () => {
    const doc = read('docs/syscalls.md');
    for (const { hook, calls } of listSyscallCoverageByHook())
      assert.ok(doc.includes(`| \`${hook}\` | ${calls.map((c) => `\`${c}\``).join(', ')} |`), hook);
  });

  it('a Block rule naming an uncovered call has the syscalls.uncovered form; Audit rules and covered calls do not', () => {
    assert.deepEqual(listSyscallRuleForms(rule(['unlink', 'getcwd'], Action.Block)), [
      'syscalls.matchSyscalls',
      'syscalls.uncovered',
    ]);
    assert.deepEqual(listSyscallRuleForms(rule(['unlink', 'mkdir'], Action.Block)), [
      'syscalls.matchSyscalls',
    ]);
    assert.deepEqual(listSyscallRuleForms(rule(['getcwd'], Action.Audit)), ['syscalls.matchSyscalls']);
  });

  it('lint: a Block on an uncovered call is audited only on bpf-lsm; one on covered calls is enforced there', () => {
    const policy = (calls: string): string => `apiVersion: security.runtime.com/v1
kind: RuntimePolicy
metadata:
  name: p
  namespace: default
spec:
  selector:
    matchLabels: {app: web}
  syscalls:
    matchSyscalls:
      - syscall: [${calls}]
  action: Block
`;
    const findings = (calls: string): string[] =>
      lintTexts([{ file: 'p.yaml', text: policy(calls) }])
        .diagnostics.filter((d) => d.code === 'RT3018')
        .map((d) => d.message);
    const uncovered = findings('unlink, getcwd');
    assert.equal(uncovered.length, 1, uncovered.join('\n'));
    // The message is cut to its shortest form when the reasons do not fit: the targets are named either way.
    assert.match(uncovered[0] ?? '', /(audited only|not fully enforced) on [^;]*bpf-lsm/);
    const covered = findings('unlink, mkdir');
    assert.equal(covered.length, 1, covered.join('\n'));
    assert.doesNotMatch(covered[0] ?? '', /(audited only|not fully enforced) on [^;]*bpf-lsm/);
    assert.match(covered[0] ?? '', /enforced on bpf-lsm/);
  });
});
