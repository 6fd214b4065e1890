// Alert records from data-plane events: every field of the seed's table, filled from the event and the
// workload identity; Result from the errno the caller saw; host alerts typed MatchedHostPolicy.
import '../../support/property-seed.js';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import {
  buildAlertRecord,
  describeResult,
  eventTimeMs,
  type AlertRecord,
} from '../../../enforcer/alerts/alert-record.js';
import { formatAlert } from '../../../enforcer/alerts/format-alert.js';
import { alertTimeMs, matchesAlertFilter } from '../../../enforcer/alerts/alert-filter.js';
import type { DataPlaneEvent } from '../../../enforcer/data-plane.js';
import { describeContainer, describeHost, formatLabels } from '../../../enforcer/workload.js';

const SEED_FIELDS: Record<string, 'number' | 'string'> = {
  Timestamp: 'number',
  UpdatedTime: 'string',
  ClusterName: 'string',
  HostName: 'string',
  NamespaceName: 'string',
  PodName: 'string',
  Labels: 'string',
  ContainerID: 'string',
  ContainerName: 'string',
  ContainerImage: 'string',
  HostPPID: 'number',
  HostPID: 'number',
  PPID: 'number',
  PID: 'number',
  ParentProcessName: 'string',
  ProcessName: 'string',
  PolicyName: 'string',
  Severity: 'string',
  Type: 'string',
  Source: 'string',
  Operation: 'string',
  Resource: 'string',
  Data: 'string',
  Enforcer: 'string',
  Action: 'string',
  Result: 'string',
};

const container = describeContainer({
  id: 'abc123',
  labels: {
    'io.kubernetes.pod.name': 'web-1',
    'io.kubernetes.pod.namespace': 'ns-a',
    'io.kubernetes.container.name': 'web',
    'io.containerd.image.config.stop-signal': 'SIGTERM',
    app: 'web',
    tier: 'front',
  },
  image: 'reg/busybox:1@sha256:' + 'a'.repeat(64),
  pid: 4242,
  cgroupPath: '/k8s.io/abc123',
});

function event(over: Partial<DataPlaneEvent>): DataPlaneEvent {
  return {
    workload: 'abc123',
    timeNs: 1795333130349923022n,
    operation: 'Process',
    kind: 'Block',
    action: 'Block',
    errno: 1,
    generation: 3,
    ruleIndex: 0,
    policyName: 'block-sleep',
    severity: 7,
    tags: ['CIS', 'NIST'],
    message: 'no sleeping',
    hostPid: 5000,
    hostPpid: 4990,
    pid: 12,
    ppid: 7,
    uid: 0,
    processName: '/bin/sh',
    parentProcessName: '/usr/sbin/runc',
    resource: '/bin/sleep',
    syscall: 'SYS_EXECVE',
    syscallArgs: '',
    cgroup: '/k8s.io/abc123',
    cwd: '/',
    ...over,
  };
}

const context = { clusterName: 'c1', hostName: 'node-1', enforcer: 'Fanotify', auditEnforcer: 'Fanotify' };

