// The cgroup network plane on the guest's Debian 6.1 kernel, which refuses bpf_get_ns_current_pid_tgid() to
// cgroup programs (allowed for every program type from 6.10): the programs still load, without the host pid
// namespace check, and the plane says so (probe, the plane's hostIsolation in /status stats, a warning), and the
// window it leaves is real: a process in a pid namespace of its own, in a cgroup below the host cgroup that is
// not registered, is decided by host rules until it is registered. Stand-ins: a cgroup this test creates for the
// host cgroup, a child of it for the new container's cgroup, python workers in network namespaces of their own
// (only `lo`, down: nothing leaves them).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readlinkSync, rmSync, rmdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { resolvePostures } from '../../../../compiler/model/posture.js';
import { buildRuleTableImage } from '../../../../compiler/rule-table/build-rule-table.js';
import type { EnforcementState } from '../../../../enforcer/data-plane.js';
import { HOST_ISOLATION_WINDOW, NetworkPlane } from '../../../../enforcer/network/network-plane.js';
import { Action, address, makePodPolicy, srcPath } from '../../../compiler/decide/rule-set-builder.js';
import { Worker } from '../../network/net-worker.js';
import { repoRoot } from './guest-support.js';

const LOADER = join(repoRoot, 'dist/native/network/rtctl-net-loader');
const OBJECT = join(repoRoot, 'dist/native/network/rtctl-net.bpf.o');
const EPERM = 1;
const ENETUNREACH = 101;
const IMDS = { kind: 'tcp', op: 'connect' as const, address: '169.254.169.254', port: 80 };

describe('cgroup network plane on a kernel before 6.10 (guest, Debian 6.1): no pid namespace check, said', function () {
  this.timeout(300_000);
  const cgHost = `/sys/fs/cgroup/rtctl-guest-hostrace-${process.pid}`;
  const cgNew = join(cgHost, 'new-container');
  let work = '';
  let plane: NetworkPlane | undefined;
  const workers: Worker[] = [];

  before(() => {
    work = mkdtempSync(join(tmpdir(), 'rtctl-guest-hostrace-'));
    mkdirSync(cgNew, { recursive: true });
  });

  after(async () => {
    for (const w of workers) await w.stop();
    await plane?.stop({ keepEnforcing: false }).catch(() => undefined);
    for (const dir of [cgNew, cgHost]) if (existsSync(dir)) rmdirSync(dir);
    rmSync(work, { recursive: true, force: true });
  });

  it('the probe loads and attaches the programs and says host rules are not kept to the host pid namespace', () => {
    const before = readdirSync('/sys/fs/cgroup');
    const r = spawnSync(LOADER, ['--probe', OBJECT, '/sys/fs/cgroup'], {
      encoding: 'utf8',
      timeout: 120_000,
    });
    assert.equal(r.status, 0, r.stdout + r.stderr);
    const j = JSON.parse(r.stdout) as { network: boolean; hostPidNamespace: boolean; reason: string };
    assert.equal(j.network, true, j.reason);
    assert.equal(j.hostPidNamespace, false, j.reason);
    assert.match(j.reason, /refuses bpf_get_ns_current_pid_tgid to cgroup programs/);
    assert.deepEqual(readdirSync('/sys/fs/cgroup'), before, 'the probe cgroup is gone');
  });

  it('the plane runs without the check, warns, and host rules reach an unregistered container until it is registered', async () => {
    const told: string[] = [];
    plane = new NetworkPlane({
      loaderPath: LOADER,
      objectPath: OBJECT,
      pinDir: join('/sys/fs/bpf', `rtctl-guest-hostrace-${process.pid}`),
      stateDir: work,
      hostCgroup: cgHost,
      warn: (m) => told.push(m),
    });
    await plane.start();
    assert.equal(plane.hostIsolation, 'registration-only');
    assert.deepEqual(told, [HOST_ISOLATION_WINDOW]);
    assert.equal((await plane.stats()).hostIsolation, 'registration-only');
    const policy = makePodPolicy('host-net', [
      { matcher: address('169.254.169.254/32'), action: Action.Block },
    ]);
    const table = buildRuleTableImage({
      policies: [{ ...policy, kind: 'RuntimeHostPolicy', target: { kind: 'host', nodeLabels: {} } }],
    });
    const state = (generation: number, registerNew: boolean, pid: number): EnforcementState => ({
      generation,
      table,
      workloads: [
        {
          anchor: { key: 'host', host: true, pid: 1, cgroupPath: '' },
          policies: [0],
          postures: resolvePostures({}),
        },
      ],
      ...(registerNew
        ? { unselected: [{ key: 'new', host: false, pid, cgroupPath: cgNew.slice('/sys/fs/cgroup'.length) }] }
        : {}),
    });
    await plane.apply(state(1, false, 0));
    // One at a time, with room for python's start under qemu TCG.
    const host = new Worker(cgHost, undefined, { answerMs: 120_000 });
    workers.push(host);
    await host.ready();
    const container = new Worker(cgNew, undefined, { pidns: true, answerMs: 120_000 });
    workers.push(container);
    await container.ready();
    assert.deepEqual(await host.run(IMDS), { socket: 0, send: EPERM });
    assert.deepEqual(
      await container.run(IMDS),
      { socket: 0, send: EPERM },
      'the window of a kernel before 6.10',
    );
    await plane.apply(state(2, true, container.pid));
    assert.deepEqual(await container.run(IMDS), { socket: 0, send: ENETUNREACH });
    assert.deepEqual(await host.run(IMDS), { socket: 0, send: EPERM });
  });

  it('without the task helper the plane says fromSource and pts are not enforced, and a rule with a source never matches', async () => {
    assert.ok(plane);
    assert.equal(plane.processAware, false);
    assert.match(plane.unavailableProcessForm('network.fromSource') ?? '', /bpf_get_current_task_btf/);
    assert.match(plane.unavailableProcessForm('network.pts') ?? '', /bpf_get_current_task_btf/);
    const host = workers[0];
    assert.ok(host);
    const exe = readlinkSync(`/proc/${host.pid}/exe`);
    const table = buildRuleTableImage({
      policies: [
        {
          ...makePodPolicy('host-net-src', [
            { matcher: address('169.254.169.254/32'), action: Action.Block, fromSource: [srcPath(exe)] },
          ]),
          kind: 'RuntimeHostPolicy',
          target: { kind: 'host', nodeLabels: {} },
        },
      ],
    });
    await plane.apply({
      generation: 3,
      table,
      workloads: [
        {
          anchor: { key: 'host', host: true, pid: 1, cgroupPath: '' },
          policies: [0],
          postures: resolvePostures({}),
        },
      ],
    });
    assert.deepEqual(
      await host.run(IMDS),
      { socket: 0, send: ENETUNREACH },
      'the source rule never matches here',
    );
  });
});
