// Host rules and containers the control plane has not registered yet, on the real kernel (root). The host
// programs sit on the host cgroup, an ancestor of every container; a container started since the control
// plane's last poll is in no registered cgroup of its own, so its deepest registered cgroup is the host's. The
// programs keep the host workload to the host's pid namespace: such a container's process (own pid namespace)
// is not decided at all, while a host process is. Stand-ins, named as such: a cgroup this test creates stands in
// for the host cgroup (the root in production; programs are never attached to a cgroup this test did not
// create), a child of it for the new container's cgroup, and python workers in network namespaces of their own
// (only `lo`, down: an allowed connect fails with ENETUNREACH after the hook, a denied one with EPERM).
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, rmdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { PolicyIR } from '../../../compiler/ir/rule-set.js';
import { resolvePostures } from '../../../compiler/model/posture.js';
import { buildRuleTableImage } from '../../../compiler/rule-table/build-rule-table.js';
import type { DataPlaneEvent, EnforcementState } from '../../../enforcer/data-plane.js';
import {
  HOST_ISOLATION_WINDOW,
  NetworkPlane,
  findCgroup2Mount,
  readNamespaceId,
} from '../../../enforcer/network/network-plane.js';
import { Action, address, makePodPolicy, protocol } from '../../compiler/decide/rule-set-builder.js';
import { hasCommand, isRoot, requirePrereqs } from '../../support/prereq.js';
import { Worker } from './net-worker.js';

const ROOT = resolve(fileURLToPath(import.meta.url), '../../../..');
const LOADER = join(ROOT, 'dist/native/network/rtctl-net-loader');
const OBJECT = join(ROOT, 'dist/native/network/rtctl-net.bpf.o');
const EPERM = 1;
const ENETUNREACH = 101;
const IMDS = { kind: 'tcp', op: 'connect' as const, address: '169.254.169.254', port: 80 };

function cgroup2(): string | undefined {
  try {
    return findCgroup2Mount();
  } catch {
    return undefined;
  }
}

/** A host policy: Block connects to the metadata service and raw sockets. */
function hostPolicy(): PolicyIR {
  const base = makePodPolicy('host-net', [
    { matcher: address('169.254.169.254/32', [80], 'tcp'), action: Action.Block, severity: 5 },
    { matcher: protocol('raw'), action: Action.Block },
  ]);
  return { ...base, kind: 'RuntimeHostPolicy', target: { kind: 'host', nodeLabels: {} } };
}

