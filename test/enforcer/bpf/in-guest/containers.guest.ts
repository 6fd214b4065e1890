// The enforcer issue's end-to-end cases on the BPF-LSM plane, with real containers (containerd + runc
// from the host's files, started inside the guest by the shared containerd harness) labelled the way
// the kubelet labels pod containers: blocked exec (Permission denied, 126, BPFLSM alert with the pod's
// identity), audited directory read (eBPF Monitor), least-permissive mode under both postures, the
// service-account token directory, a host policy, and policy update/deletion without a restart.
// Each kernel outcome is also checked against the oracle.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { decideOperation } from '../../../../compiler/decide/decide.js';
import type {
  Postures as OraclePostures,
  Workload as OracleWorkload,
} from '../../../../compiler/decide/decision-input.js';
import type { RuleSet } from '../../../../compiler/ir/rule-set.js';
import { buildAlertRecord } from '../../../../enforcer/alerts/alert-record.js';
import type { BpfLsmPlane } from '../../../../enforcer/bpf/bpf-lsm-plane.js';
import type { DataPlaneEvent, Postures, WorkloadEnforcement } from '../../../../enforcer/data-plane.js';
import { describeContainer, type Workload } from '../../../../enforcer/workload.js';
import { startContainerd, type Containerd, type TestContainer } from '../../support/containerd.js';
import {
  EventCollector,
  buildTable,
  compileRuleSet,
  repoRoot,
  selectPolicyIndices,
  startPlane,
} from './guest-support.js';

const policy = (name: string, body: string): string =>
  `apiVersion: security.runtime.com/v1\n${body.replace('NAME', name)}`;

const BLOCK_SLEEP = (action: string): string =>
  policy(
    'block-sleep',
    `kind: RuntimePolicy
metadata: { name: NAME, namespace: ns-a }
spec:
  selector: { matchLabels: { app: web } }
  process:
    matchPaths:
      - path: /bin/sleep
  severity: 6
  action: ${action}
`,
  );
const AUDIT_DATA = policy(
  'audit-data',
  `kind: RuntimePolicy
metadata: { name: NAME, namespace: ns-a }
spec:
  selector: { matchLabels: { app: web } }
  file:
    matchDirectories:
      - dir: /data/
        recursive: true
  action: Audit
`,
);
const BLOCK_TOKEN = policy(
  'block-sa-token',
  `kind: RuntimePolicy
metadata: { name: NAME, namespace: ns-a }
spec:
  selector: { matchLabels: { app: web } }
  file:
    matchDirectories:
      - dir: /run/secrets/kubernetes.io/serviceaccount/
        recursive: true
  action: Block
`,
);
const LEAST_PERMISSIVE = policy(
  'allow-shell-tools',
  `kind: RuntimePolicy
metadata: { name: NAME, namespace: ns-lp }
spec:
  selector: { matchLabels: { app: lp } }
  process:
    matchPaths:
      - path: /bin/sh
      - path: /bin/echo
      - path: /bin/cat
  action: Allow
`,
);
const HOST_BLOCK = policy(
  'host-block-tool',
  `kind: RuntimeHostPolicy
metadata: { name: NAME }
spec:
  nodeSelector: { matchLabels: { kubernetes.io/hostname: rtctl-guest } }
  process:
    matchPaths:
      - path: /tmp/e2e/hostbin/true
  action: Block
`,
);

const NODE_LABELS = { 'kubernetes.io/hostname': 'rtctl-guest' };
const CONTEXT = {
  clusterName: 'guest',
  hostName: 'rtctl-guest',
  enforcer: 'BPFLSM',
  auditEnforcer: 'eBPF Monitor',
};
const AUDIT: Postures = { file: 'audit', network: 'audit', capabilities: 'audit' };
const BLOCK: Postures = { file: 'block', network: 'audit', capabilities: 'audit' };

function readCgroupPath(pid: number): string {
  const line = readFileSync(`/proc/${pid}/cgroup`, 'utf8')
    .split('\n')
    .find((l) => l.startsWith('0::'));
  return line?.slice(3) ?? '';
}

