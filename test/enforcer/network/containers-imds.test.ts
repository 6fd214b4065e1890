// The IMDS guard end to end on real containers with the whole enforcer: `rtctl enforcer run --data-plane
// fanotify` with the cgroup network plane on (RTCTL_NETWORK_PIN_DIR on a bpffs this test mounts), containerd +
// runc containers each in its own network namespace, wired by a veth to a router namespace this test creates,
// and the project's IMDS service (`rtctl imds serve`, tokens required, hop limit 2) on 169.254.169.254 in a
// server namespace behind the router. The shipped imds-guard policy denies busybox wget and nc in the
// unlabelled pod (EPERM) and the alerts come back through `rtctl logs -n team-a --json`; the labelled pod gets a
// token with nc and reads metadata with wget. Nothing reaches the host's own 169.254.169.254: every connect
// leaves from a container's namespace; the plane attaches only to the containers' cgroups (no host policy).
//
// busybox wget: Debian's busybox-static 1.35 is built without wget's timeout option, yet its option string
// still names `-T` (a number) with no variable behind it: `wget -T 2` stores the number through a null pointer
// and dies with SIGSEGV before any network call (`--timeout` is refused as unknown). The test bounds wget with
// busybox `timeout` instead.
import assert from 'node:assert/strict';
import { execFileSync, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { findCgroup2Mount } from '../../../enforcer/network/network-plane.js';
import { hasCommand, requirePrereqs } from '../../support/prereq.js';
import {
  containerdPrereqs,
  startContainerd,
  type Containerd,
  type TestContainer,
} from '../support/containerd.js';
import {
  readLogs,
  startEnforcer,
  stopHelper,
  waitForAlert,
  waitForStatus,
  type EnforcerProcess,
} from '../support/enforcer-process.js';

const ROOT = resolve(fileURLToPath(import.meta.url), '../../../..');
const LOADER = join(ROOT, 'dist/native/network/rtctl-net-loader');
const CLI = join(ROOT, 'test/imds/support/run-imds-cli.ts');
const GUARD = join(ROOT, 'policies/hardening/imds/imds-guard.yaml');
const NS = { server: `rtnci-${process.pid}-srv`, router: `rtnci-${process.pid}-rtr` };
const IMDS = '169.254.169.254';

function ip(...args: string[]): void {
  execFileSync('ip', args, { stdio: ['ignore', 'ignore', 'pipe'] });
}

function removeNamespaces(): void {
  for (const ns of Object.values(NS)) {
    const pids = spawnSync('ip', ['netns', 'pids', ns], { encoding: 'utf8' }).stdout ?? '';
    for (const p of pids.split('\n').filter((l) => /^\d+$/.test(l))) process.kill(Number(p), 'SIGKILL');
    spawnSync('ip', ['netns', 'del', ns]);
  }
}

/** Server namespace (the IMDS address on lo) and router namespace, as a node's link-local path. */
function createTopology(): void {
  for (const ns of Object.values(NS)) {
    ip('netns', 'add', ns);
    ip('-n', ns, 'link', 'set', 'lo', 'up');
  }
  ip('link', 'add', 's0', 'netns', NS.server, 'type', 'veth', 'peer', 'name', 'r0', 'netns', NS.router);
  ip('-n', NS.server, 'addr', 'add', '192.0.2.2/24', 'dev', 's0');
  ip('-n', NS.server, 'addr', 'add', `${IMDS}/32`, 'dev', 'lo');
  ip('-n', NS.server, 'link', 'set', 's0', 'up');
  ip('-n', NS.server, 'route', 'add', 'default', 'via', '192.0.2.1');
  ip('-n', NS.router, 'addr', 'add', '192.0.2.1/24', 'dev', 'r0');
  ip('-n', NS.router, 'link', 'set', 'r0', 'up');
  ip('-n', NS.router, 'route', 'add', `${IMDS}/32`, 'via', '192.0.2.2');
  execFileSync('ip', ['netns', 'exec', NS.router, 'sh', '-c', 'echo 1 > /proc/sys/net/ipv4/ip_forward']);
}

/** A veth from the container's own network namespace (by its init pid) to the router, one subnet each. */
function wireContainer(pid: number, index: number): void {
  const net = index === 0 ? '198.51.100' : '203.0.113';
  const peer = `rc${index}`;
  ip('link', 'add', 'eth0', 'netns', String(pid), 'type', 'veth', 'peer', 'name', peer, 'netns', NS.router);
  ip('-n', NS.router, 'addr', 'add', `${net}.1/24`, 'dev', peer);
  ip('-n', NS.router, 'link', 'set', peer, 'up');
  const inside = (...args: string[]): void => {
    execFileSync('nsenter', ['-t', String(pid), '-n', 'ip', ...args], {
      stdio: ['ignore', 'ignore', 'pipe'],
    });
  };
  inside('link', 'set', 'lo', 'up');
  inside('addr', 'add', `${net}.2/24`, 'dev', 'eth0');
  inside('link', 'set', 'eth0', 'up');
  inside('route', 'add', 'default', 'via', `${net}.1`);
}

describe('IMDS guard on real containers through the enforcer (cgroup network plane, rtctl logs)', function () {
  this.timeout(240_000);
  let cd: Containerd | undefined;
  let enforcer: EnforcerProcess | undefined;
  let server: ChildProcess | undefined;
  let work = '';
  let bpffs = '';
  const saved: Record<string, string | undefined> = {};
  const containers: TestContainer[] = [];
  const url = (): string => enforcer?.url ?? '';

  before(async function () {
    let cgroup2 = '';
    try {
      cgroup2 = findCgroup2Mount();
    } catch {
      // reported below
    }
    requirePrereqs(this, [
      ...containerdPrereqs(),
      [cgroup2 !== '', 'a cgroup v2 mount'],
      [existsSync(LOADER), 'the network plane built (npm run build:native)'],
      [hasCommand('ip') && hasCommand('nsenter'), 'iproute2 and nsenter (util-linux)'],
    ]);
    removeNamespaces();
    createTopology();
    work = mkdtempSync(join(tmpdir(), 'rtctl-netci-'));
    bpffs = join(work, 'bpffs');
    mkdirSync(bpffs);
    execFileSync('mount', ['-t', 'bpf', 'bpf', bpffs]);
    const config = join(work, 'imds.yaml');
    writeFileSync(
      config,
      'applyDelayMs: 0\ninstances:\n  - instanceId: i-0123456789abcdef0\n    metadataOptions: { httpTokens: required, httpPutResponseHopLimit: 2 }\n',
    );
    const child = spawn(
      'ip',
      [
        'netns',
        'exec',
        NS.server,
        'timeout',
        '600',
        process.execPath,
        '--import',
        'tsx',
        CLI,
        'imds',
        'serve',
        '--config',
        config,
        '--listen',
        `${IMDS}:80`,
        '--manage-listen',
        '127.0.0.1:9180',
        '--manage-token-file',
        join(work, 'manage-token'),
      ],
      { cwd: ROOT, stdio: ['ignore', 'ignore', 'pipe'] },
    );
    server = child;
    await new Promise<void>((resolveReady, reject) => {
      let log = '';
      const timer = setTimeout(() => reject(new Error(`imds not ready: ${log}`)), 60_000);
      child.stderr?.on('data', (d: Buffer) => {
        log += d.toString();
        if (log.includes('"imds ready"')) {
          clearTimeout(timer);
          resolveReady();
        }
      });
      child.on('exit', (code) => reject(new Error(`imds exited ${code}: ${log}`)));
    });

    cd = await startContainerd();
    containers.push(
      await cd.runContainer({
        id: 'imds-web-c',
        pod: 'imds-web',
        namespace: 'team-a',
        container: 'web',
        labels: { app: 'web' },
      }),
      await cd.runContainer({
        id: 'imds-agent-c',
        pod: 'imds-agent',
        namespace: 'team-a',
        container: 'agent',
        labels: { app: 'agent', 'security.runtime.com/imds-access': 'allowed' },
      }),
    );
    containers.forEach((c, i) => wireContainer(c.pid, i));

    const policies = join(work, 'policies');
    mkdirSync(policies);
    writeFileSync(
      join(policies, 'imds-guard.yaml'),
      readFileSync(GUARD, 'utf8').replace('name: imds-guard', 'name: imds-guard\n  namespace: team-a'),
    );
    // The enforcer inherits the environment: the network plane on, pinned on this test's bpffs.
    for (const k of ['RTCTL_NETWORK_PIN_DIR', 'RTCTL_NETWORK_HOST_CGROUP', 'RTCTL_NETWORK_CGROUP_ROOT'])
      saved[k] = process.env[k];
    process.env['RTCTL_NETWORK_PIN_DIR'] = join(bpffs, 'net');
    delete process.env['RTCTL_NETWORK_HOST_CGROUP'];
    delete process.env['RTCTL_NETWORK_CGROUP_ROOT'];
    mkdirSync(join(work, 'state'));
    enforcer = await startEnforcer([
      '--policy-dir',
      policies,
      '--data-plane',
      'fanotify',
      '--containerd-socket',
      cd.socket,
      '--state-dir',
      join(work, 'state'),
      '--alert-log',
      join(work, 'alerts.jsonl'),
      '--poll-ms',
      '200',
    ]);
    const status = await waitForStatus(
      url(),
      (s) => s.workloads.filter((w) => w.policies.includes('imds-guard')).length === 1,
      60_000,
    );
    const guard = status.enforcement.find((p) => p.name === 'imds-guard');
    assert.equal(guard?.level, 'enforced', JSON.stringify(guard));
  });

  after(async function () {
    this.timeout(60_000);
    await enforcer?.kill('SIGTERM');
    for (const [k, v] of Object.entries(saved)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
    if (work !== '') await stopHelper(join(work, 'state', 'fanotify.sock'));
    await cd?.stop();
    if (server !== undefined && server.exitCode === null) server.kill('SIGKILL');
    removeNamespaces();
    if (bpffs !== '') spawnSync('umount', [bpffs]);
    if (work !== '') rmSync(work, { recursive: true, force: true });
  });

  it('the unlabelled pod: wget and nc to the metadata service fail with EPERM, two Block alerts in rtctl logs -n team-a --json', async () => {
    const wget = await cd?.exec('imds-web-c', [
      '/bin/busybox',
      'timeout',
      '10',
      '/bin/busybox',
      'wget',
      '-q',
      '-O-',
      `http://${IMDS}/latest/meta-data/`,
    ]);
    assert.notEqual(wget?.code, 0);
    assert.notEqual(wget?.code, 139, 'wget ran (no SIGSEGV)');
    assert.match(
      `${wget?.stderr ?? ''}`,
      /can't connect to remote host.*Operation not permitted/,
      JSON.stringify(wget),
    );
    const nc = await cd?.exec('imds-web-c', ['/bin/busybox', 'nc', '-w', '3', IMDS, '80']);
    assert.notEqual(nc?.code, 0);
    assert.match(`${nc?.stderr ?? ''}`, /Operation not permitted/, JSON.stringify(nc));
    await waitForAlert(
      url(),
      (a) => a.PodName === 'imds-web' && a.Operation === 'Network' && a.ProcessName.length > 0,
    );
    const deadline = Date.now() + 20_000;
    let network = readLogs(url(), ['-n', 'team-a']).filter((a) => a.Operation === 'Network');
    while (network.length < 2 && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 200));
      network = readLogs(url(), ['-n', 'team-a']).filter((a) => a.Operation === 'Network');
    }
    assert.equal(network.length, 2, JSON.stringify(network));
    for (const a of network) {
      assert.equal(a.PolicyName, 'imds-guard');
      assert.equal(a.Action, 'Block');
      assert.equal(a.Result, 'Operation not permitted');
      assert.equal(a.Enforcer, 'CgroupBPF');
      assert.equal(a.Resource, `${IMDS}:80`);
      assert.match(a.Data, /^syscall=SYS_CONNECT /);
      assert.equal(a.Severity, '8');
      assert.equal(a.NamespaceName, 'team-a');
      assert.equal(a.PodName, 'imds-web');
      assert.equal(a.ContainerName, 'web');
      assert.equal(a.ContainerID, 'imds-web-c');
      assert.ok(a.HostPID > 0, JSON.stringify(a));
    }
  });

  it('the labelled pod gets a token with nc and reads its instance id with wget (hop limit 2), without alerts', async () => {
    const put = await cd?.exec('imds-agent-c', [
      '/bin/sh',
      '-c',
      `/bin/busybox printf 'PUT /latest/api/token HTTP/1.0\\r\\nX-cloud-metadata-token-ttl-seconds: 60\\r\\n\\r\\n' | /bin/busybox nc -w 5 ${IMDS} 80`,
    ]);
    assert.match(put?.stdout ?? '', /^HTTP\/1\.[01] 200/, JSON.stringify(put));
    const token = (put?.stdout ?? '').split('\r\n\r\n')[1]?.trim() ?? '';
    assert.ok(token.length > 20, `a token: ${JSON.stringify(put)}`);
    const get = await cd?.exec('imds-agent-c', [
      '/bin/busybox',
      'timeout',
      '10',
      '/bin/busybox',
      'wget',
      '-q',
      '-O-',
      '--header',
      `X-cloud-metadata-token: ${token}`,
      `http://${IMDS}/latest/meta-data/instance-id`,
    ]);
    assert.equal(get?.code, 0, JSON.stringify(get));
    assert.equal(get?.stdout.trim(), 'i-0123456789abcdef0');
    const mine = readLogs(url(), ['-n', 'team-a', '--pod', 'imds-agent']).filter(
      (a) => a.Operation === 'Network',
    );
    assert.deepEqual(mine, []);
  });
});
