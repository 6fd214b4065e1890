// systemd mode on the real kernel: the Debian package installed into a fresh bookworm root file system
// (mmdebstrap, with containerd for `ctr`), and the enforcer started there exactly as the installed unit's
// ExecStart says, reading the installed /etc/rtctl/enforcer.yaml. systemd is not PID 1 here, so what it would
// do around ExecStart is done by the test from the unit's own settings: the RuntimeDirectory and
// LogsDirectory are created, the CapabilityBoundingSet and NoNewPrivileges are applied with setpriv (so the
// capability set is shown to be enough for the fanotify plane), the environment is empty but PATH.
//
// Safety of host block mode on this machine: the host policy is an Allow list whose rule carries `fromSource`
// (only programs started by one launcher binary in a temporary folder are in least-permissive mode), and it
// selects the node by a random label; every other process on the host matches no rule and is never denied.
// The enforcer's fanotify helper is released in `after` whatever happened.
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import {
  chmodSync,
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { AlertRecord } from '../../../enforcer/alerts/alert-record.js';
import {
  ENFORCER_CAPABILITIES,
  PACKAGED_UNIT_PATH,
  parseExecStart,
  readUnitEnvironment,
  readUnitSetting,
} from '../../../install/systemd/enforcer-unit.js';
import { resolveCgroup2Root } from '../../../enforcer/network/network-plane.js';
import { hasCommand, isRoot, requirePrereqs } from '../../support/prereq.js';
import { containerdPrereqs, startContainerd, type Containerd } from '../../enforcer/support/containerd.js';
import { stopHelper } from '../../enforcer/support/enforcer-process.js';
import {
  DEPENDENCY_PACKAGES,
  debianRootfsTar,
  packageUnderTest,
  removeRootfs,
  unpackRootfs,
} from './debian-rootfs.js';

const NODE_LABEL = 'rtctl.test/systemd-mode';

/** The host's cgroup v2 root (read only: the test looks, never attaches). */
function cgroup2Root(): string {
  return resolveCgroup2Root('/sys/fs/cgroup');
}

async function waitUntil(predicate: () => boolean | Promise<boolean>, timeoutMs: number): Promise<boolean> {
  const end = Date.now() + timeoutMs;
  while (Date.now() < end) {
    if (await predicate()) return true;
    await sleep(200);
  }
  return predicate();
}

/** GET a path of the enforcer's unix socket. */
function getText(socketPath: string, path: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = request({ socketPath, path, timeout: 10000 }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () => resolve(body));
    });
    req.on('error', reject);
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.end();
  });
}

