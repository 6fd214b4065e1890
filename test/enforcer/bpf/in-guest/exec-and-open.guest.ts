// The essential BPF-LSM behaviours inside the guest kernel: a Block on an exec gives `Permission
// denied` and exit 126 with a BPFLSM alert naming the exec system call; file opens are audited and
// blocked by path, directory and read-only rules, for a mount-namespace and a cgroup workload.
import assert from 'node:assert/strict';
import { copyFileSync } from 'node:fs';
import { buildAlertRecord } from '../../../../enforcer/alerts/alert-record.js';
import type { Workload } from '../../../../enforcer/workload.js';
import type { BpfLsmPlane } from '../../../../enforcer/bpf/bpf-lsm-plane.js';
import {
  AUDIT_POSTURES,
  EventCollector,
  buildTable,
  compileRuleSet,
  createCgroupWorkload,
  createNamespaceWorkload,
  runInCgroup,
  runInNamespace,
  startPlane,
  writeTestFile,
  type NamespaceWorkload,
} from './guest-support.js';

const POLICY = `apiVersion: security.runtime.com/v1
kind: RuntimePolicy
metadata:
  name: block-tools
  namespace: guest
spec:
  selector:
    matchLabels:
      app: demo
  process:
    matchPaths:
      - path: /tmp/rt/bin/blocked-tool
        action: Block
        severity: 5
  file:
    matchPaths:
      - path: /tmp/rt/data/secret.txt
        action: Block
      - path: /tmp/rt/data/audited.txt
        action: Audit
    matchDirectories:
      - dir: /tmp/rt/ro/
        recursive: true
        readOnly: true
        action: Block
  action: Block
`;

const CONTEXT = {
  clusterName: 'guest',
  hostName: 'rtctl-guest',
  enforcer: 'BPFLSM',
  auditEnforcer: 'eBPF Monitor',
};
const WORKLOAD_INFO: Workload = {
  key: 'ns-demo',
  kind: 'container',
  pid: 0,
  cgroupPath: '',
  namespace: 'guest',
  podName: 'demo',
  podLabels: { app: 'demo' },
  containerId: 'ns-demo',
  containerName: 'demo',
  image: 'local/demo@sha256:0',
};

