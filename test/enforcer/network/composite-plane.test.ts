// CompositePlane: the fanotify plane and the network plane behind one DataPlane. Tested with two in-memory
// stand-in planes (no kernel): every call reaches every plane, events of both arrive, stats add up, the
// enforced workloads are those every plane enforces, and the first plane names the alerts.
import assert from 'node:assert/strict';
import { Operation } from '../../../compiler/ir/rule-set.js';
import {
  DecisionKind,
  type DataPlane,
  type DataPlaneEvent,
  type EnforcementState,
} from '../../../enforcer/data-plane.js';
import { CompositePlane } from '../../../enforcer/network/composite-plane.js';

function event(workload: string, enforcer?: string): DataPlaneEvent {
  return {
    workload,
    timeNs: 0n,
    operation: Operation.Network,
    kind: DecisionKind.Block,
    action: 'Block',
    errno: 1,
    generation: 1,
    ruleIndex: 0,
    policyName: 'p',
    severity: 1,
    tags: [],
    message: '',
    hostPid: 1,
    hostPpid: 0,
    pid: 1,
    ppid: 0,
    uid: 0,
    processName: '/bin/x',
    parentProcessName: '',
    resource: '10.0.0.1:80',
    syscall: 'SYS_CONNECT',
    syscallArgs: '',
    cgroup: '',
    ...(enforcer === undefined ? {} : { enforcer }),
  };
}

/** An in-memory stand-in plane that records calls and yields given events. */
function memoryPlane(name: string, produced: DataPlaneEvent[], workloads: string[]) {
  const calls: string[] = [];
  const acks: number[] = [];
  const plane: DataPlane = {
    name,
    auditName: `${name}-audit`,
    start: () => (calls.push('start'), Promise.resolve()),
    apply: (s: EnforcementState) => (calls.push(`apply ${s.generation}`), Promise.resolve()),
    enforced: () => Promise.resolve({ generation: name === 'a' ? 3 : 2, workloads }),
    events: async function* () {
      for (const e of produced) {
        await Promise.resolve();
        yield e;
      }
    },
    acknowledge: (seq: number) => void acks.push(seq),
    stats: () =>
      Promise.resolve({
        decisions: 2,
        cacheHits: 1,
        reported: 1,
        dropped: name === 'b' ? 4 : 0,
        workloads: 5,
      }),
    stop: (o) => (calls.push(`stop ${o.keepEnforcing}`), Promise.resolve()),
  };
  return { plane, calls, acks };
}

describe('CompositePlane (in-memory stand-in planes)', () => {
  it('forwards every call to every plane and merges their events', async () => {
    const a = memoryPlane('Fanotify', [event('w1'), event('w2')], ['w1', 'w2']);
    const b = memoryPlane('b', [event('w1', 'CgroupBPF')], ['w1']);
    const c = new CompositePlane([a.plane, b.plane]);
    assert.equal(c.name, 'Fanotify');
    assert.equal(c.auditName, 'Fanotify-audit');
    await c.start();
    await c.apply({
      generation: 7,
      table: { records: { policies: [], rules: [], nodes: [] }, bytes: new Uint8Array() },
      workloads: [],
    });
    const got: DataPlaneEvent[] = [];
    for await (const e of c.events()) got.push(e);
    assert.deepEqual(got.map((e) => `${e.workload}:${e.enforcer ?? '-'}`).sort(), [
      'w1:-',
      'w1:CgroupBPF',
      'w2:-',
    ]);
    assert.deepEqual(await c.enforced(), { generation: 2, workloads: ['w1'] });
    const stats = await c.stats();
    assert.equal(stats.decisions, 4);
    assert.equal(stats.dropped, 4, 'a drop in any plane is counted');
    c.acknowledge(9);
    assert.deepEqual(a.acks, [9]);
    await c.stop({ keepEnforcing: true });
    for (const p of [a, b]) assert.deepEqual(p.calls, ['start', 'apply 7', 'stop true']);
  });

  it('a plane that fails to start lets go of those already started (kept enforcing) and throws', async () => {
    const a = memoryPlane('a', [], []);
    const b = memoryPlane('b', [], []);
    b.plane.start = () => Promise.reject(new Error('network loader: no BTF'));
    const c = new CompositePlane([a.plane, b.plane]);
    await assert.rejects(c.start(), /no BTF/);
    assert.deepEqual(a.calls, ['start', 'stop true']);
  });
});
