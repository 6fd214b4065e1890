// Host policies do not affect pods, even a pod started after the enforcer's last poll, on real containers
// (containerd + runc) with the whole enforcer: `rtctl enforcer run --data-plane fanotify --container-discovery
// poll --poll-ms 600000` (no event stream: the window a container's start leaves open is held open) with
// the cgroup network plane on and a RuntimeHostPolicy that blocks connects to 169.254.169.254 (a host policy's
// matchProtocols needs fromSource, which the cgroup programs cannot see: addresses are what this plane enforces).
// The enforcer polls the runtime when it starts, then not for ten minutes: a container started after that first
// poll is in no cgroup the plane has registered, and its deepest registered cgroup is the host's. Its nc is
// not denied and raises no alert (the kernel keeps host rules to the host pid namespace); a host process
// is denied with a host alert. Stand-ins, named as such: a cgroup this test creates stands in for the host
// cgroup (RTCTL_NETWORK_HOST_CGROUP; the root in production), and the containers are placed below it
// (`ctr run --cgroup`); the host process is a python worker moved into it, in a network namespace of its own.
// Every connect leaves from a namespace with only `lo` (ctr's default, and the worker's): nothing reaches the
// host's own 169.254.169.254.
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, rmdirSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { findCgroup2Mount, readCgroup2Path } from '../../../enforcer/network/network-plane.js';
import { encodeWorkloadKey } from '../../../enforcer/network/net-map-layout.js';
import { hasCommand, isRoot, requirePrereqs } from '../../support/prereq.js';
import { containerdPrereqs, startContainerd, type Containerd } from '../support/containerd.js';
import {
  getJson,
  readLogs,
  startEnforcer,
  stopHelper,
  waitForAlert,
  waitForStatus,
  type EnforcerProcess,
} from '../support/enforcer-process.js';
import type { EnforcerStatus } from '../../../enforcer/enforcer.js';
import { Worker } from './net-worker.js';

const ROOT = resolve(fileURLToPath(import.meta.url), '../../../..');
const LOADER = join(ROOT, 'dist/native/network/rtctl-net-loader');
const NODE = 'hostrace-node';
const IMDS = '169.254.169.254';
const EPERM = 1;

const HOST_POLICY = [
  'apiVersion: security.runtime.com/v1',
  'kind: RuntimeHostPolicy',
  'metadata:',
  '  name: host-no-imds',
  'spec:',
  '  nodeSelector:',
  '    matchLabels:',
  `      kubernetes.io/hostname: ${NODE}`,
  '  network:',
  '    matchAddresses:',
  `      - cidr: ${IMDS}/32`,
  '  action: Block',
  '',
].join('\n');

/** The cgroup ids registered in the pinned rtn_workloads map (hex keys), read with bpftool. */
function registeredCgroups(pinDir: string): string[] {
  const out = execFileSync('bpftool', ['-j', 'map', 'dump', 'pinned', join(pinDir, 'map_rtn_workloads')], {
    encoding: 'utf8',
  });
  const entries = JSON.parse(out) as { key: string[] }[];
  return entries.map((e) => e.key.map((b) => b.replace(/^0x/, '').padStart(2, '0')).join(''));
}