describe('alert records', () => {
  it('time fields: the ISO text with microseconds, Timestamp in seconds, eventTimeMs = alertTimeMs of the record', () => {
    // Runs of events in the same millisecond and across milliseconds (the ISO text of the last millisecond
    // is reused): every record's times are those of the direct formula.
    const reference = (ns: bigint): { iso: string; seconds: number } => {
      const ms = Number(ns / 1_000_000n);
      const micros = Number((ns / 1000n) % 1000n);
      return {
        iso: new Date(ms).toISOString().replace('Z', `${String(micros).padStart(3, '0')}Z`),
        seconds: Number(ns / 1_000_000_000n),
      };
    };
    fc.assert(
      fc.property(
        fc.bigInt({ min: 0n, max: 4_102_444_800_000_000_000n }),
        fc.array(fc.bigInt({ min: 0n, max: 3_000_000n }), { maxLength: 8 }),
        (start, steps) => {
          let ns = start;
          for (const step of [0n, ...steps]) {
            ns += step;
            const a = buildAlertRecord(event({ timeNs: ns }), container, context);
            const want = reference(ns);
            assert.equal(a.UpdatedTime, want.iso);
            assert.equal(a.Timestamp, want.seconds);
            assert.equal(eventTimeMs({ timeNs: ns }), alertTimeMs(a));
          }
        },
      ),
    );
  });

  it('carry every seed field with its type, and the optional ones when known', () => {
    const a = buildAlertRecord(event({}), container, context);
    for (const [k, t] of Object.entries(SEED_FIELDS)) assert.equal(typeof a[k as keyof AlertRecord], t, k);
    assert.equal(a.Tags, 'CIS,NIST');
    assert.equal(a.Message, 'no sleeping');
    assert.equal(a.Cwd, '/');
    assert.equal(a.UID, 0);
  });

  const cases: { name: string; ev: Partial<DataPlaneEvent>; expect: Partial<AlertRecord>; host?: boolean }[] =
    [
      {
        name: 'a blocked exec: ProcessName is the binary, its parent the caller, Result from EPERM',
        ev: {},
        expect: {
          Operation: 'Process',
          Action: 'Block',
          Result: 'Operation not permitted',
          ProcessName: '/bin/sleep',
          ParentProcessName: '/bin/sh',
          Source: '/bin/sh',
          Resource: '/bin/sleep',
          Data: 'syscall=SYS_EXECVE',
          PolicyName: 'block-sleep',
          Severity: '7',
          Type: 'MatchedPolicy',
          Enforcer: 'Fanotify',
          HostPID: 5000,
          HostPPID: 4990,
          PID: 12,
          PPID: 7,
          NamespaceName: 'ns-a',
          PodName: 'web-1',
          ContainerName: 'web',
          ContainerID: 'abc123',
          Labels: 'app=web,tier=front',
          ClusterName: 'c1',
          HostName: 'node-1',
          Timestamp: 1795333130,
          UpdatedTime: '2026-11-22T07:38:50.349923Z',
        },
      },
      {
        name: 'an audited open: ProcessName is the opener, Data has the open arguments, Result Passed',
        ev: {
          operation: 'File',
          kind: 'Audit',
          action: 'Audit',
          errno: 0,
          resource: '/data/x',
          processName: '/bin/cat',
          parentProcessName: '/bin/sh',
          syscall: 'SYS_OPENAT',
          syscallArgs: 'fd=-100 flags=O_RDONLY',
        },
        expect: {
          Operation: 'File',
          Action: 'Audit',
          Result: 'Passed',
          ProcessName: '/bin/cat',
          ParentProcessName: '/bin/sh',
          Data: 'syscall=SYS_OPENAT fd=-100 flags=O_RDONLY',
        },
      },
      {
        name: 'a posture denial: DefaultPosture, Severity empty (no rule decided; as the reference)',
        ev: { kind: 'Posture', policyName: 'DefaultPosture', severity: 0, tags: [], message: '' },
        expect: { PolicyName: 'DefaultPosture', Severity: '', Action: 'Block' },
      },
      {
        name: 'a BPF-LSM denial (EACCES): Permission denied',
        ev: { errno: 13 },
        expect: { Result: 'Permission denied' },
      },
      {
        name: 'a host process: MatchedHostPolicy, no pod identity',
        ev: { workload: 'host' },
        host: true,
        expect: { Type: 'MatchedHostPolicy', NamespaceName: '', PodName: '', ContainerID: '', Labels: '' },
      },
    ];
  for (const c of cases) {
    it(c.name, () => {
      const a = buildAlertRecord(event(c.ev), c.host ? describeHost() : container, context);
      for (const [k, v] of Object.entries(c.expect)) assert.deepEqual(a[k as keyof AlertRecord], v, k);
    });
  }

  it('audits use the audit enforcer name (BPF-LSM: eBPF Monitor)', () => {
    const a = buildAlertRecord(event({ action: 'Audit', kind: 'Audit', errno: 0 }), container, {
      ...context,
      enforcer: 'BPFLSM',
      auditEnforcer: 'eBPF Monitor',
    });
    assert.equal(a.Enforcer, 'eBPF Monitor');
    assert.equal(describeResult({ action: 'Block', errno: 13 }), 'Permission denied');
  });

  it('labels are k=v pairs sorted by key, runtime labels left out', () => {
    assert.equal(formatLabels(container.podLabels), 'app=web,tier=front');
    assert.equal(formatLabels({ b: '2', a: '1' }), 'a=1,b=2');
  });

  it('the readable form is one block per alert with one field per line', () => {
    const text = formatAlert(buildAlertRecord(event({}), container, context));
    assert.match(text, /^== Alert 2026-11-22T07:38:50\.349923Z ==\n/);
    assert.match(text, /\nPolicyName: block-sleep\n/);
    assert.match(text, /\nResult: Operation not permitted\n/);
    assert.ok(text.endsWith('\n\n'));
    assert.throws(() => JSON.parse(text));
  });

  it('filters by namespace, operation, pod and container', () => {
    const a = buildAlertRecord(event({}), container, context);
    assert.equal(matchesAlertFilter(a, {}), true);
    assert.equal(matchesAlertFilter(a, { namespace: 'ns-a' }), true);
    assert.equal(matchesAlertFilter(a, { namespace: 'ns-b' }), false);
    assert.equal(matchesAlertFilter(a, { operations: ['file'] }), false);
    assert.equal(matchesAlertFilter(a, { operations: ['File', 'process'] }), true);
    assert.equal(matchesAlertFilter(a, { pods: ['web-1'], containers: ['db'] }), false);
    assert.equal(matchesAlertFilter(a, { pods: ['web-1'], containers: ['web'] }), true);
  });
});
