// The system call plane's deny part inside the guest kernel (BPF-LSM active): the loader attaches its LSM hooks
// by trial, and a workload in its own cgroup running coreutils and a one-call helper sees Block `syscalls` rules
// deny the calls a hook covers with EACCES (`Permission denied`, the file untouched, an alert with Action Block,
// Result Permission denied), Audit rules pass with an alert, a Block on a call no hook covers pass with an audit
// alert saying it was not denied, fromSource and matchPaths decided in the kernel (relative paths named from the
// working directory or the directory fd, `.` and `..` resolved; a path too long to read reported as not
// decided), a 32-bit call, the denial outliving a restart of the control plane, and the kernel's verdicts
// against the oracle (compiler/decide/decide-syscall.ts) on generated cases with the fixed seed. Path rules are
// decided in the hook on the object the kernel acts on: a symlinked directory in the path is decided where it
// leads, a call that fails before its hook is reported and not denied, and the path-swap race (another thread
// rewriting the string between the call's entry and the kernel's read of it) never removes a blocked file.
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import path from 'node:path';
import fc from 'fast-check';
import '../../../support/property-seed.js';
import {
  getSyscallDenyHooks,
  SYSCALL_DENY_HOOKS,
} from '../../../../compiler/enforcement/syscall-coverage.js';
import { decideSyscall } from '../../../../compiler/decide/decide-syscall.js';
import type { Workload as DecisionWorkload } from '../../../../compiler/decide/decision-input.js';
import {
  Action,
  type PolicyIR,
  type SourceMatcher,
  type SyscallRule,
} from '../../../../compiler/ir/rule-set.js';
import { resolvePostures } from '../../../../compiler/model/posture.js';
import type { RuleSet } from '../../../../compiler/ir/rule-set.js';
import { buildAlertRecord } from '../../../../enforcer/alerts/alert-record.js';
import type { DataPlaneEvent } from '../../../../enforcer/data-plane.js';
import { probeKernel } from '../../../../enforcer/probe.js';
import { getSyscallNumber } from '../../../../enforcer/syscalls/syscall-arguments.js';
import { SyscallPlane } from '../../../../enforcer/syscalls/syscall-plane.js';
import { SYS_VERDICT_UNREACHED, SysVerdict } from '../../../../enforcer/syscalls/sys-map-layout.js';
import type { Workload } from '../../../../enforcer/workload.js';
import { makePodPolicy } from '../../../compiler/decide/rule-set-builder.js';
import {
  buildTable,
  compileRuleSet,
  createCgroupWorkload,
  repoRoot,
  runInCgroup,
  selectPolicyIndices,
} from './guest-support.js';

const LOADER = path.join(repoRoot, 'dist', 'native', 'syscalls', 'rtctl-sys-loader');
const OBJECT = path.join(repoRoot, 'dist', 'native', 'syscalls', 'rtctl-sys.bpf.o');
const ROOT = '/tmp/rt-sys';
const BIN = `${ROOT}/bin`;

const POLICY = `apiVersion: security.runtime.com/v1
kind: RuntimePolicy
metadata:
  name: deny-calls
  namespace: guest
spec:
  selector:
    matchLabels:
      app: demo
  syscalls:
    matchSyscalls:
      - syscall: [mkdir, mkdirat]
        action: Block
        severity: 7
      - syscall: [chmod, fchmodat]
        action: Block
      - syscall: [access]
        action: Block
      - syscall: [rename, renameat, renameat2]
        action: Audit
      - syscall: [unlink, unlinkat]
        fromSource:
          - path: ${BIN}/rm-blocked
        action: Block
    matchPaths:
      - syscall: [unlink, unlinkat]
        path: ${ROOT}/data/
        recursive: true
        action: Block
        message: no deletes under data
`;

const CONTEXT = {
  clusterName: 'guest',
  hostName: 'rtctl-guest',
  enforcer: 'BPFLSM',
  auditEnforcer: 'eBPF Monitor',
};
const WORKLOAD_INFO: Workload = {
  key: 'cg-sys',
  kind: 'container',
  pid: 0,
  cgroupPath: '',
  namespace: 'guest',
  podName: 'demo',
  podLabels: { app: 'demo' },
  containerId: 'cg-sys',
  containerName: 'demo',
  image: 'local/demo@sha256:0',
};
const DEMO: DecisionWorkload = {
  kind: 'container',
  namespace: 'guest',
  labels: { app: 'demo' },
  nodeLabels: {},
};