describe('cgroup network plane: host rules never decide a container not registered yet (real kernel, a test cgroup standing in for the host cgroup)', function () {
  this.timeout(120_000);
  let work = '';
  let bpffs = '';
  let cgHost = '';
  let cgNew = '';
  let generation = 0;
  const workers: Worker[] = [];
  const planes: NetworkPlane[] = [];
  const events: DataPlaneEvent[] = [];
  const warnings = new Map<NetworkPlane, string[]>();

  before(function () {
    requirePrereqs(this, [
      [isRoot(), 'root (BPF programs and cgroups)'],
      [cgroup2() !== undefined, 'a cgroup v2 mount'],
      [existsSync(LOADER) && existsSync(OBJECT), 'the network plane built (npm run build:native)'],
      [hasCommand('unshare') && hasCommand('python3'), 'unshare (util-linux) and python3'],
    ]);
    work = mkdtempSync(join(tmpdir(), 'rtctl-nethost-'));
    bpffs = join(work, 'bpffs');
    mkdirSync(bpffs);
    execFileSync('mount', ['-t', 'bpf', 'bpf', bpffs]);
    cgHost = join(cgroup2() ?? '', `rtctl-test-hostrace-${process.pid}`);
    cgNew = join(cgHost, 'new-container');
    mkdirSync(cgNew, { recursive: true });
  });

  afterEach(async () => {
    for (const w of workers.splice(0)) await w.stop();
    for (const p of planes.splice(0)) await p.stop({ keepEnforcing: false }).catch(() => undefined);
  });

  after(() => {
    for (const dir of [cgNew, cgHost]) if (dir !== '' && existsSync(dir)) rmdirSync(dir);
    if (bpffs !== '') execFileSync('umount', [bpffs]);
    if (work !== '') rmSync(work, { recursive: true, force: true });
  });

  /** `pidnsCheck: false` loads the programs as a kernel before 6.10 gets them (RTCTL_NET_PIDNS_CHECK=0). */
  async function startPlane(name: string, options: { pidnsCheck?: boolean } = {}): Promise<NetworkPlane> {
    const told: string[] = [];
    const plane = new NetworkPlane({
      loaderPath: LOADER,
      objectPath: OBJECT,
      pinDir: join(bpffs, name),
      stateDir: work,
      hostCgroup: cgHost,
      warn: (m) => told.push(m),
    });
    const saved = process.env['RTCTL_NET_PIDNS_CHECK'];
    if (options.pidnsCheck === false) process.env['RTCTL_NET_PIDNS_CHECK'] = '0';
    try {
      await plane.start();
    } finally {
      if (saved === undefined) delete process.env['RTCTL_NET_PIDNS_CHECK'];
      else process.env['RTCTL_NET_PIDNS_CHECK'] = saved;
    }
    warnings.set(plane, told);
    void (async () => {
      for await (const e of plane.events()) events.push(e);
    })();
    planes.push(plane);
    return plane;
  }

  /** The host workload alone, or with the new container registered as one no policy selects. */
  function state(registerNew: boolean, pid = 0): EnforcementState {
    return {
      generation: ++generation,
      table: buildRuleTableImage({ policies: [hostPolicy()] }),
      workloads: [
        {
          anchor: { key: 'host', host: true, pid: 1, cgroupPath: '' },
          policies: [0],
          postures: resolvePostures({}),
        },
      ],
      ...(registerNew
        ? {
            unselected: [{ key: 'new', host: false, pid, cgroupPath: cgNew.slice((cgroup2() ?? '').length) }],
          }
        : {}),
    };
  }

  async function start(dir: string, pidns: boolean, userns = false): Promise<Worker> {
    const w = new Worker(dir, undefined, { pidns, userns });
    workers.push(w);
    await w.ready();
    return w;
  }

  /** Waits until the plane has reported `n` events since `from` (bounded), then checks that no more come. */
  async function reportedSince(plane: NetworkPlane, from: number, n: number): Promise<void> {
    const deadline = Date.now() + 10_000;
    while (((await plane.stats()).reported ?? 0) - from < n) {
      if (Date.now() > deadline) assert.fail(`expected ${n} reported events`);
      await new Promise((r) => setTimeout(r, 20));
    }
    assert.equal((await plane.stats()).reported - from, n, 'no other event reported');
  }

  it('a container in its own pid namespace, not registered yet, is not decided by host rules; host processes are', async () => {
    const plane = await startPlane('net-check');
    assert.equal(plane.hostIsolation, 'pid-namespace', 'this kernel (6.10+) lets cgroup programs check it');
    assert.deepEqual(warnings.get(plane), []);
    assert.equal((await plane.stats()).hostIsolation, 'pid-namespace');
    await plane.apply(state(false));
    assert.deepEqual(await plane.query(cgHost), [1, 1, 1, 1, 1], 'host programs on the host cgroup stand-in');
    const host = await start(cgHost, false);
    const container = await start(cgNew, true);
    const hostPidShared = await start(cgNew, false);
    // A host process that made a user namespace (as an unprivileged user may) and a pid namespace in it.
    const hostOwnNamespaces = await start(cgHost, true, true);
    events.length = 0;
    const before = (await plane.stats()).reported;

    // The new container: neither its socket nor its connect is decided (no rule, no alert).
    assert.deepEqual(await container.run(IMDS), { socket: 0, send: ENETUNREACH });
    assert.deepEqual(await container.run({ kind: 'raw' }), { socket: 0, send: null });
    // A host process: both denied, each with a host alert.
    assert.deepEqual(await host.run(IMDS), { socket: 0, send: EPERM });
    assert.deepEqual(await host.run({ kind: 'raw' }), { socket: EPERM, send: null });
    // A process of the new container's cgroup in the host pid namespace (a `hostPID: true` pod) shares the
    // host's namespace: until the container is registered, host rules decide it.
    assert.deepEqual(await hostPidShared.run(IMDS), { socket: 0, send: EPERM });
    // Namespaces of its own do not take a host process out of host rules: it is in another user namespace.
    assert.deepEqual(await hostOwnNamespaces.run(IMDS), { socket: 0, send: EPERM });
    await reportedSince(plane, before, 4);
    const deadline = Date.now() + 10_000;
    while (events.length < 4 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    assert.deepEqual(
      events.map((e) => [e.workload, e.action, e.resource]),
      [
        ['host', 'Block', '169.254.169.254:80'],
        // The worker's raw socket is raw ICMP: it has both names.
        ['host', 'Block', 'protocol=raw,icmp'],
        ['host', 'Block', '169.254.169.254:80'],
        ['host', 'Block', '169.254.169.254:80'],
      ],
    );
    assert.deepEqual(
      events.slice(0, 3).map((e) => e.hostPid),
      [host.pid, host.pid, hostPidShared.pid],
    );

    // Registered (no policy selects it): the hostPID process is no longer decided by host rules either.
    await plane.apply(state(true, hostPidShared.pid));
    assert.deepEqual(await plane.query(cgNew), [0, 0, 0, 0, 0], 'registered, not attached');
    assert.deepEqual(await hostPidShared.run(IMDS), { socket: 0, send: ENETUNREACH });
    assert.deepEqual(await container.run(IMDS), { socket: 0, send: ENETUNREACH });
    assert.deepEqual(await host.run(IMDS), { socket: 0, send: EPERM });
    await reportedSince(plane, before, 5);
  });

  it('keeps the check across a restart of the control plane (the loader reads it back from the pinned map)', async () => {
    const first = await startPlane('net-restart');
    await first.apply(state(false));
    await first.stop({ keepEnforcing: true });
    planes.splice(planes.indexOf(first), 1);
    const container = await start(cgNew, true);
    const host = await start(cgHost, false);
    // Nothing in user space: the kernel still keeps host rules to the host.
    assert.deepEqual(await container.run(IMDS), { socket: 0, send: ENETUNREACH });
    assert.deepEqual(await host.run(IMDS), { socket: 0, send: EPERM });
    const again = await startPlane('net-restart');
    assert.equal(again.resumed, true);
    assert.equal(again.hostIsolation, 'pid-namespace');
    await again.apply(state(false));
    assert.deepEqual(await container.run(IMDS), { socket: 0, send: ENETUNREACH });
    assert.deepEqual(await host.run(IMDS), { socket: 0, send: EPERM });
  });

  it('where the kernel refuses the check (programs as loaded before 6.10), the window is real and the plane says so', async () => {
    const plane = await startPlane('net-nocheck', { pidnsCheck: false });
    assert.equal(plane.hostIsolation, 'registration-only');
    assert.deepEqual(warnings.get(plane), [HOST_ISOLATION_WINDOW]);
    assert.equal((await plane.stats()).hostIsolation, 'registration-only');
    await plane.apply(state(false));
    const container = await start(cgNew, true);
    const before = (await plane.stats()).reported;
    // Without the check, host rules reach the new container until it is registered...
    assert.deepEqual(await container.run(IMDS), { socket: 0, send: EPERM });
    await reportedSince(plane, before, 1);
    // ...and no longer once it is.
    await plane.apply(state(true, container.pid));
    assert.deepEqual(await container.run(IMDS), { socket: 0, send: ENETUNREACH });
    await reportedSince(plane, before, 1);
    // A restarted control plane reads the mode back from the pinned programs' map.
    await plane.stop({ keepEnforcing: true });
    planes.splice(planes.indexOf(plane), 1);
    const again = await startPlane('net-nocheck');
    assert.equal(again.resumed, true);
    assert.equal(again.hostIsolation, 'registration-only');
  });

  it('refuses pins of an older loader (programs without rtn_config) with an error naming the folder', async () => {
    const first = await startPlane('net-old');
    await first.stop({ keepEnforcing: true });
    planes.splice(planes.indexOf(first), 1);
    // What an older loader left: the same pins, without the config map.
    rmSync(join(bpffs, 'net-old', 'map_rtn_config'));
    const again = new NetworkPlane({
      loaderPath: LOADER,
      objectPath: OBJECT,
      pinDir: join(bpffs, 'net-old'),
      stateDir: work,
      hostCgroup: cgHost,
    });
    await assert.rejects(
      again.start(),
      /net-old holds the programs of an older rtctl-net-loader \(no rtn_config\)/,
    );
    rmSync(join(bpffs, 'net-old'), { recursive: true });
  });

  it('warns when the enforcer itself is in a nested pid namespace (not hostPID), and not otherwise', () => {
    const script = join(ROOT, 'test/enforcer/network/start-plane.ts');
    const args = [LOADER, OBJECT, join(bpffs, 'net-nested'), work, cgHost];
    const nested = spawnSync(
      'unshare',
      ['-p', '-f', '--kill-child', process.execPath, '--import', 'tsx', script, ...args],
      { cwd: ROOT, encoding: 'utf8', timeout: 60_000 },
    );
    assert.equal(nested.status, 0, nested.stderr);
    assert.deepEqual(JSON.parse(nested.stdout), [
      'the enforcer is not in the initial pid namespace (run it with hostPID: true): host network rules apply only to processes of its own pid namespace',
    ]);
    const here = spawnSync(process.execPath, ['--import', 'tsx', script, ...args], {
      cwd: ROOT,
      encoding: 'utf8',
      timeout: 60_000,
    });
    assert.equal(here.status, 0, here.stderr);
    assert.deepEqual(JSON.parse(here.stdout), []);
  });

  it('reads the pid namespace as the kernel helper compares it (nsfs device in the kernel dev_t encoding)', () => {
    const ns = readNamespaceId('/proc/self/ns/pid');
    const link = execFileSync('readlink', ['/proc/self/ns/pid'], { encoding: 'utf8' }).trim();
    // readlink runs in this process's pid namespace: pid:[<inode>].
    assert.equal(link, `pid:[${ns.ino}]`);
    const [major, minor] = execFileSync('stat', ['-L', '-c', '%Hd %Ld', '/proc/self/ns/pid'], {
      encoding: 'utf8',
    })
      .trim()
      .split(' ')
      .map(BigInt);
    assert.equal(ns.dev, ((major ?? 0n) << 20n) | (minor ?? 0n));
  });
});
