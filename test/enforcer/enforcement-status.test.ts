// The enforcer's /status reports, per policy, what its running plane enforces, audits only or cannot enforce,
// from the compiler's enforcement table. The kernel data plane is replaced by an in-memory one (the edge that
// needs root), and containers by an empty list; the policy snapshot is the compiler's real lint.
import assert from 'node:assert/strict';
import pino from 'pino';
import { EnforcementTarget, findEnforcementTarget } from '../../compiler/enforcement/enforcement-table.js';
import { createAlertHub } from '../../enforcer/alerts/alert-hub.js';
import {
  withUnavailableForms,
  type DataPlane,
  type DataPlaneEvent,
  type EnforcementState,
} from '../../enforcer/data-plane.js';
import { DATA_PLANES, NETWORK_PLANE_OFF, SYSCALL_PLANE_OFF } from '../../enforcer/data-planes.js';
import { NETWORK_PROCESS_OFF } from '../../enforcer/network/network-plane.js';
import { createEnforcer } from '../../enforcer/enforcer.js';
import { buildSnapshot } from '../../enforcer/policy-snapshot.js';
import { memoryPlane } from './support/memory-plane.js';

const POLICY = `apiVersion: security.runtime.com/v1
kind: RuntimeHostPolicy
metadata: {name: host-guard}
spec:
  nodeSelector: {matchLabels: {kubernetes.io/hostname: "*"}}
  process:
    matchPaths:
      - path: /usr/bin/gdb
  network:
    matchProtocols:
      - protocol: tcp
        fromSource: [{path: /usr/bin/curl}]
  syscalls:
    matchSyscalls:
      - syscall: [ptrace]
  action: Block
`;

/** An in-memory data plane (fake: the real ones need root and a kernel hook) that records the applied generation. */
function createMemoryPlane(): DataPlane {
  let generation = 0;
  return memoryPlane({
    apply(state: EnforcementState) {
      generation = state.generation;
      return Promise.resolve();
    },
    enforced: () => Promise.resolve({ generation, workloads: [] }),
    events: () => ({
      [Symbol.asyncIterator]: () => ({
        next: () => Promise.resolve<IteratorResult<DataPlaneEvent>>({ done: true, value: undefined }),
      }),
    }),
  });
}

const ADDRESS_POLICY = `apiVersion: security.runtime.com/v1
kind: RuntimeHostPolicy
metadata: {name: host-egress}
spec:
  nodeSelector: {matchLabels: {kubernetes.io/hostname: "*"}}
  process:
    matchPaths:
      - path: /usr/bin/gdb
  network:
    matchAddresses:
      - cidr: 169.254.169.254/32
  action: Block
`;

async function statusFor(target: EnforcementTarget, plane = createMemoryPlane(), text = POLICY) {
  const snapshot = buildSnapshot([{ file: 'host-guard.yaml', text }]);
  const enforcer = createEnforcer({
    source: { start: () => Promise.resolve(snapshot), stop: () => Promise.resolve() },
    containers: { list: () => Promise.resolve([]) },
    plane,
    enforcementTarget: target,
    hub: createAlertHub(),
    clusterName: 'c',
    nodeName: 'n',
    nodeLabels: {},
    pollMs: 3600000,
    logger: pino({ level: 'silent' }),
  });
  await enforcer.start();
  try {
    return await enforcer.status();
  } finally {
    await enforcer.stop({ keepEnforcing: false });
  }
}