describe('systemd mode: the packaged enforcer started as its unit says (fanotify, real kernel)', function () {
  this.timeout(1800000);
  const id = randomBytes(4).toString('hex');
  let root = '';
  let work = '';
  let cd: Containerd | undefined;
  let enforcer: ChildProcess | undefined;
  let stderr = '';
  const mounts: string[] = [];
  let unit = '';

  const configText = (hostPosture: 'audit' | 'block'): string =>
    [
      'apiVersion: security.runtime.com/v1',
      'kind: EnforcerConfiguration',
      'policyDir: /etc/rtctl/policies',
      `nodeName: systemd-mode-${id}`,
      'nodeLabels:',
      `  ${NODE_LABEL}: "${id}"`,
      'dataPlane: fanotify',
      'pollMs: 200',
      'postures:',
      `  host: ${hostPosture}`,
      'containers:',
      `  socket: ${cd?.socket ?? ''}`,
      '  namespaces: [k8s.io, default]',
      'alertLog:',
      '  path: /var/log/rtctl/alerts.jsonl',
      'listen:',
      '  socket: /run/rtctl/alerts.sock',
      '',
    ].join('\n');

  const chroot = (
    args: readonly string[],
    env: readonly string[] = [],
  ): { status: number | null; out: string } => {
    const r = spawnSync(
      'chroot',
      [root, 'env', '-i', 'PATH=/usr/sbin:/usr/bin:/sbin:/bin', ...env, ...args],
      {
        encoding: 'utf8',
        timeout: 300000,
      },
    );
    return { status: r.status, out: `${r.stdout}${r.stderr}` };
  };

  /** What systemd does before ExecStart, from the unit's settings, then ExecStart itself. */
  async function startAsUnit(): Promise<void> {
    for (const [key, base] of [
      ['RuntimeDirectory', '/run'],
      ['LogsDirectory', '/var/log'],
    ] as const) {
      const name = readUnitSetting(unit, key);
      const mode = readUnitSetting(unit, `${key}Mode`) ?? '0755';
      assert.ok(name !== undefined, `${key}= in the unit`);
      mkdirSync(join(root, base, name), { recursive: true });
      chmodSync(join(root, base, name), Number.parseInt(mode, 8));
    }
    const exec = parseExecStart(unit);
    const bounding = (readUnitSetting(unit, 'CapabilityBoundingSet') ?? '')
      .split(/\s+/)
      .map((c) => `+${c.toLowerCase().replace(/^cap_/, '')}`);
    const nnp = readUnitSetting(unit, 'NoNewPrivileges') === 'yes' ? ['--no-new-privs'] : [];
    const environment = [
      'PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin',
      'LANG=C',
      ...readUnitEnvironment(unit),
    ];
    stderr = '';
    const child = spawn(
      'chroot',
      [
        root,
        '/usr/bin/setpriv',
        `--bounding-set=-all,${bounding.join(',')}`,
        ...nnp,
        '--',
        '/usr/bin/env',
        '-i',
        ...environment,
        ...exec,
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    enforcer = child;
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (c: string) => (out += c));
    child.stderr.setEncoding('utf8').on('data', (c: string) => (stderr += c));
    const started = await waitUntil(() => /alerts: /.test(out) || child.exitCode !== null, 120000);
    assert.ok(started && child.exitCode === null, `the enforcer did not start:\n${stderr.slice(-3000)}`);
  }

  async function stopEnforcer(): Promise<void> {
    const child = enforcer;
    if (child === undefined || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((r) => child.once('exit', r));
    child.kill('SIGTERM');
    await exited;
  }

  const socket = (): string => join(root, 'run/rtctl/alerts.sock');

  async function alerts(): Promise<AlertRecord[]> {
    const body = await getText(socket(), '/alerts?follow=0').catch(() => '');
    return body
      .split('\n')
      .filter((l) => l.trim() !== '')
      .map((l) => JSON.parse(l) as AlertRecord);
  }

  const launch = (program: string): { status: number | null; stderr: string } => {
    const r = spawnSync(join(work, 'launcher'), ['-c', program], { encoding: 'utf8', timeout: 30000 });
    return { status: r.status, stderr: r.stderr };
  };

  before(async function () {
    requirePrereqs(this, [
      [isRoot(), 'root (chroot, fanotify)'],
      ...containerdPrereqs(),
      [hasCommand('dpkg-deb'), 'dpkg-deb'],
      [hasCommand('mmdebstrap'), 'mmdebstrap (apt-get install mmdebstrap)'],
      [hasCommand('strip'), 'strip (apt-get install binutils)'],
      [hasCommand('bpftool'), 'bpftool (apt-get install bpftool)'],
    ]);
    const deb = packageUnderTest();
    root = unpackRootfs(debianRootfsTar([...DEPENDENCY_PACKAGES, 'containerd']));
    copyFileSync(deb, join(root, 'tmp/rtctl.deb'));
    const installed = chroot(['dpkg', '-i', '/tmp/rtctl.deb']);
    assert.equal(installed.status, 0, installed.out);
    unit = readFileSync(join(root, PACKAGED_UNIT_PATH.slice(1)), 'utf8');

    // The kernel's view of processes for the helper (/proc/<pid>/root, exe, mountinfo).
    assert.equal(spawnSync('mount', ['-t', 'proc', 'proc', join(root, 'proc')]).status, 0);
    mounts.push(join(root, 'proc'));
    // What systemd gives a host and the unit's network plane uses: a bpffs at /sys/fs/bpf (this test's own
    // mount: the host's /sys/fs/bpf here is none) and the cgroup hierarchy at /sys/fs/cgroup (the host's,
    // bound in; the plane attaches only to the test's container, the host policy has no network rule).
    for (const d of ['sys/fs/bpf', 'sys/fs/cgroup', 'sys/kernel/btf'])
      mkdirSync(join(root, d), { recursive: true });
    // The kernel's BTF, which the network plane's loader relocates against (read-only).
    assert.equal(
      spawnSync('mount', ['--bind', '-o', 'ro', '/sys/kernel/btf', join(root, 'sys/kernel/btf')]).status,
      0,
    );
    mounts.push(join(root, 'sys/kernel/btf'));
    assert.equal(spawnSync('mount', ['-t', 'bpf', 'bpf', join(root, 'sys/fs/bpf')]).status, 0);
    mounts.push(join(root, 'sys/fs/bpf'));
    assert.equal(spawnSync('mount', ['--rbind', '/sys/fs/cgroup', join(root, 'sys/fs/cgroup')]).status, 0);
    assert.equal(spawnSync('mount', ['--make-rslave', join(root, 'sys/fs/cgroup')]).status, 0);
    mounts.push(join(root, 'sys/fs/cgroup'));

    // Test programs on the host's disk: a launcher (its children are the only least-permissive ones), an
    // allowed and an unlisted static program.
    work = mkdtempSync('/var/tmp/rtctl-systemd-mode-');
    copyFileSync('/bin/dash', join(work, 'launcher'));
    chmodSync(join(work, 'launcher'), 0o755);
    for (const d of ['allowed', 'unlisted']) {
      mkdirSync(join(work, d));
      copyFileSync('/bin/busybox', join(work, d, 'true'));
      chmodSync(join(work, d, 'true'), 0o755);
    }

    cd = await startContainerd();
    // The enforcer in the chroot reaches this containerd at the same path.
    mkdirSync(join(root, cd.dir), { recursive: true });
    assert.equal(spawnSync('mount', ['--bind', cd.dir, join(root, cd.dir)]).status, 0);
    mounts.push(join(root, cd.dir));
    await cd.runPlainContainer({ id: `sd-plain-${id}`, labels: { app: 'systemd-plain' } });

    writeFileSync(
      join(root, 'etc/rtctl/policies/host.yaml'),
      [
        'apiVersion: security.runtime.com/v1',
        'kind: RuntimeHostPolicy',
        'metadata:',
        '  name: host-allow-from-launcher',
        'spec:',
        '  nodeSelector:',
        '    matchLabels:',
        `      ${NODE_LABEL}: "${id}"`,
        '  process:',
        '    matchPaths:',
        `      - path: ${join(work, 'allowed/true')}`,
        '        fromSource:',
        `          - path: ${join(work, 'launcher')}`,
        '  action: Allow',
        '',
      ].join('\n'),
    );
    writeFileSync(
      join(root, 'etc/rtctl/policies/plain.yaml'),
      [
        'apiVersion: security.runtime.com/v1',
        'kind: RuntimePolicy',
        'metadata:',
        '  name: plain-block-cat',
        '  namespace: default',
        'spec:',
        '  selector:',
        '    matchLabels:',
        '      app: systemd-plain',
        '  process:',
        '    matchPaths:',
        '      - path: /bin/cat',
        '  action: Block',
        '---',
        'apiVersion: security.runtime.com/v1',
        'kind: RuntimePolicy',
        'metadata:',
        '  name: plain-no-imds',
        '  namespace: default',
        'spec:',
        '  selector:',
        '    matchLabels:',
        '      app: systemd-plain',
        '  network:',
        '    matchAddresses:',
        '      - cidr: 169.254.169.254/32',
        '  action: Block',
        '',
      ].join('\n'),
    );
    writeFileSync(join(root, 'etc/rtctl/enforcer.yaml'), configText('block'));
    await startAsUnit();
  });

  after(async function () {
    this.timeout(120000);
    await stopEnforcer();
    if (root !== '') {
      // As `rtctl uninstall --systemd` and the package's prerm do: release what the data plane keeps in force.
      const released = chroot(
        ['rtctl', 'enforcer', 'stop', '--data-plane', 'fanotify', '--state-dir', '/run/rtctl'],
        readUnitEnvironment(unit),
      );
      if (released.status !== 0) await stopHelper(join(root, 'run/rtctl/fanotify.sock'));
    }
    await cd?.stop();
    for (const m of mounts.reverse()) spawnSync('umount', ['-l', m]);
    if (work !== '') rmSync(work, { recursive: true, force: true });
    if (root !== '') removeRootfs(root);
  });

  it('starts from the unit: ExecStart is the installed rtctl with the installed configuration, within the bounding set', () => {
    assert.deepEqual(parseExecStart(unit), [
      '/usr/bin/rtctl',
      'enforcer',
      'run',
      '--config',
      '/etc/rtctl/enforcer.yaml',
    ]);
    assert.deepEqual(readUnitSetting(unit, 'CapabilityBoundingSet')?.split(' '), [...ENFORCER_CAPABILITIES]);
    // chroot, setpriv, env and the /usr/bin/rtctl wrapper each exec the next: the child is the enforcer itself.
    const status = readFileSync(`/proc/${enforcer?.pid ?? 0}/status`, 'utf8');
    assert.match(
      readFileSync(`/proc/${enforcer?.pid ?? 0}/cmdline`, 'utf8'),
      /rtctl\.js\0enforcer\0run\0--config/,
    );
    assert.match(status, /^NoNewPrivs:\s+1$/m);
    const bits = BigInt(`0x${/^CapBnd:\s+([0-9a-f]+)$/m.exec(status)?.[1] ?? '0'}`);
    // CAP_CHOWN 0, CAP_DAC_READ_SEARCH 2, CAP_NET_ADMIN 12, CAP_SYS_PTRACE 19, CAP_SYS_ADMIN 21,
    // CAP_PERFMON 38, CAP_BPF 39: exactly these.
    const expected = [0, 2, 12, 19, 21, 38, 39].reduce((a, b) => a | (1n << BigInt(b)), 0n);
    assert.equal(bits.toString(16), expected.toString(16), "the bounding set is the unit's");
  });

  it('host in block posture under an Allow host policy: an unlisted binary is denied with a DefaultPosture alert', async () => {
    const unlisted = join(work, 'unlisted/true');
    assert.ok(
      await waitUntil(() => launch(unlisted).status === 126, 60000),
      `never denied:\n${stderr.slice(-3000)}`,
    );
    assert.match(launch(unlisted).stderr, /Operation not permitted|Permission denied/);
    assert.equal(launch(join(work, 'allowed/true')).status, 0, 'the listed binary runs');
    // Only the launcher's children are least-permissive: the same binary started otherwise runs.
    assert.equal(spawnSync('/bin/sh', ['-c', unlisted]).status, 0);
    let alert: AlertRecord | undefined;
    await waitUntil(async () => {
      alert = (await alerts()).find((a) => a.PolicyName === 'DefaultPosture' && a.Resource === unlisted);
      return alert !== undefined;
    }, 15000);
    assert.ok(alert, 'a DefaultPosture alert');
    assert.equal(alert.Action, 'Block');
    assert.equal(alert.Type, 'MatchedHostPolicy');
    assert.equal(alert.HostName, `systemd-mode-${id}`);
    // The installed `rtctl logs` reads it from the installed socket.
    const logs = chroot([
      'rtctl',
      'logs',
      '--json',
      '--no-follow',
      '--server',
      'unix:/run/rtctl/alerts.sock',
    ]);
    assert.equal(logs.status, 0, logs.out);
    assert.ok(logs.out.includes('"PolicyName":"DefaultPosture"'), logs.out.slice(-2000));
    // The alert log in the unit's LogsDirectory.
    assert.match(readFileSync(join(root, 'var/log/rtctl/alerts.jsonl'), 'utf8'), /DefaultPosture/);
  });

  it('a containerd container without Kubernetes labels is protected by a RuntimePolicy selecting its labels', async () => {
    const c = `sd-plain-${id}`;
    assert.ok(
      await waitUntil(async () => (await cd?.exec(c, ['/bin/cat', '/data/hello.txt']))?.code !== 0, 60000),
      `never denied in the container:\n${stderr.slice(-3000)}`,
    );
    const echo = await cd?.exec(c, ['/bin/echo', 'ok']);
    assert.equal(echo?.code, 0, 'other programs run');
    let alert: AlertRecord | undefined;
    await waitUntil(async () => {
      alert = (await alerts()).find((a) => a.PolicyName === 'plain-block-cat' && a.ContainerID === c);
      return alert !== undefined;
    }, 15000);
    assert.ok(alert);
    assert.equal(alert.NamespaceName, 'default');
    assert.equal(alert.ContainerName, c);
    assert.equal(alert.Action, 'Block');
  });

  it("network rules are enforced as the unit's environment sets the plane up: a connect to the metadata address in the container fails with EPERM and is reported", async () => {
    const c = `sd-plain-${id}`;
    const env = readUnitEnvironment(unit);
    assert.ok(env.includes('RTCTL_NETWORK_PIN_DIR=/sys/fs/bpf/rtctl-net'), env.join(' '));
    // The container's own network namespace (only lo): never the host's metadata address.
    let nc: { code: number; stdout: string; stderr: string } | undefined;
    assert.ok(
      await waitUntil(async () => {
        nc = await cd?.exec(c, ['/bin/busybox', 'nc', '-w', '2', '169.254.169.254', '80']);
        return /Operation not permitted/.test(`${nc?.stderr ?? ''}${nc?.stdout ?? ''}`);
      }, 60000),
      `never denied: ${JSON.stringify(nc)}\n${stderr.slice(-3000)}`,
    );
    let alert: AlertRecord | undefined;
    await waitUntil(async () => {
      alert = (await alerts()).find((a) => a.PolicyName === 'plain-no-imds' && a.ContainerID === c);
      return alert !== undefined;
    }, 15000);
    assert.ok(alert);
    assert.equal(alert.Operation, 'Network');
    assert.equal(alert.Enforcer, 'CgroupBPF');
    assert.equal(alert.Resource, '169.254.169.254:80');
    assert.equal(alert.Action, 'Block');
    // Pinned on the bpffs the unit names; nothing of ours on the host's root cgroup.
    assert.ok(existsSync(join(root, 'sys/fs/bpf/rtctl-net/prog_rtn_connect4')));
    const show = spawnSync('bpftool', ['cgroup', 'show', cgroup2Root()], { encoding: 'utf8' });
    assert.doesNotMatch(show.stdout, /rtn_/, show.stdout);
  });

  it('audit mode (host: audit): the unlisted binary runs and is reported with a DefaultPosture Audit alert', async () => {
    await stopEnforcer();
    writeFileSync(join(root, 'etc/rtctl/enforcer.yaml'), configText('audit'));
    await startAsUnit();
    const unlisted = join(work, 'unlisted/true');
    assert.ok(
      await waitUntil(() => launch(unlisted).status === 0, 60000),
      `still denied in audit mode:\n${stderr.slice(-3000)}`,
    );
    let alert: AlertRecord | undefined;
    await waitUntil(async () => {
      alert = (await alerts()).find(
        (a) => a.PolicyName === 'DefaultPosture' && a.Resource === unlisted && a.Action === 'Audit',
      );
      if (alert === undefined) launch(unlisted);
      return alert !== undefined;
    }, 15000);
    assert.ok(alert, 'a DefaultPosture Audit alert');
    assert.equal(alert.Result, 'Passed');
  });
});
