// The IMDS guard end to end on the real kernel, without BPF-LSM: the project's IMDS service (`rtctl imds serve`,
// hop limit 2, tokens required) listens on 169.254.169.254 inside a server namespace this test creates; a router
// namespace forwards to a client namespace one hop away (like pods behind a node). Two worker processes in the
// client namespace stand for two pods, each in a cgroup this test creates, enforced by the cgroup network plane
// with policies/hardening/imds/imds-guard.yaml: the unlabelled pod's connect fails with EPERM and is reported,
// the labelled pod gets a token; a host policy blocking the same address applies to the host cgroup only; a
// Block `matchProtocols: raw` rule denies busybox ping and iputils ping, and a Block `matchProtocols: icmp` rule
// denies iputils ping too (its raw ICMP socket is named raw and icmp). Nothing is attached to a cgroup the test
// did not create.
import assert from 'node:assert/strict';
import { execFileSync, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, rmdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Workload } from '../../../compiler/decide/decision-input.js';
import { lintTexts } from '../../../compiler/lint.js';
import { resolvePostures } from '../../../compiler/model/posture.js';
import { buildRuleTableImage } from '../../../compiler/rule-table/build-rule-table.js';
import { readRuleTable } from '../../../compiler/rule-table/read-rule-table.js';
import type { DataPlaneEvent, WorkloadEnforcement } from '../../../enforcer/data-plane.js';
import { NetworkPlane, findCgroup2Mount } from '../../../enforcer/network/network-plane.js';
import { hasCommand, isRoot, requirePrereqs } from '../../support/prereq.js';
import { Worker } from './net-worker.js';

const ROOT = resolve(fileURLToPath(import.meta.url), '../../../..');
const LOADER = join(ROOT, 'dist/native/network/rtctl-net-loader');
const OBJECT = join(ROOT, 'dist/native/network/rtctl-net.bpf.o');
const CLI = join(ROOT, 'test/imds/support/run-imds-cli.ts');
const GUARD = join(ROOT, 'policies/hardening/imds/imds-guard.yaml');
const EPERM = 1;
const PREFIX = 'rtnetg-';
const NS = {
  server: `${PREFIX}${process.pid}-srv`,
  router: `${PREFIX}${process.pid}-rtr`,
  client: `${PREFIX}${process.pid}-cli`,
};

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

function createTopology(): void {
  for (const ns of Object.values(NS)) {
    ip('netns', 'add', ns);
    ip('-n', ns, 'link', 'set', 'lo', 'up');
  }
  ip('link', 'add', 's0', 'netns', NS.server, 'type', 'veth', 'peer', 'name', 'r0', 'netns', NS.router);
  ip('link', 'add', 'c0', 'netns', NS.client, 'type', 'veth', 'peer', 'name', 'r1', 'netns', NS.router);
  ip('-n', NS.server, 'addr', 'add', '192.0.2.2/24', 'dev', 's0');
  ip('-n', NS.server, 'addr', 'add', '169.254.169.254/32', 'dev', 'lo');
  ip('-n', NS.server, 'link', 'set', 's0', 'up');
  ip('-n', NS.server, 'route', 'add', 'default', 'via', '192.0.2.1');
  ip('-n', NS.router, 'addr', 'add', '192.0.2.1/24', 'dev', 'r0');
  ip('-n', NS.router, 'addr', 'add', '198.51.100.1/24', 'dev', 'r1');
  ip('-n', NS.router, 'link', 'set', 'r0', 'up');
  ip('-n', NS.router, 'link', 'set', 'r1', 'up');
  ip('-n', NS.router, 'route', 'add', '169.254.169.254/32', 'via', '192.0.2.2');
  execFileSync('ip', ['netns', 'exec', NS.router, 'sh', '-c', 'echo 1 > /proc/sys/net/ipv4/ip_forward']);
  ip('-n', NS.client, 'addr', 'add', '198.51.100.2/24', 'dev', 'c0');
  ip('-n', NS.client, 'link', 'set', 'c0', 'up');
  ip('-n', NS.client, 'route', 'add', 'default', 'via', '198.51.100.1');
}