describe('enforcer /status: enforcement per policy (in-memory data plane)', () => {
  it('every data plane has a column in the enforcement table', () => {
    for (const p of DATA_PLANES) assert.ok(findEnforcementTarget(p.name), p.name);
  });

  it('fanotify: the process rule and the host network rule with a source are enforced; the syscalls rule is audited', async () => {
    const s = await statusFor(EnforcementTarget.Fanotify);
    assert.equal(s.enforcement.length, 1);
    const p = s.enforcement[0];
    assert.equal(p?.name, 'host-guard');
    assert.equal(p?.target, 'fanotify');
    assert.equal(p?.level, 'audited-only');
    assert.deepEqual(p?.enforced, ['/spec/process/matchPaths/0', '/spec/network/matchProtocols/0']);
    assert.deepEqual(p?.notEnforced, []);
    // The system call plane audits the syscalls rule; it cannot deny it.
    assert.deepEqual(
      p?.auditedOnly.map((g) => [g.pointer, g.line, g.gaps.map((x) => x.form)]),
      [['/spec/syscalls/matchSyscalls/0', 15, ['syscalls.matchSyscalls']]],
    );
    // JSON as /status serves it.
    assert.ok(JSON.stringify(s).includes('"auditedOnly"'));
  });

  it('fanotify on a kernel whose cgroup programs cannot see the process: the network rule with a source is not enforced, with the reason', async () => {
    const off = withUnavailableForms(createMemoryPlane(), (form) =>
      form === 'network.fromSource' || form === 'network.pts' ? NETWORK_PROCESS_OFF : undefined,
    );
    const s = await statusFor(EnforcementTarget.Fanotify, off);
    const p = s.enforcement[0];
    assert.equal(p?.level, 'not-enforced');
    assert.deepEqual(p?.enforced, ['/spec/process/matchPaths/0']);
    assert.deepEqual(
      p?.notEnforced.map((g) => [g.pointer, g.line, g.gaps.map((x) => [x.form, x.reason])]),
      [['/spec/network/matchProtocols/0', 11, [['network.fromSource', NETWORK_PROCESS_OFF]]]],
    );
    assert.match(NETWORK_PROCESS_OFF, /bpf_get_current_task_btf/);
  });

  it('bpf-lsm: the network rule and the syscalls rule (ptrace: an LSM hook covers it) are enforced too', async () => {
    const s = await statusFor(EnforcementTarget.BpfLsm);
    const p = s.enforcement[0];
    assert.deepEqual(p?.enforced, [
      '/spec/process/matchPaths/0',
      '/spec/network/matchProtocols/0',
      '/spec/syscalls/matchSyscalls/0',
    ]);
    assert.deepEqual(
      p?.notEnforced.map((g) => g.pointer),
      [],
    );
    assert.deepEqual(
      p?.auditedOnly.map((g) => g.pointer),
      [],
    );
  });

  it('fanotify with its network part off on this node: the address rule the table calls enforced is reported not enforced, with the reason', async () => {
    const on = await statusFor(EnforcementTarget.Fanotify, createMemoryPlane(), ADDRESS_POLICY);
    assert.deepEqual(on.enforcement[0]?.enforced, [
      '/spec/process/matchPaths/0',
      '/spec/network/matchAddresses/0',
    ]);
    const off = withUnavailableForms(createMemoryPlane(), (form) =>
      form.startsWith('network.') ? NETWORK_PLANE_OFF : undefined,
    );
    const s = await statusFor(EnforcementTarget.Fanotify, off, ADDRESS_POLICY);
    const p = s.enforcement[0];
    assert.deepEqual(p?.enforced, ['/spec/process/matchPaths/0']);
    assert.equal(p?.level, 'not-enforced');
    assert.deepEqual(
      p?.notEnforced.map((g) => [g.pointer, g.gaps.map((x) => [x.form, x.reason])]),
      [['/spec/network/matchAddresses/0', [['network.matchAddresses', NETWORK_PLANE_OFF]]]],
    );
  });

  it('a node whose system call plane is off reports the syscalls rule not enforced, with the reason', async () => {
    const off = withUnavailableForms(createMemoryPlane(), (form) =>
      form.startsWith('syscalls.') || form === 'presets.filelessExec' ? SYSCALL_PLANE_OFF : undefined,
    );
    const s = await statusFor(EnforcementTarget.Fanotify, off);
    const p = s.enforcement[0];
    assert.deepEqual(p?.auditedOnly, []);
    assert.deepEqual(
      p?.notEnforced.map((g) => [g.pointer, g.gaps.map((x) => [x.form, x.reason])]),
      [['/spec/syscalls/matchSyscalls/0', [['syscalls.matchSyscalls', SYSCALL_PLANE_OFF]]]],
    );
  });
});