describe('BPF-LSM: exec and open decisions', function () {
  this.timeout(120_000);
  let plane: BpfLsmPlane;
  let events: EventCollector;
  let ns: NamespaceWorkload;
  const cg = createCgroupWorkload('cg-demo', 'exec-open');

  before(async () => {
    writeTestFile('/tmp/rt/data/secret.txt', 'secret\n');
    writeTestFile('/tmp/rt/data/audited.txt', 'audited\n');
    writeTestFile('/tmp/rt/data/free.txt', 'free\n');
    writeTestFile('/tmp/rt/ro/sub/conf.txt', 'conf\n');
    writeTestFile('/tmp/rt/bin/.keep', '');
    copyFileSync('/usr/bin/true', '/tmp/rt/bin/blocked-tool');
    copyFileSync('/usr/bin/true', '/tmp/rt/bin/allowed-tool');
    runInCgroup('/', 'chmod 755 /tmp/rt/bin/blocked-tool /tmp/rt/bin/allowed-tool');
    const { image, table } = buildTable(compileRuleSet({ 'policy.yaml': POLICY }));
    assert.equal(table.policyCount, 1);
    plane = await startPlane('exec-open');
    events = new EventCollector(plane);
    ns = createNamespaceWorkload('ns-demo');
    await plane.apply({
      generation: 1,
      table: image,
      workloads: [
        { anchor: ns.anchor, policies: [0], postures: AUDIT_POSTURES },
        { anchor: cg.anchor, policies: [0], postures: AUDIT_POSTURES },
      ],
    });
  });

  after(async () => {
    ns.stop();
    await plane.stop({ keepEnforcing: false });
    await events.finished();
    cg.remove();
  });

  it('denies a blocked exec: Permission denied, exit 126', () => {
    const r = runInNamespace(ns.anchor.pid, '/tmp/rt/bin/blocked-tool');
    assert.equal(r.status, 126, `status ${r.status}, stderr ${r.stderr}`);
    assert.match(r.stderr, /Permission denied/);
  });

  it('reports the blocked exec as Enforcer BPFLSM, Result Permission denied, Data syscall=SYS_EXECVE', async () => {
    const e = await events.waitFor(
      (x) => x.operation === 'Process' && x.resource === '/tmp/rt/bin/blocked-tool',
    );
    assert.ok(e, `no Process event; got ${JSON.stringify(events.events.map((x) => x.resource))}`);
    assert.equal(e.workload, 'ns-demo');
    assert.equal(e.errno, 13);
    const alert = buildAlertRecord(e, WORKLOAD_INFO, CONTEXT);
    assert.equal(alert.Enforcer, 'BPFLSM');
    assert.equal(alert.Result, 'Permission denied');
    assert.equal(alert.Action, 'Block');
    assert.equal(alert.PolicyName, 'block-tools');
    assert.equal(alert.Severity, '5');
    assert.match(alert.Data, /^syscall=SYS_EXECVE/);
    assert.equal(alert.ProcessName, '/tmp/rt/bin/blocked-tool');
  });

  it('lets an unlisted binary run in the same workload', () => {
    const r = runInNamespace(ns.anchor.pid, '/tmp/rt/bin/allowed-tool');
    assert.equal(r.status, 0, r.stderr);
  });

  it('does not touch processes outside the workloads', () => {
    const r = runInCgroup('/', '/tmp/rt/bin/blocked-tool');
    assert.equal(r.status, 0, r.stderr);
  });

  it('blocks reading a blocked file with Permission denied', () => {
    const r = runInNamespace(ns.anchor.pid, 'cat /tmp/rt/data/secret.txt');
    assert.notEqual(r.status, 0);
    assert.match(r.stderr, /Permission denied/);
  });

  it('audits an audited file: the read passes and the alert says eBPF Monitor, Passed, SYS_OPENAT', async () => {
    const r = runInNamespace(ns.anchor.pid, 'cat /tmp/rt/data/audited.txt');
    assert.equal(r.status, 0, r.stderr);
    assert.equal(r.stdout, 'audited\n');
    const e = await events.waitFor(
      (x) => x.operation === 'File' && x.resource === '/tmp/rt/data/audited.txt',
    );
    assert.ok(e, 'no audit event');
    const alert = buildAlertRecord(e, WORKLOAD_INFO, CONTEXT);
    assert.equal(alert.Enforcer, 'eBPF Monitor');
    assert.equal(alert.Result, 'Passed');
    assert.equal(alert.Action, 'Audit');
    assert.match(alert.Data, /^syscall=SYS_OPENAT fd=-100 flags=O_RDONLY/);
  });

  it('reads an unlisted file without an alert', async () => {
    const r = runInNamespace(ns.anchor.pid, 'cat /tmp/rt/data/free.txt');
    assert.equal(r.status, 0, r.stderr);
    await new Promise((res) => setTimeout(res, 300));
    assert.equal(events.events.filter((x) => x.resource === '/tmp/rt/data/free.txt').length, 0);
  });

  it('read-only directory rule: reads pass, writes are denied', () => {
    const read = runInNamespace(ns.anchor.pid, 'cat /tmp/rt/ro/sub/conf.txt');
    assert.equal(read.status, 0, read.stderr);
    const write = runInNamespace(ns.anchor.pid, 'echo x >> /tmp/rt/ro/sub/conf.txt');
    assert.notEqual(write.status, 0);
    assert.match(write.stderr, /Permission denied/);
  });

  it('enforces on a cgroup workload too (keyed by cgroup id)', async () => {
    const r = runInCgroup(cg.cgroupPath, 'exec /tmp/rt/bin/blocked-tool');
    assert.equal(r.status, 126, `status ${r.status} ${r.stderr}`);
    const e = await events.waitFor((x) => x.workload === 'cg-demo' && x.operation === 'Process');
    assert.ok(e, 'no event for the cgroup workload');
  });

  it('counts decisions and no drops', async () => {
    const s = await plane.stats();
    assert.ok(s.decisions > 0);
    assert.equal(s.dropped, 0);
    assert.equal(s.workloads, 2);
  });
});