describe('system call plane: Block denied by BPF-LSM hooks (guest kernel)', function () {
  this.timeout(300_000);
  let plane: SyscallPlane;
  let stateDir = '';
  const pinDir = `/sys/fs/bpf/rtctl-sys-guest-${process.pid}`;
  const cg = createCgroupWorkload('cg-sys', 'sys-deny');
  const events: DataPlaneEvent[] = [];
  const verdicts: { syscall: string; path: string; verdict: number; rule: number }[] = [];
  let generation = 0;

  async function start(onString = false): Promise<SyscallPlane> {
    const p = new SyscallPlane({
      loaderPath: LOADER,
      objectPath: OBJECT,
      pinDir,
      stateDir,
      cgroupRoot: '/sys/fs/cgroup',
      onVerdict: (v) => verdicts.push(v),
      ...(onString ? { decidePathsOnString: true } : {}),
    });
    await p.start();
    void (async () => {
      for await (const e of p.events()) events.push(e);
    })();
    return p;
  }

  async function apply(ruleSet: RuleSet): Promise<void> {
    const { image, table } = buildTable(ruleSet);
    await plane.apply({
      generation: ++generation,
      table: image,
      workloads: [
        { anchor: cg.anchor, policies: selectPolicyIndices(table, DEMO), postures: resolvePostures({}) },
      ],
    });
  }

  /** Waits (bounded) for an event; undefined when none came. */
  async function waitFor(
    match: (e: DataPlaneEvent) => boolean,
    from = 0,
  ): Promise<DataPlaneEvent | undefined> {
    const until = Date.now() + 15_000;
    for (;;) {
      const found = events.slice(from).find(match);
      if (found !== undefined || Date.now() > until) return found;
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  /** Runs the one-call helper in the workload; returns the errno the call got (0: it succeeded). */
  function call(name: string, target: string, exe = `${BIN}/call`, next?: string): number {
    const nr = getSyscallNumber(name);
    assert.ok(nr !== undefined, name);
    const at = name.endsWith('at') ? '1' : '0';
    const r = runInCgroup(
      cg.cgroupPath,
      `exec ${exe} ${nr} ${at} '${target}'${next === undefined ? '' : ` ${next}`}`,
    );
    assert.equal(r.status, 0, r.stderr);
    return Number(r.stdout.trim());
  }

  before(async () => {
    stateDir = mkdtempSync('/tmp/rtctl-sys-state-');
    for (const dir of ['data/sub', 'free', 'bin']) mkdirSync(`${ROOT}/${dir}`, { recursive: true });
    execFileSync('cc', [
      '-O2',
      '-o',
      `${BIN}/call`,
      path.join(repoRoot, 'test/enforcer/syscalls/sys-call.c'),
    ]);
    copyFileSync(`${BIN}/call`, `${BIN}/call-other`);
    execFileSync('cc', [
      '-O2',
      '-pthread',
      '-o',
      `${BIN}/race`,
      path.join(repoRoot, 'test/enforcer/syscalls/sys-race.c'),
    ]);
    execFileSync('cc', [
      '-O2',
      '-o',
      `${BIN}/call-compat`,
      path.join(repoRoot, 'test/enforcer/syscalls/sys-call-compat.c'),
    ]);
    copyFileSync('/usr/bin/rm', `${BIN}/rm-blocked`);
    copyFileSync('/usr/bin/rm', `${BIN}/rm-other`);
    execFileSync('chmod', ['755', `${BIN}/call-other`, `${BIN}/rm-blocked`, `${BIN}/rm-other`]);
    plane = await start();
  });

  after(async () => {
    await plane.stop({ keepEnforcing: false });
    cg.remove();
    rmSync(ROOT, { recursive: true, force: true });
    rmSync(stateDir, { recursive: true, force: true });
  });

  it('attaches every LSM hook of the coverage table (trial load in this kernel)', () => {
    assert.deepEqual(plane.listDenyHooks(), [...SYSCALL_DENY_HOOKS], plane.denyDetail);
    process.stdout.write(`[report] syscall deny hooks attached: ${plane.listDenyHooks().length}\n`);
  });

  it('rtctl probe: the syscalls plane denies with EACCES here', async () => {
    const report = await probeKernel();
    const sys = report.checks.find((c) => c.name === 'syscalls');
    assert.equal(sys?.supported, true, sys?.detail);
    assert.equal(sys?.denyErrno, 'EACCES');
    assert.match(sys?.detail ?? '', /Block denies the calls an LSM hook covers \(29 hooks attached\)/);
  });

  it('Block mkdir and chmod: Permission denied (EACCES), nothing changed, alert Block / Permission denied', async () => {
    await apply(compileRuleSet({ 'policy.yaml': POLICY }));
    writeFileSync(`${ROOT}/free/file`, 'x', { mode: 0o644 });
    const from = events.length;
    const mk = runInCgroup(cg.cgroupPath, `mkdir ${ROOT}/free/newdir`);
    assert.notEqual(mk.status, 0);
    assert.match(mk.stderr, /Permission denied/);
    assert.equal(existsSync(`${ROOT}/free/newdir`), false, 'the directory was not made');
    const ch = runInCgroup(cg.cgroupPath, `chmod 600 ${ROOT}/free/file`);
    assert.notEqual(ch.status, 0);
    assert.match(ch.stderr, /Permission denied/);
    assert.equal(call('mkdir', `${ROOT}/free/d2`, `${BIN}/call`, '755'), 13, 'the raw call gets EACCES');
    // Outside the workload nothing is denied.
    assert.equal(spawnSync('mkdir', [`${ROOT}/free/outside`]).status, 0);

    const e = await waitFor((x) => x.syscall === 'SYS_MKDIR' && x.resource === `${ROOT}/free/newdir`, from);
    assert.ok(e, `no mkdir event: ${JSON.stringify(events.slice(from).map((x) => x.resource))}`);
    assert.equal(e.action, 'Block');
    assert.equal(e.errno, 13);
    const alert = buildAlertRecord(e, WORKLOAD_INFO, CONTEXT);
    assert.equal(alert.Operation, 'Syscall');
    assert.equal(alert.Action, 'Block');
    assert.equal(alert.Result, 'Permission denied');
    assert.equal(alert.Enforcer, 'BPFLSM');
    assert.equal(alert.PolicyName, 'deny-calls');
    assert.equal(alert.Severity, '7');
    assert.match(alert.Data, /^syscall=SYS_MKDIR pathname=\/tmp\/rt-sys\/free\/newdir$/);
    const c = await waitFor((x) => x.syscall === 'SYS_FCHMODAT', from);
    assert.equal(c?.action, 'Block');
    assert.equal(c?.resource, `${ROOT}/free/file`);
    const s = await plane.stats();
    assert.ok(plane.denied >= 3, `denied ${plane.denied}`);
    assert.equal(s.dropped, 0);
  });

  it('a 32-bit mkdir (int 0x80, i386 number 39) is denied as the 64-bit one', async () => {
    const from = events.length;
    const r = runInCgroup(cg.cgroupPath, `exec ${BIN}/call-compat 39 ${ROOT}/free/compat 755`);
    assert.equal(r.status, 0, r.stderr);
    assert.equal(r.stdout.trim(), '13', 'EACCES');
    assert.equal(existsSync(`${ROOT}/free/compat`), false);
    const e = await waitFor((x) => x.syscall === 'SYS_MKDIR' && x.resource === `${ROOT}/free/compat`, from);
    assert.equal(e?.action, 'Block');
  });

  it('Audit rename: passes, alert Audit / Passed', async () => {
    const from = events.length;
    writeFileSync(`${ROOT}/free/a`, 'a');
    const r = runInCgroup(cg.cgroupPath, `mv ${ROOT}/free/a ${ROOT}/free/b`);
    assert.equal(r.status, 0, r.stderr);
    assert.equal(existsSync(`${ROOT}/free/b`), true);
    const e = await waitFor(
      (x) => x.syscall.startsWith('SYS_RENAME') && x.resource === `${ROOT}/free/a`,
      from,
    );
    assert.ok(e, 'no rename event');
    const alert = buildAlertRecord(e, WORKLOAD_INFO, CONTEXT);
    assert.equal(alert.Action, 'Audit');
    assert.equal(alert.Result, 'Passed');
    assert.equal(alert.Enforcer, 'eBPF Monitor');
  });

  it('Block on a call no hook covers (access): passes, audit alert saying it was not denied', async () => {
    assert.equal(getSyscallDenyHooks('access'), undefined);
    const from = events.length;
    assert.equal(call('access', `${ROOT}/free`), 0, 'access is not denied');
    const e = await waitFor((x) => x.syscall === 'SYS_ACCESS' && x.resource === `${ROOT}/free`, from);
    assert.ok(e, 'no access event');
    assert.equal(e.action, 'Audit');
    assert.equal(e.errno, 0);
    const alert = buildAlertRecord(e, WORKLOAD_INFO, CONTEXT);
    assert.equal(alert.Result, 'Passed');
    assert.equal(alert.Enforcer, 'eBPF Monitor');
    assert.match(alert.Data, /rule=Block\(audited\) not-denied=uncovered$/);
  });

  it('fromSource: unlink by the blocked executable is denied, by another copy it passes', async () => {
    writeFileSync(`${ROOT}/free/x1`, '1');
    writeFileSync(`${ROOT}/free/x2`, '2');
    const from = events.length;
    const blocked = runInCgroup(cg.cgroupPath, `${BIN}/rm-blocked ${ROOT}/free/x1`);
    assert.notEqual(blocked.status, 0);
    assert.match(blocked.stderr, /Permission denied/);
    assert.equal(existsSync(`${ROOT}/free/x1`), true);
    const other = runInCgroup(cg.cgroupPath, `${BIN}/rm-other ${ROOT}/free/x2`);
    assert.equal(other.status, 0, other.stderr);
    assert.equal(existsSync(`${ROOT}/free/x2`), false);
    const e = await waitFor((x) => x.resource === `${ROOT}/free/x1`, from);
    assert.equal(e?.action, 'Block');
    assert.equal(e?.processName, `${BIN}/rm-blocked`);
  });

  it('matchPaths: absolute, relative (working directory, directory fd) and unnormalised paths under the directory are denied', async () => {
    writeFileSync(`${ROOT}/data/sub/f1`, '1');
    writeFileSync(`${ROOT}/data/sub/f2`, '2');
    writeFileSync(`${ROOT}/data/sub/f3`, '3');
    mkdirSync(`${ROOT}/data/tree/deeper`, { recursive: true });
    writeFileSync(`${ROOT}/data/tree/deeper/f4`, '4');
    writeFileSync(`${ROOT}/free/f5`, '5');
    const from = events.length;
    const r = runInCgroup(cg.cgroupPath, `rm ${ROOT}/data/sub/f1`);
    assert.notEqual(r.status, 0);
    assert.match(r.stderr, /Permission denied/);
    assert.equal(existsSync(`${ROOT}/data/sub/f1`), true);
    assert.equal(runInCgroup(cg.cgroupPath, `rm ${ROOT}/free/f5`).status, 0, 'outside the directory');
    // Relative to the working directory, with `.` and `..`: the kernel names the path as the oracle does.
    for (const command of [`cd ${ROOT}/data/sub && rm f2`, `cd ${ROOT}/free && rm ./../data/sub/./f3`]) {
      const fromVerdicts = verdicts.length;
      const rel = runInCgroup(cg.cgroupPath, command);
      // For the failure message only: a moment for the kernel's verdict to arrive (not an assertion on time).
      if (rel.status === 0) await new Promise((res) => setTimeout(res, 1000));
      assert.notEqual(rel.status, 0, `${command}: ${JSON.stringify(verdicts.slice(fromVerdicts))}`);
      assert.match(rel.stderr, /Permission denied/, command);
    }
    assert.equal(existsSync(`${ROOT}/data/sub/f2`), true);
    assert.equal(existsSync(`${ROOT}/data/sub/f3`), true);
    // rm -r removes through directory fds (unlinkat(fd, "f4")): denied as well.
    const tree = runInCgroup(cg.cgroupPath, `rm -r ${ROOT}/data/tree`);
    assert.notEqual(tree.status, 0);
    assert.equal(existsSync(`${ROOT}/data/tree/deeper/f4`), true);
    const e = await waitFor((x) => x.resource === `${ROOT}/data/sub/f3`, from);
    assert.equal(e?.action, 'Block', 'the alert names the path the kernel decided on');
    const d = await waitFor((x) => x.resource === `${ROOT}/data/sub/f1`, from);
    assert.equal(d?.action, 'Block');
    assert.equal(d?.message, 'no deletes under data');
    assert.ok(
      await waitFor((x) => x.resource === `${ROOT}/data/tree/deeper/f4` && x.action === 'Block', from),
    );
  });

  it('matchPaths: a long path (over 255 bytes, with `..`) under the directory is denied too', async () => {
    const dir = `${ROOT}/data/${'d'.repeat(120)}/${'e'.repeat(120)}`;
    mkdirSync(dir, { recursive: true });
    writeFileSync(`${dir}/f`, 'x');
    const from = events.length;
    const r = runInCgroup(cg.cgroupPath, `rm ${dir}/../${'e'.repeat(120)}/f`);
    assert.notEqual(r.status, 0);
    assert.match(r.stderr, /Permission denied/);
    assert.equal(existsSync(`${dir}/f`), true);
    // The event carries the path's first 255 bytes.
    const e = await waitFor((x) => x.resource.startsWith(`${ROOT}/data/ddd`), from);
    assert.equal(e?.action, 'Block');
  });

  it('matchPaths: a symlinked directory in the path is decided where it leads (the object the kernel acts on)', async () => {
    writeFileSync(`${ROOT}/data/sub/s1`, '1');
    writeFileSync(`${ROOT}/free/s2`, '2');
    symlinkSync(`${ROOT}/data/sub`, `${ROOT}/free/to-data`);
    symlinkSync(`${ROOT}/free`, `${ROOT}/data/to-free`);
    const from = events.length;
    // The string names free/, the kernel removes a file of data/: denied, and the alert names data/.
    const r = runInCgroup(cg.cgroupPath, `rm ${ROOT}/free/to-data/s1`);
    assert.notEqual(r.status, 0);
    assert.match(r.stderr, /Permission denied/);
    assert.equal(existsSync(`${ROOT}/data/sub/s1`), true);
    // The string names data/, the kernel removes a file of free/: it passes.
    const p = runInCgroup(cg.cgroupPath, `rm ${ROOT}/data/to-free/s2`);
    assert.equal(p.status, 0, p.stderr);
    assert.equal(existsSync(`${ROOT}/free/s2`), false);
    const e = await waitFor((x) => x.resource === `${ROOT}/data/sub/s1`, from);
    assert.ok(e, `no event: ${JSON.stringify(events.slice(from).map((x) => x.resource))}`);
    assert.equal(e.action, 'Block');
    assert.equal(e.errno, 13);
    const alert = buildAlertRecord(e, WORKLOAD_INFO, CONTEXT);
    assert.equal(alert.Result, 'Permission denied');
    assert.match(alert.Data, new RegExp(`pathname=${ROOT}/data/sub/s1$`));
    const v = verdicts.find((x) => x.path === `${ROOT}/free/s2`);
    assert.equal(v?.verdict, SysVerdict.allow, 'decided on free/s2');
    rmSync(`${ROOT}/free/to-data`);
    rmSync(`${ROOT}/data/to-free`);
  });

  it('matchPaths on each object hook: the call through a symlinked directory is denied and names the object', async () => {
    const calls = [
      ...['rename', 'renameat', 'renameat2', 'link', 'linkat', 'symlink', 'symlinkat', 'chmod', 'fchmodat'],
      ...['chown', 'fchownat', 'open', 'openat', 'truncate', 'mkdir', 'mkdirat', 'rmdir', 'unlinkat'],
      ...['mknod', 'mknodat', 'execve', 'mount', 'umount2', 'chroot'],
    ];
    const hooks = `apiVersion: security.runtime.com/v1
kind: RuntimePolicy
metadata:
  name: object-hooks
  namespace: guest
spec:
  selector:
    matchLabels:
      app: demo
  syscalls:
    matchPaths:
      - syscall: [${calls.join(', ')}]
        path: ${ROOT}/data/
        recursive: true
        action: Block
`;
    await apply(compileRuleSet({ 'policy.yaml': hooks }));
    const link = `${ROOT}/link`;
    symlinkSync(`${ROOT}/data`, link);
    for (const f of ['m1', 'm2', 'm4']) writeFileSync(`${ROOT}/data/${f}`, f);
    for (const d of ['d7', 'mnt', 'mnt2']) mkdirSync(`${ROOT}/data/${d}`);
    copyFileSync('/usr/bin/true', `${ROOT}/data/prog`);
    execFileSync('chmod', ['755', `${ROOT}/data/prog`]);
    // Mounted from outside the workload (not denied there), unmounted from inside (denied).
    execFileSync('mount', ['-t', 'tmpfs', 'none', `${ROOT}/data/mnt2`]);
    const cases: [command: string, object: string, hook: string][] = [
      [`mv ${link}/m1 ${ROOT}/free/m1`, 'm1', 'path_rename'],
      [`ln ${link}/m2 ${ROOT}/free/m2`, 'm2', 'path_link'],
      [`ln -s /etc/hostname ${link}/s3`, 's3', 'path_symlink'],
      [`chmod 600 ${link}/m4`, 'm4', 'path_chmod'],
      [`chown 1:1 ${link}/m4`, 'm4', 'path_chown'],
      [`touch ${link}/new5`, 'new5', 'path_mknod'],
      [`cat ${link}/m4`, 'm4', 'file_open'],
      [`mkdir ${link}/d6`, 'd6', 'path_mkdir'],
      [`rmdir ${link}/d7`, 'd7', 'path_rmdir'],
      [`mkfifo ${link}/p8`, 'p8', 'path_mknod'],
      [`${link}/prog`, 'prog', 'bprm_check_security'],
      [`mount -t tmpfs none ${link}/mnt`, 'mnt', 'sb_mount'],
      [`umount ${link}/mnt2`, 'mnt2', 'sb_umount'],
      [`chroot ${link}/mnt /prog`, 'mnt', 'path_chroot'],
    ];
    try {
      for (const [command, object, hook] of cases) {
        const from = events.length;
        const r = runInCgroup(cg.cgroupPath, command);
        assert.notEqual(r.status, 0, `${command} (${hook}) passed`);
        // mount(8) and umount(8) word the kernel's EACCES in their own way (libmount's messages).
        if (hook !== 'sb_mount' && hook !== 'sb_umount')
          assert.match(r.stderr, /permission denied|superuser/i, `${command} (${hook}): ${r.stderr}`);
        const e = await waitFor((x) => x.resource === `${ROOT}/data/${object}` && x.action === 'Block', from);
        assert.ok(e, `${command} (${hook}): ${JSON.stringify(events.slice(from).map((x) => x.resource))}`);
        assert.equal(e.errno, 13);
      }
      assert.equal(call('truncate', `${link}/m4`, `${BIN}/call`, '0'), 13, 'truncate (path_truncate)');
      assert.ok(await waitFor((x) => x.syscall === 'SYS_TRUNCATE' && x.resource === `${ROOT}/data/m4`));
      // Nothing changed: the files are there, unlinked, unrenamed, unmodified; nothing made; the mount stays.
      for (const f of ['m1', 'm2', 'm4', 'd7', 'prog'])
        assert.equal(existsSync(`${ROOT}/data/${f}`), true, f);
      for (const f of ['s3', 'new5', 'd6', 'p8']) assert.equal(existsSync(`${ROOT}/data/${f}`), false, f);
      assert.equal(existsSync(`${ROOT}/free/m1`) || existsSync(`${ROOT}/free/m2`), false);
      assert.equal(readFileSync(`${ROOT}/data/m4`, 'utf8'), 'm4');
      assert.match(readFileSync('/proc/self/mountinfo', 'utf8'), new RegExp(`${ROOT}/data/mnt2 `));
      // The same calls outside the directory pass (the rule is the object's, not the call's).
      const free = runInCgroup(
        cg.cgroupPath,
        `touch ${ROOT}/free/t9 && chmod 600 ${ROOT}/free/t9 && mv ${ROOT}/free/t9 ${ROOT}/free/t10`,
      );
      assert.equal(free.status, 0, free.stderr);
    } finally {
      spawnSync('umount', [`${ROOT}/data/mnt2`]);
      spawnSync('umount', [`${ROOT}/data/mnt`]);
      rmSync(link);
      await apply(compileRuleSet({ 'policy.yaml': POLICY }));
    }
  });

  it('matchPaths: a call that fails before it reaches its hook is reported as not denied (not-reached)', async () => {
    const from = events.length;
    assert.equal(call('unlink', `${ROOT}/data/missing`), 2, 'ENOENT, from the lookup');
    const e = await waitFor((x) => x.resource === `${ROOT}/data/missing`, from);
    assert.ok(e, 'no event');
    assert.equal(e.action, 'Audit');
    assert.match(e.syscallArgs ?? '', /rule=Block\(audited\) not-denied=not-reached$/);
    const v = verdicts.find((x) => x.path === `${ROOT}/data/missing`);
    assert.equal(v?.verdict, SYS_VERDICT_UNREACHED);
  });

  it('matchPaths: the path-swap race is closed (20 000 unlinks of a string another thread flips: the blocked file stays)', async function () {
    this.timeout(600_000);
    const allowed = `${ROOT}/free/racefile`;
    const blocked = `${ROOT}/data/racefile`;
    const race = (what: string): number[] => {
      const r = runInCgroup(cg.cgroupPath, `exec ${BIN}/race 20000 ${allowed} ${blocked}`, 540_000);
      assert.equal(r.status, 0, r.stderr);
      const counts = r.stdout.trim().split(' ').map(Number);
      const [calls, denied, allowedRemoved, blockedRemoved, other] = counts;
      process.stdout.write(
        `[report] path-swap race (${what}): ${calls} unlinks, ${denied} denied, ${allowedRemoved} allowed removed, ${blockedRemoved} blocked removed, ${other} other errors\n`,
      );
      return counts;
    };
    const [, denied, allowedRemoved, blockedRemoved] = race('decided on the object in the hook');
    assert.equal(blockedRemoved, 0, 'the blocked file was never removed');
    assert.equal(existsSync(blocked), true);
    // Both strings reached the kernel during the run: the race was live.
    assert.ok((denied ?? 0) > 0 && (allowedRemoved ?? 0) > 0, `${denied} ${allowedRemoved}`);
    // What the object decision closes: the same run decided on the string sys_enter read (the plane before it).
    // Reported, not asserted (how often the swap lands in the window depends on the scheduler).
    await plane.stop({ keepEnforcing: true });
    plane = await start(true);
    await apply(compileRuleSet({ 'policy.yaml': POLICY }));
    race('decided on the string at sys_enter');
    await plane.stop({ keepEnforcing: true });
    plane = await start();
    await apply(compileRuleSet({ 'policy.yaml': POLICY }));
  });

  it('keeps denying while the control plane is down, and resumes with the pinned hooks', async () => {
    await plane.stop({ keepEnforcing: true });
    const r = runInCgroup(cg.cgroupPath, `mkdir ${ROOT}/free/while-down`);
    assert.notEqual(r.status, 0);
    assert.match(r.stderr, /Permission denied/);
    plane = await start();
    assert.equal(plane.resumed, true);
    assert.deepEqual(plane.listDenyHooks(), [...SYSCALL_DENY_HOOKS]);
    await apply(compileRuleSet({ 'policy.yaml': POLICY }));
    assert.equal(call('mkdir', `${ROOT}/free/after`, `${BIN}/call`, '755'), 13);
  });

  it('with no Block rule left the same calls pass', async () => {
    // sys_exit is attached while some call is decided on its object (the unlink path rule), with sys_enter.
    assert.equal(existsSync(`${pinDir}/link_rts_sys_exit`), true);
    await apply({ policies: [] });
    assert.equal(existsSync(`${pinDir}/link_rts_sys_exit`), false);
    assert.equal(call('mkdir', `${ROOT}/free/now-free`, `${BIN}/call`, '755'), 0);
    assert.equal(existsSync(`${ROOT}/free/now-free`), true);
  });

  it('denies what the oracle blocks and nothing else, on generated rule sets and calls (fixed seed)', async () => {
    let line = 1;
    const rule = (r: {
      syscalls: string[];
      where: { path?: string; recursive?: boolean };
      fromSource: SourceMatcher[];
      action: Action;
    }): SyscallRule => ({
      syscalls: r.syscalls,
      recursive: r.where.recursive ?? false,
      fromSource: r.fromSource,
      action: r.action,
      severity: 1,
      tags: [],
      message: '',
      location: {
        file: 'gen.yaml',
        line: line++,
        column: 1,
        pointer: `/spec/syscalls/matchSyscalls/${line}`,
      },
      ...(r.where.path === undefined ? {} : { path: r.where.path }),
    });
    const policy = (name: string, rules: SyscallRule[]): PolicyIR => ({
      ...makePodPolicy(name, [], { namespace: 'guest', labels: { app: 'demo' } }),
      syscallRules: rules,
      presets: [],
    });
    const sources: SourceMatcher[] = [
      { kind: 'path', path: `${BIN}/call` },
      { kind: 'directory', dir: `${BIN}/`, recursive: false },
    ];
    const where = [
      {},
      { path: `${ROOT}/free/g` },
      { path: `${ROOT}/free/`, recursive: false },
      { path: `${ROOT}/`, recursive: true },
    ];
    const arbCase = fc.record({
      rules: fc.array(
        fc.record({
          syscalls: fc.subarray(['mkdir', 'rmdir'], { minLength: 1 }),
          where: fc.constantFrom(...where),
          fromSource: fc.subarray(sources, { maxLength: 1 }),
          action: fc.constantFrom(Action.Audit, Action.Block, Action.Allow),
        }),
        { minLength: 1, maxLength: 3 },
      ),
      call: fc.constantFrom('mkdir', 'rmdir'),
      // Through a symlinked directory and `..`: the kernel decides on the object, the oracle on its real path.
      target: fc.constantFrom(
        `${ROOT}/free/g`,
        `${ROOT}/free/h`,
        `${ROOT}/data/g`,
        `${ROOT}/link/g`,
        `${ROOT}/data/../free/h`,
      ),
      exe: fc.constantFrom(`${BIN}/call`, `${BIN}/call-other`),
    });
    let denied = 0;
    let passed = 0;
    let throughLink = 0;
    symlinkSync(`${ROOT}/data`, `${ROOT}/link`);
    const real = (target: string): string =>
      path.join(realpathSync(path.dirname(target)), path.basename(target));
    await fc.assert(
      fc.asyncProperty(arbCase, async (c) => {
        const ruleSet: RuleSet = { policies: c.rules.map((r, i) => policy(`g${i}`, [rule(r)])) };
        await apply(ruleSet);
        // mkdir needs the directory absent, rmdir present: the call's own effect is what is checked.
        rmSync(c.target, { recursive: true, force: true });
        if (c.call === 'rmdir') mkdirSync(c.target);
        const from = verdicts.length;
        const errno = call(c.call, c.target, c.exe, '755');
        const resolved = real(c.target);
        if (resolved !== c.target) throughLink++;
        const oracle = decideSyscall(ruleSet, DEMO, { syscall: c.call, path: resolved, executable: c.exe });
        const what = `${c.call} ${c.target} by ${c.exe} under ${JSON.stringify(c.rules)}`;
        assert.equal(errno, oracle.allowed ? 0 : 13, `errno of ${what}`);
        assert.equal(existsSync(c.target), c.call === 'mkdir' ? oracle.allowed : !oracle.allowed, what);
        if (!oracle.allowed) {
          denied++;
          // The verdict comes with the call's event (bounded wait).
          const until = Date.now() + 15_000;
          while (!verdicts.slice(from).some((x) => x.path === resolved) && Date.now() < until)
            await new Promise((res) => setTimeout(res, 50));
          const v = verdicts.slice(from).find((x) => x.path === resolved);
          assert.equal(v?.verdict, SysVerdict.deny, `verdict of ${what}`);
        } else passed++;
      }),
      { numRuns: 30 },
    );
    process.stdout.write(
      `[report] syscall deny differential: ${denied} denied, ${passed} passed, ${throughLink} through a symlink or \`..\`\n`,
    );
    assert.ok(denied > 0 && passed > 0, `denied ${denied}, passed ${passed}`);
    assert.ok(throughLink > 0, 'no case through the symlink or `..`');
    rmSync(`${ROOT}/free`, { recursive: true, force: true });
    rmSync(`${ROOT}/link`);
    assert.deepEqual(
      readdirSync(pinDir).filter((f) => f.startsWith('link_rts_lsm_')).length,
      SYSCALL_DENY_HOOKS.length,
    );
  });
});
