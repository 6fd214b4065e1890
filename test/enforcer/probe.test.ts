// `rtctl probe` on this kernel: each check is a trial whose outcome is reported with what was tried.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import type { ProbeReport } from '../../enforcer/probe.js';
import { hasCommand, isRoot, requirePrereqs } from '../support/prereq.js';
import { REPO_ROOT, rtctlArgs } from './support/enforcer-process.js';

describe('rtctl probe (trials on this kernel)', function () {
  this.timeout(60000);
  before(function () {
    requirePrereqs(this, [
      [isRoot(), 'must run as root (fanotify and bpf trials)'],
      [hasCommand('cc'), 'a C compiler is needed for the native probes'],
    ]);
  });

  it('reports every check in JSON, with fanotify permission events working here', () => {
    const r = spawnSync(process.execPath, rtctlArgs(['probe', '--json']), {
      cwd: REPO_ROOT,
      encoding: 'utf8',
    });
    assert.equal(r.status, 0, r.stderr);
    const report = JSON.parse(r.stdout) as ProbeReport;
    assert.deepEqual(
      report.checks.map((c) => c.name),
      ['btf', 'bpf-lsm', 'fanotify', 'network', 'syscalls', 'apparmor', 'selinux'],
    );
    for (const c of report.checks) assert.ok(c.detail.length > 0, c.name);
    const fan = report.checks.find((c) => c.name === 'fanotify');
    assert.equal(fan?.supported, true, fan?.detail);
    // The cgroup network programs load and attach on this kernel (a probe cgroup the probe creates).
    const net = report.checks.find((c) => c.name === 'network');
    if (process.getuid?.() === 0) assert.equal(net?.supported, true, net?.detail);
    assert.match(net?.detail ?? '', /cgroup|loader|load|attach/);
    // And say how host rules are kept off containers: on this kernel (6.10+) by the host pid namespace check.
    if (process.getuid?.() === 0)
      assert.match(
        net?.detail ?? '',
        /host rules keep to the host pid namespace .*a container is not decided by them/,
      );
    // And that the programs see the acting process: network rules with fromSource and pts are decided.
    if (process.getuid?.() === 0)
      assert.match(net?.detail ?? '', /fromSource and pts on network rules are decided/);
    // The system call audit programs load and attach to their BTF tracepoints on this kernel.
    const sys = report.checks.find((c) => c.name === 'syscalls');
    if (process.getuid?.() === 0) assert.equal(sys?.supported, true, sys?.detail);
    assert.match(sys?.detail ?? '', /sys_enter|loader|load|attach/);
    assert.match(sys?.detail ?? '', /audited, not denied/);
    // Each data plane says which errno its denials give.
    assert.deepEqual(
      report.checks.filter((c) => c.denyErrno !== undefined).map((c) => [c.name, c.denyErrno]),
      [
        ['bpf-lsm', 'EACCES'],
        ['fanotify', 'EPERM'],
        ['network', 'EPERM'],
      ],
    );
    const bpf = report.checks.find((c) => c.name === 'bpf-lsm');
    // Decided by the trial load and attach, never by the LSM list alone.
    assert.match(bpf?.detail ?? '', /LSM program|BTF/);
  });

  it('prints one line per check without --json', () => {
    const r = spawnSync(process.execPath, rtctlArgs(['probe']), { cwd: REPO_ROOT, encoding: 'utf8' });
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /^kernel /);
    assert.match(r.stdout, /\n(yes|no ) {2}fanotify /);
    assert.throws(() => JSON.parse(r.stdout));
  });

  it('rejects usage mistakes of enforcer run with exit code 2', () => {
    const none = spawnSync(process.execPath, rtctlArgs(['enforcer', 'run']), {
      cwd: REPO_ROOT,
      encoding: 'utf8',
    });
    assert.equal(none.status, 2);
    assert.match(none.stderr, /policy source/);
    const plane = spawnSync(
      process.execPath,
      rtctlArgs(['enforcer', 'run', '--policy-dir', '/tmp', '--data-plane', 'nope']),
      { cwd: REPO_ROOT, encoding: 'utf8' },
    );
    assert.equal(plane.status, 2);
    assert.match(plane.stderr, /unknown "nope"/);
  });
});
