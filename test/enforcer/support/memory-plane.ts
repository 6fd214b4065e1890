// An in-memory data plane and the audit events it yields, for tests of the control plane's handling of
// events (acknowledgement, resending across a restart): the real planes need root and a kernel hook.
import type { DataPlane, DataPlaneEvent } from '../../../enforcer/data-plane.js';

/** A host policy auditing opens of /etc/shadow (the events below are its decisions). */
export const HOST_AUDIT_POLICY = `apiVersion: security.runtime.com/v1
kind: RuntimeHostPolicy
metadata: {name: host-guard}
spec:
  nodeSelector: {matchLabels: {kubernetes.io/hostname: "*"}}
  file:
    matchPaths:
      - path: /etc/shadow
  action: Audit
`;

/** Audit event number `seq` of HOST_AUDIT_POLICY: an open of `resource` by `workload`. */
export function auditEvent(seq: number, resource: string, workload = 'host'): DataPlaneEvent {
  return {
    seq,
    workload,
    timeNs: 1795333130349923022n + BigInt(seq) * 1000n,
    operation: 'File',
    kind: 'Audit',
    action: 'Audit',
    errno: 0,
    generation: 1,
    ruleIndex: 0,
    policyName: 'host-guard',
    severity: 1,
    tags: [],
    message: '',
    hostPid: 100,
    hostPpid: 1,
    pid: 100,
    ppid: 1,
    uid: 0,
    processName: '/bin/cat',
    parentProcessName: '/bin/sh',
    resource,
    syscall: 'SYS_OPENAT',
    syscallArgs: 'fd=-100 flags=O_RDONLY',
    cgroup: '',
  };
}

/** A plane named `Memory` that enforces nothing, with `members` (its events at least) in place of the defaults. */
export function memoryPlane(members: Pick<DataPlane, 'events'> & Partial<DataPlane>): DataPlane {
  return {
    name: 'Memory',
    auditName: 'Memory',
    start: () => Promise.resolve(),
    apply: () => Promise.resolve(),
    enforced: () => Promise.resolve({ generation: 0, workloads: [] }),
    stats: () => Promise.resolve({ decisions: 0, cacheHits: 0, reported: 0, dropped: 0, workloads: 0 }),
    stop: () => Promise.resolve(),
    ...members,
  };
}