const HOST_POLICY = `apiVersion: security.runtime.com/v1
kind: RuntimeHostPolicy
metadata: {name: host-no-imds}
spec:
  nodeSelector: {matchLabels: {kubernetes.io/os: linux}}
  network:
    matchAddresses:
      - cidr: 169.254.169.254/32
  action: Block
`;
const NO_RAW = `apiVersion: security.runtime.com/v1
kind: RuntimePolicy
metadata: {name: no-raw, namespace: team-a}
spec:
  selector: {matchLabels: {app: web}}
  network:
    matchProtocols:
      - protocol: raw
  action: Block
`;
const NO_ICMP = `apiVersion: security.runtime.com/v1
kind: RuntimePolicy
metadata: {name: no-icmp, namespace: team-a}
spec:
  selector: {matchLabels: {app: db}}
  network:
    matchProtocols:
      - protocol: icmp
  action: Block
`;

describe('IMDS guard with the cgroup network plane (IMDS service in test-created network namespaces)', function () {
  this.timeout(120_000);
  let work = '';
  let bpffs = '';
  let cgRoot = '';
  let cgTest = '';
  const cg = { plain: '', labelled: '', host: '', other: '', icmp: '' };
  let server: ChildProcess | undefined;
  let plane: NetworkPlane | undefined;
  const workers: Worker[] = [];
  const events: DataPlaneEvent[] = [];

  before(async function () {
    let cgroup2 = '';
    try {
      cgroup2 = findCgroup2Mount();
    } catch {
      // reported below
    }
    requirePrereqs(this, [
      [isRoot(), 'root (namespaces, cgroups, BPF)'],
      [cgroup2 !== '', 'a cgroup v2 mount'],
      [existsSync(LOADER) && existsSync(OBJECT), 'the network plane built (npm run build:native)'],
      [
        hasCommand('ip') && hasCommand('python3') && hasCommand('busybox') && hasCommand('ping'),
        'iproute2, python3, busybox and ping (iputils-ping)',
      ],
    ]);
    removeNamespaces();
    createTopology();
    work = mkdtempSync(join(tmpdir(), 'rtctl-netg-'));
    bpffs = join(work, 'bpffs');
    mkdirSync(bpffs);
    execFileSync('mount', ['-t', 'bpf', 'bpf', bpffs]);
    cgRoot = cgroup2;
    cgTest = join(cgRoot, `rtctl-test-netg-${process.pid}`);
    cg.plain = join(cgTest, 'pod-plain');
    cg.labelled = join(cgTest, 'pod-labelled');
    cg.host = join(cgTest, 'host');
    // A container no policy selects, below the host cgroup (as pods are below the root on a node).
    cg.other = join(cg.host, 'pod-other');
    // A pod (app=db) under the Block icmp rule, for ping only.
    cg.icmp = join(cgTest, 'pod-icmp');
    for (const d of Object.values(cg)) mkdirSync(d, { recursive: true });
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
        '169.254.169.254:80',
        '--manage-listen',
        '127.0.0.1:9180',
        '--manage-token-file',
        join(work, 'manage-token'),
      ],
      { cwd: ROOT, stdio: ['ignore', 'ignore', 'pipe'] },
    );
    server = child;
    await new Promise<void>((resolve, reject) => {
      let log = '';
      const timer = setTimeout(() => reject(new Error(`imds not ready: ${log}`)), 30_000);
      child.stderr?.on('data', (d: Buffer) => {
        log += d.toString();
        if (log.includes('"imds ready"')) {
          clearTimeout(timer);
          resolve();
        }
      });
      child.on('exit', (code) => reject(new Error(`imds exited ${code}: ${log}`)));
    });
    for (const dir of [cg.plain, cg.labelled, cg.host, cg.other]) {
      const w = new Worker(dir, NS.client);
      await w.ready();
      workers.push(w);
    }
    plane = new NetworkPlane({
      loaderPath: LOADER,
      objectPath: OBJECT,
      pinDir: join(bpffs, 'net'),
      stateDir: work,
      hostCgroup: cg.host,
      cgroupRoot: cgRoot,
    });
    await plane.start();
    void (async () => {
      for await (const e of plane.events()) events.push(e);
    })();
    // Policies: the shipped guard in namespace team-a, a host policy, and a raw-socket block for app=web.
    const guard = readFileSync(GUARD, 'utf8').replace(
      'name: imds-guard',
      'name: imds-guard\n  namespace: team-a',
    );
    const { ruleSet, diagnostics } = lintTexts([
      { file: 'imds-guard.yaml', text: guard },
      { file: 'host.yaml', text: HOST_POLICY },
      { file: 'no-raw.yaml', text: NO_RAW },
      { file: 'no-icmp.yaml', text: NO_ICMP },
    ]);
    assert.deepEqual(
      diagnostics.filter((d) => d.severity === 'error'),
      [],
    );
    const image = buildRuleTableImage(ruleSet);
    const read = readRuleTable(image.bytes);
    assert.ok(read.ok);
    const enforce = (key: string, dir: string, pid: number, workload: Workload): WorkloadEnforcement => {
      const set = read.table.selectPolicies(workload);
      return {
        anchor: { key, host: workload.kind === 'host', pid, cgroupPath: dir.slice(cgRoot.length) },
        policies: image.records.policies
          .map((_, i) => i)
          .filter((i) => ((set.bits[i >>> 3] ?? 0) >> (i & 7)) & 1),
        postures: resolvePostures({}),
      };
    };
    await plane.apply({
      generation: 1,
      table: image,
      workloads: [
        enforce('pod-plain', cg.plain, workers[0]?.pid ?? 0, {
          kind: 'container',
          namespace: 'team-a',
          labels: { app: 'web' },
          nodeLabels: {},
        }),
        enforce('pod-labelled', cg.labelled, workers[1]?.pid ?? 0, {
          kind: 'container',
          namespace: 'team-a',
          labels: { app: 'agent', 'security.runtime.com/imds-access': 'allowed' },
          nodeLabels: {},
        }),
        enforce('pod-icmp', cg.icmp, 1, {
          kind: 'container',
          namespace: 'team-a',
          labels: { app: 'db' },
          nodeLabels: {},
        }),
        enforce('host', cg.host, 1, {
          kind: 'host',
          namespace: '',
          labels: {},
          nodeLabels: { 'kubernetes.io/os': 'linux' },
        }),
      ],
      unselected: [
        {
          key: 'pod-other',
          host: false,
          pid: workers[3]?.pid ?? 0,
          cgroupPath: cg.other.slice(cgRoot.length),
        },
      ],
    });
  });

  after(async () => {
    for (const w of workers) await w.stop();
    await plane?.stop({ keepEnforcing: false }).catch(() => undefined);
    if (server !== undefined && server.exitCode === null) server.kill('SIGKILL');
    removeNamespaces();
    for (const d of [cg.plain, cg.labelled, cg.icmp, cg.other, cg.host, cgTest])
      if (d !== '' && existsSync(d)) rmdirSync(d);
    if (bpffs !== '') execFileSync('umount', [bpffs]);
    if (work !== '') rmSync(work, { recursive: true, force: true });
  });

  async function waitFor(pred: (e: DataPlaneEvent) => boolean): Promise<DataPlaneEvent> {
    const deadline = Date.now() + 10_000;
    for (;;) {
      const e = events.find(pred);
      if (e !== undefined) return e;
      if (Date.now() > deadline) assert.fail(`no such event among ${JSON.stringify(events)}`);
      await new Promise((r) => setTimeout(r, 20));
    }
  }

  it('the unlabelled pod cannot reach the metadata service: EPERM, and a Block event from imds-guard', async () => {
    const got = await workers[0]?.token('169.254.169.254');
    assert.deepEqual(got, { error: EPERM });
    const e = await waitFor((x) => x.workload === 'pod-plain' && x.policyName === 'imds-guard');
    assert.equal(e.action, 'Block');
    assert.equal(e.resource, '169.254.169.254:80');
    assert.equal(e.syscall, 'SYS_CONNECT');
    assert.equal(e.severity, 8);
  });

  it('the labelled pod gets a token one hop away (hop limit 2), the host policy does not affect it', async () => {
    const got = await workers[1]?.token('169.254.169.254');
    assert.equal(got?.status, 200, JSON.stringify(got));
    assert.ok((got?.body ?? '').length > 20, 'a token');
  });

  it('the host policy applies to the host cgroup', async () => {
    assert.deepEqual(await workers[2]?.token('169.254.169.254'), { error: EPERM });
    const e = await waitFor((x) => x.workload === 'host' && x.policyName === 'host-no-imds');
    assert.equal(e.action, 'Block');
  });

  it('a container no policy selects, below the host cgroup, is not reached by the host policy', async () => {
    const got = await workers[3]?.token('169.254.169.254');
    assert.equal(got?.status, 200, JSON.stringify(got));
    assert.equal(events.filter((x) => x.workload === 'pod-other').length, 0);
    assert.deepEqual((await plane?.enforced())?.workloads.includes('pod-other'), false);
  });

  /**
   * Runs iputils ping as root from the client namespace to the router (one hop; not the metadata address, whose
   * connects the guard blocks: ping's source-address probe connects a UDP socket), in a pod's cgroup. Ping
   * sockets are switched off in the namespace for the run (ping_group_range "1 0", set back after), so ping
   * opens a raw ICMP socket, as it does as root where ping sockets are not allowed.
   */
  function ping(
    cgroupDir: string,
    command = 'ping',
  ): { status: number | null; stdout: string; stderr: string } {
    const sysctl = '/proc/sys/net/ipv4/ping_group_range';
    const script = `echo '1 0' > ${sysctl}; ${command} -c 1 -W 2 198.51.100.1; rc=$?; echo '0 2147483647' > ${sysctl}; exit $rc`;
    return spawnSync(
      'sh',
      [
        '-c',
        `echo $$ > ${join(cgroupDir, 'cgroup.procs')} && exec ip netns exec ${NS.client} sh -c "$1"`,
        'sh',
        script,
      ],
      { encoding: 'utf8', timeout: 20_000 },
    );
  }

  it('a Block matchProtocols raw rule denies iputils ping (its raw ICMP socket gets EPERM, reported as raw,icmp)', async () => {
    events.length = 0;
    const r = ping(cg.plain);
    assert.notEqual(r.status, 0, r.stdout + r.stderr);
    assert.match(r.stderr, /socket: Operation not permitted/);
    const e = await waitFor((x) => x.workload === 'pod-plain' && x.policyName === 'no-raw');
    assert.deepEqual([e.action, e.syscall, e.resource], ['Block', 'SYS_SOCKET', 'protocol=raw,icmp']);
    // The labelled pod has no raw rule: the same ping is answered.
    const ok = ping(cg.labelled);
    assert.equal(ok.status, 0, ok.stderr + ok.stdout);
  });

  it('a Block matchProtocols raw rule denies busybox ping in the pod (its raw ICMP socket gets EPERM)', async () => {
    events.length = 0;
    const r = ping(cg.plain, 'busybox ping');
    assert.notEqual(r.status, 0, r.stdout + r.stderr);
    assert.match(r.stderr, /not permitted|permission denied/i);
    const e = await waitFor((x) => x.workload === 'pod-plain' && x.policyName === 'no-raw');
    assert.deepEqual([e.action, e.resource], ['Block', 'protocol=raw,icmp']);
    const ok = ping(cg.labelled, 'busybox ping');
    assert.equal(ok.status, 0, ok.stderr + ok.stdout);
  });

  it('a Block matchProtocols icmp rule denies iputils ping too (the raw ICMP socket is also named icmp)', async () => {
    events.length = 0;
    const r = ping(cg.icmp);
    assert.notEqual(r.status, 0, r.stdout + r.stderr);
    assert.match(r.stderr, /socket: Operation not permitted/);
    const e = await waitFor((x) => x.workload === 'pod-icmp' && x.policyName === 'no-icmp');
    assert.deepEqual([e.action, e.syscall, e.resource], ['Block', 'SYS_SOCKET', 'protocol=raw,icmp']);
    // Only raw ICMP sockets reached the hook (the ping sockets ping tries first fail the group check before it).
    assert.deepEqual(
      [...new Set(events.filter((x) => x.workload === 'pod-icmp').map((x) => x.resource))],
      ['protocol=raw,icmp'],
    );
  });
});