describe('host policies do not affect a pod started after the enforcer polled (containerd + runc, whole enforcer, --poll-ms 600000)', function () {
  this.timeout(240_000);
  let cd: Containerd | undefined;
  let enforcer: EnforcerProcess | undefined;
  let host: Worker | undefined;
  let work = '';
  let bpffs = '';
  let cgHost = '';
  let hostCgroupPath = '';
  const saved: Record<string, string | undefined> = {};
  const url = (): string => enforcer?.url ?? '';
  const pinDir = (): string => join(bpffs, 'net');

  before(async function () {
    let cgroup2 = '';
    try {
      cgroup2 = findCgroup2Mount();
    } catch {
      // reported below
    }
    requirePrereqs(this, [
      ...containerdPrereqs(),
      [isRoot(), 'root'],
      [cgroup2 !== '', 'a cgroup v2 mount'],
      [existsSync(LOADER), 'the network plane built (npm run build:native)'],
      [
        hasCommand('bpftool') && hasCommand('unshare') && hasCommand('python3'),
        'bpftool, unshare and python3',
      ],
    ]);
    work = mkdtempSync(join(tmpdir(), 'rtctl-hostrace-'));
    bpffs = join(work, 'bpffs');
    mkdirSync(bpffs);
    execFileSync('mount', ['-t', 'bpf', 'bpf', bpffs]);
    hostCgroupPath = `/rtctl-test-hostrace-e2e-${process.pid}`;
    cgHost = join(cgroup2, hostCgroupPath);
    mkdirSync(cgHost);
    cd = await startContainerd();
    const policies = join(work, 'policies');
    mkdirSync(policies);
    writeFileSync(join(policies, 'host.yaml'), HOST_POLICY);
    for (const k of ['RTCTL_NETWORK_PIN_DIR', 'RTCTL_NETWORK_HOST_CGROUP', 'RTCTL_NETWORK_CGROUP_ROOT'])
      saved[k] = process.env[k];
    process.env['RTCTL_NETWORK_PIN_DIR'] = pinDir();
    process.env['RTCTL_NETWORK_HOST_CGROUP'] = cgHost;
    delete process.env['RTCTL_NETWORK_CGROUP_ROOT'];
    mkdirSync(join(work, 'state'));
    enforcer = await startEnforcer([
      '--policy-dir',
      policies,
      '--data-plane',
      'fanotify',
      '--node-name',
      NODE,
      '--containerd-socket',
      cd.socket,
      '--state-dir',
      join(work, 'state'),
      '--alert-log',
      join(work, 'alerts.jsonl'),
      '--container-discovery',
      'poll',
      '--poll-ms',
      '600000',
    ]);
    const status = await waitForStatus(
      url(),
      (s) => s.generation > 0 && s.enforcement.some((p) => p.name === 'host-no-imds'),
      60_000,
    );
    const policy = status.enforcement.find((p) => p.name === 'host-no-imds');
    assert.equal(policy?.level, 'enforced', JSON.stringify(policy));
    assert.equal(status.stats.hostIsolation, 'pid-namespace', JSON.stringify(status.stats));
  });

  after(async function () {
    this.timeout(60_000);
    await host?.stop();
    await enforcer?.kill('SIGTERM');
    for (const [k, v] of Object.entries(saved)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
    if (work !== '') await stopHelper(join(work, 'state', 'fanotify.sock'));
    await cd?.stop();
    // The programs on the stand-in go with it; the pins with the test's bpffs.
    if (cgHost !== '' && existsSync(cgHost)) rmdirSync(cgHost);
    if (bpffs !== '') spawnSync('umount', [bpffs]);
    if (work !== '') rmSync(work, { recursive: true, force: true });
  });

  it('a host process is denied with a host alert; a container started since the last poll is neither denied nor reported', async () => {
    const before = await getJson<EnforcerStatus>(`${url()}/status`);
    host = new Worker(cgHost);
    await host.ready();
    assert.deepEqual(await host.run({ kind: 'tcp', op: 'connect', address: IMDS, port: 80 }), {
      socket: 0,
      send: EPERM,
    });
    const hostAlert = await waitForAlert(
      url(),
      (a) => a.PolicyName === 'host-no-imds' && a.HostPID === host?.pid,
      20_000,
    );
    assert.equal(hostAlert.Type, 'MatchedHostPolicy');
    assert.equal(hostAlert.Action, 'Block');
    assert.equal(hostAlert.Resource, `${IMDS}:80`);

    // After the enforcer's only poll: a new container below the host cgroup stand-in.
    const c = await cd?.runContainer({
      id: `hostrace-new-${process.pid}`,
      pod: 'late-pod',
      namespace: 'team-b',
      container: 'app',
      labels: { app: 'late' },
      cgroup: `${hostCgroupPath}/late-${process.pid}`,
    });
    assert.ok(c !== undefined && c.pid > 0);
    const cgroupId = statSync(join(cgHost, `late-${process.pid}`), { bigint: true }).ino;
    assert.equal(readCgroup2Path(c.pid), `${hostCgroupPath}/late-${process.pid}`);
    const key = encodeWorkloadKey(cgroupId);
    const registered = registeredCgroups(pinDir());
    // The map reads back: the host cgroup stand-in is registered (the host workload), the new container is not.
    assert.ok(
      registered.includes(encodeWorkloadKey(statSync(cgHost, { bigint: true }).ino)),
      registered.join(),
    );
    assert.ok(!registered.includes(key), 'the new container is not registered yet');
    const reported = (await getJson<EnforcerStatus>(`${url()}/status`)).stats.reported;

    const nc = await cd?.exec(c.id, ['/bin/busybox', 'nc', '-w', '2', IMDS, '80']);
    const ncText = `${nc?.stderr ?? ''}${nc?.stdout ?? ''}`;
    assert.doesNotMatch(ncText, /Operation not permitted/, JSON.stringify(nc));
    assert.match(ncText, /unreachable/i, JSON.stringify(nc));
    // Still in the window: not registered, the same generation, nothing reported by the kernel.
    assert.ok(!registeredCgroups(pinDir()).includes(key), 'still not registered');
    const after = await getJson<EnforcerStatus>(`${url()}/status`);
    assert.equal(after.generation, before.generation, 'no poll in between');
    assert.equal(after.stats.reported, reported, 'the container raised no event');

    // The host is still denied, and its alert arrives after any the container could have raised.
    assert.deepEqual(await host.run({ kind: 'tcp', op: 'connect', address: IMDS, port: 8080 }), {
      socket: 0,
      send: EPERM,
    });
    await waitForAlert(
      url(),
      (a) => a.PolicyName === 'host-no-imds' && a.Resource === `${IMDS}:8080`,
      20_000,
    );
    const alerts = readLogs(url(), []).filter((a) => a.Operation === 'Network');
    assert.deepEqual(
      alerts.map((a) => [a.Type, a.HostPID, a.Resource]),
      [
        ['MatchedHostPolicy', host.pid, `${IMDS}:80`],
        ['MatchedHostPolicy', host.pid, `${IMDS}:8080`],
      ],
    );
  });
});