describe('BPF-LSM: end-to-end cases with containerd containers', function () {
  this.timeout(600_000);
  let containerd: Containerd;
  let plane: BpfLsmPlane;
  let events: EventCollector;
  const identities = new Map<string, Workload>();
  let web: TestContainer;
  let other: TestContainer;
  let lp: TestContainer;
  let generation = 0;
  let ruleSet: RuleSet;

  const oracleWorkload = (w: Workload): OracleWorkload => ({
    kind: w.kind,
    namespace: w.namespace,
    labels: w.podLabels,
    nodeLabels: NODE_LABELS,
  });

  /** Applies the given policies; the lp container gets `lpPosture`. */
  async function applyPolicies(texts: Record<string, string>, lpPosture: Postures): Promise<void> {
    ruleSet = compileRuleSet(texts);
    const { image, table } = buildTable(ruleSet);
    const workloads: WorkloadEnforcement[] = [];
    for (const c of [web, other, lp]) {
      const w = identities.get(c.id);
      if (w === undefined) continue;
      workloads.push({
        anchor: { key: c.id, host: false, pid: c.pid, cgroupPath: w.cgroupPath },
        policies: selectPolicyIndices(table, oracleWorkload(w)),
        postures: c === lp ? lpPosture : AUDIT,
      });
    }
    workloads.push({
      anchor: { key: 'host', host: true, pid: 1, cgroupPath: '' },
      policies: selectPolicyIndices(table, {
        kind: 'host',
        namespace: '',
        labels: {},
        nodeLabels: NODE_LABELS,
      }),
      postures: AUDIT,
    });
    generation++;
    await plane.apply({ generation, table: image, workloads });
  }

  function oracleAllows(
    c: TestContainer,
    operation: 'Process' | 'File',
    resource: string,
    postures: OraclePostures,
  ): boolean {
    const w = identities.get(c.id);
    assert.ok(w);
    const request =
      operation === 'Process'
        ? { operation, resource, parentExecutable: '/bin/sh', write: false, owner: true }
        : { operation, resource, executable: '/bin/cat', write: false, owner: true };
    return decideOperation(ruleSet, oracleWorkload(w), request, postures).allowed;
  }

  async function waitEvent(match: (e: DataPlaneEvent) => boolean): Promise<DataPlaneEvent> {
    const e = await events.waitFor(match);
    assert.ok(
      e,
      `no matching event among ${JSON.stringify(events.events.map((x) => [x.workload, x.operation, x.resource, x.generation]))}`,
    );
    return e;
  }

  before(async () => {
    execFileSync('sh', [path.join(repoRoot, 'test/guest/guest-modprobe.sh'), 'overlay']);
    mkdirSync('/tmp/e2e/token', { recursive: true });
    writeFileSync('/tmp/e2e/token/token', 'secret-token\n');
    mkdirSync('/tmp/e2e/hostbin', { recursive: true });
    copyFileSync('/bin/busybox', '/tmp/e2e/hostbin/true');
    containerd = await startContainerd();
    const mounts = [
      { source: '/tmp/e2e/token', destination: '/run/secrets/kubernetes.io/serviceaccount' },
      { source: '/tmp/e2e/hostbin', destination: '/tmp/e2e/hostbin' },
    ];
    web = await containerd.runContainer({
      id: 'web',
      pod: 'web-0',
      namespace: 'ns-a',
      container: 'web',
      labels: { app: 'web' },
      mounts,
    });
    other = await containerd.runContainer({
      id: 'other',
      pod: 'web-0',
      namespace: 'ns-b',
      container: 'web',
      labels: { app: 'web' },
      mounts,
    });
    lp = await containerd.runContainer({
      id: 'lp',
      pod: 'lp-0',
      namespace: 'ns-lp',
      container: 'lp',
      labels: { app: 'lp' },
    });
    for (const c of [web, other, lp]) {
      const labels = {
        ...c.labels,
        'io.kubernetes.pod.name': c.pod,
        'io.kubernetes.pod.namespace': c.namespace,
        'io.kubernetes.container.name': c.container,
      };
      identities.set(
        c.id,
        describeContainer({
          id: c.id,
          labels,
          image: `rtctl.test/busybox:1@${containerd.imageDigest}`,
          pid: c.pid,
          cgroupPath: readCgroupPath(c.pid),
        }),
      );
    }
    plane = await startPlane('e2e');
    events = new EventCollector(plane);
    await applyPolicies(
      {
        'sleep.yaml': BLOCK_SLEEP('Block'),
        'data.yaml': AUDIT_DATA,
        'token.yaml': BLOCK_TOKEN,
        'lp.yaml': LEAST_PERMISSIVE,
        'host.yaml': HOST_BLOCK,
      },
      BLOCK,
    );
  });

  after(async () => {
    await plane.stop({ keepEnforcing: false });
    await events.finished();
    await containerd.stop();
  });

  it('1. blocks /bin/sleep in the selected container: Permission denied, 126, one BPFLSM alert with the pod identity', async () => {
    const r = await containerd.exec(web.id, ['/bin/sh', '-c', '/bin/sleep 1']);
    assert.equal(r.code, 126, `${r.code} ${r.stderr}`);
    assert.match(r.stdout + r.stderr, /Permission denied/);
    assert.equal(oracleAllows(web, 'Process', '/bin/sleep', AUDIT), false);
    const e = await waitEvent(
      (x) => x.workload === 'web' && x.operation === 'Process' && x.resource === '/bin/sleep',
    );
    const w = identities.get('web');
    assert.ok(w);
    const alert = buildAlertRecord(e, w, CONTEXT);
    assert.equal(alert.Enforcer, 'BPFLSM');
    assert.equal(alert.Result, 'Permission denied');
    assert.equal(alert.Action, 'Block');
    assert.equal(alert.Operation, 'Process');
    assert.equal(alert.PolicyName, 'block-sleep');
    assert.equal(alert.NamespaceName, 'ns-a');
    assert.equal(alert.PodName, 'web-0');
    assert.equal(alert.ContainerName, 'web');
    assert.equal(alert.ContainerID, 'web');
    assert.match(alert.ContainerImage, /@sha256:/);
    assert.equal(alert.Labels, 'app=web');
    assert.match(alert.Data, /^syscall=SYS_EXECVE/);
    assert.equal(events.events.filter((x) => x.workload === 'web' && x.resource === '/bin/sleep').length, 1);
  });

  it('1. the unselected container runs /bin/sleep and yields no alert', async () => {
    const r = await containerd.exec(other.id, ['/bin/sh', '-c', '/bin/sleep 0']);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(oracleAllows(other, 'Process', '/bin/sleep', AUDIT), true);
    await new Promise((res) => setTimeout(res, 300));
    assert.equal(events.events.filter((x) => x.workload === 'other').length, 0);
  });

  it('2. audits a read in the audited directory: it succeeds, alert File/Audit/Passed/eBPF Monitor with the open flags', async () => {
    const r = await containerd.exec(web.id, ['/bin/cat', '/data/hello.txt']);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, 'hello from the image\n');
    const e = await waitEvent((x) => x.workload === 'web' && x.resource === '/data/hello.txt');
    const w = identities.get('web');
    assert.ok(w);
    const alert = buildAlertRecord(e, w, CONTEXT);
    assert.equal(alert.Operation, 'File');
    assert.equal(alert.Action, 'Audit');
    assert.equal(alert.Result, 'Passed');
    assert.equal(alert.Enforcer, 'eBPF Monitor');
    assert.match(alert.Data, /flags=O_RDONLY/);
    assert.equal(alert.ProcessName, '/bin/cat');
  });

  it('2. names each reader by its own executable when a shell that just exited ran the same busybox inode (hard links)', async () => {
    // /bin/sh and /bin/cat are hard links of one busybox inode. Each round, a shell forks a child that
    // execs /bin/true (the shell's executable path is read at that exec), then exits after it, so its exe
    // file is the last one freed (after an RCU grace period, which the shell's own count gives time for
    // without starting a process); the next cat's exe file is then allocated at that address. A cache
    // keyed by the address and the inode named cat /bin/sh.
    const rounds = 20;
    const from = events.events.length;
    const r = await containerd.exec(web.id, [
      '/bin/sh',
      '-c',
      `i=0; while [ $i -lt ${rounds} ]; do /bin/sh -c '/bin/true; exit 0'; j=0; while [ $j -lt 3000 ]; do j=$((j+1)); done; /bin/cat /data/hello.txt >/dev/null; i=$((i+1)); done`,
    ]);
    assert.equal(r.code, 0, r.stderr);
    const reads = (): DataPlaneEvent[] =>
      events.events.slice(from).filter((x) => x.workload === 'web' && x.resource === '/data/hello.txt');
    // Each read is reported once per audit policy selecting it (after test 6 there may be more than one).
    await events.waitFor(() => reads().length >= rounds);
    const names = reads().map((x) => x.processName);
    assert.ok(names.length >= rounds, JSON.stringify(names));
    assert.deepEqual(
      names.filter((n) => n !== '/bin/cat'),
      [],
      `${names.length} reads`,
    );
  });

  it('3. least-permissive with posture block: a binary outside the allow list is denied with a DefaultPosture alert', async () => {
    const r = await containerd.exec(lp.id, ['/bin/sh', '-c', '/bin/ls /']);
    assert.equal(r.code, 126, `${r.code} ${r.stderr}`);
    assert.match(r.stdout + r.stderr, /Permission denied/);
    assert.equal(oracleAllows(lp, 'Process', '/bin/ls', BLOCK), false);
    const e = await waitEvent((x) => x.workload === 'lp' && x.resource === '/bin/ls');
    assert.equal(e.policyName, 'DefaultPosture');
    assert.equal(e.action, 'Block');
    const ok = await containerd.exec(lp.id, ['/bin/sh', '-c', '/bin/echo allowed']);
    assert.equal(ok.code, 0, ok.stderr);
    assert.equal(ok.stdout, 'allowed\n');
  });

  it('3. least-permissive with posture audit: it runs and yields the audit alert', async () => {
    await applyPolicies(
      {
        'sleep.yaml': BLOCK_SLEEP('Block'),
        'data.yaml': AUDIT_DATA,
        'token.yaml': BLOCK_TOKEN,
        'lp.yaml': LEAST_PERMISSIVE,
        'host.yaml': HOST_BLOCK,
      },
      AUDIT,
    );
    const r = await containerd.exec(lp.id, ['/bin/sh', '-c', '/bin/ls / >/dev/null']);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(oracleAllows(lp, 'Process', '/bin/ls', AUDIT), true);
    const e = await waitEvent(
      (x) => x.workload === 'lp' && x.resource === '/bin/ls' && x.generation === generation,
    );
    assert.equal(e.policyName, 'DefaultPosture');
    assert.equal(e.action, 'Audit');
  });

  it('4. a Block on the service-account token directory makes reading the token fail', async () => {
    const r = await containerd.exec(web.id, ['/bin/cat', '/run/secrets/kubernetes.io/serviceaccount/token']);
    assert.notEqual(r.code, 0);
    assert.match(r.stdout + r.stderr, /Permission denied/);
    assert.equal(oracleAllows(web, 'File', '/run/secrets/kubernetes.io/serviceaccount/token', AUDIT), false);
    const free = await containerd.exec(other.id, [
      '/bin/cat',
      '/run/secrets/kubernetes.io/serviceaccount/token',
    ]);
    assert.equal(free.stdout, 'secret-token\n');
  });

  it('5. a host policy blocks a binary for host processes and not inside containers', async () => {
    let status = 0;
    let stderr = '';
    try {
      execFileSync('/bin/sh', ['-c', '/tmp/e2e/hostbin/true'], { stdio: ['ignore', 'ignore', 'pipe'] });
    } catch (err) {
      const e = err as { status?: number; stderr?: Buffer };
      status = e.status ?? -1;
      stderr = e.stderr?.toString('utf8') ?? '';
    }
    assert.equal(status, 126, stderr);
    assert.match(stderr, /Permission denied/);
    const e = await waitEvent((x) => x.workload === 'host' && x.resource === '/tmp/e2e/hostbin/true');
    assert.equal(e.policyName, 'host-block-tool');
    const inContainer = await containerd.exec(web.id, ['/bin/sh', '-c', '/tmp/e2e/hostbin/true']);
    assert.equal(inContainer.code, 0, inContainer.stderr);
  });

  it('6. a policy update (Block → Audit) and a deletion take effect without restarting anything', async () => {
    await applyPolicies(
      {
        'sleep.yaml': BLOCK_SLEEP('Audit'),
        'data.yaml': AUDIT_DATA,
        'token.yaml': BLOCK_TOKEN,
        'lp.yaml': LEAST_PERMISSIVE,
        'host.yaml': HOST_BLOCK,
      },
      AUDIT,
    );
    const audited = await containerd.exec(web.id, ['/bin/sh', '-c', '/bin/sleep 0']);
    assert.equal(audited.code, 0, audited.stderr);
    const e = await waitEvent(
      (x) => x.workload === 'web' && x.resource === '/bin/sleep' && x.generation === generation,
    );
    assert.equal(e.action, 'Audit');
    await applyPolicies(
      { 'data.yaml': AUDIT_DATA, 'token.yaml': BLOCK_TOKEN, 'lp.yaml': LEAST_PERMISSIVE },
      AUDIT,
    );
    const seen = events.events.length;
    const deleted = await containerd.exec(web.id, ['/bin/sh', '-c', '/bin/sleep 0']);
    assert.equal(deleted.code, 0, deleted.stderr);
    const host = execFileSync('/bin/sh', ['-c', '/tmp/e2e/hostbin/true; echo $?'], { encoding: 'utf8' });
    assert.equal(host.trim(), '0');
    await new Promise((res) => setTimeout(res, 300));
    assert.equal(events.events.slice(seen).filter((x) => x.resource === '/bin/sleep').length, 0);
  });
});
