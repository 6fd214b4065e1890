// The status controller against the stand-in API server (no real API server can run here): real
// @kubernetes/client-node informers and writes, the real aggregation, the real Lease election. Asserts the
// exact requests (server-side apply on the status subresource, field manager), that only changes are
// written and at a bounded rate, observedGeneration, and that of two replicas only the leader writes, with a
// takeover once the leader's Lease expires.
import assert from 'node:assert/strict';
import { pino } from 'pino';
import {
  NODE_STATUS_DATA_KEY,
  NODE_STATUS_LABEL,
  formatNodeStatusReport,
  nodeStatusObjectName,
  type NodePolicyReport,
} from '../../compiler/model/node-status.js';
import {
  CONTROLLER_FIELD_MANAGER,
  createControllerFeeds,
  createKubernetesStatusWriter,
} from '../../controller/io/kubernetes-controller-io.js';
import { createKubernetesLeaseStore } from '../../controller/io/kubernetes-lease-store.js';
import { readPolicyStatus, type PolicyStatus } from '../../controller/policy-status.js';
import { startControllerReplica, type ControllerReplica } from '../../controller/run-controller.js';
import {
  startStandInApiServer,
  type StandInApiServer,
  type StoredObject,
} from '../support/stand-in-api-server.js';
import { waitUntil } from '../support/wait-until.js';

const NS = 'rtctl-system';
const RP = 'security.runtime.com/v1/runtimepolicies';
const RHP = 'security.runtime.com/v1/runtimehostpolicies';
const CM = 'v1/configmaps';
const LEASES = 'coordination.k8s.io/v1/leases';
const logger = pino({ level: 'silent' });
const RP_STATUS = '/apis/security.runtime.com/v1/namespaces/payments/runtimepolicies/block-shells/status';
const RHP_STATUS = '/apis/security.runtime.com/v1/runtimehostpolicies/host-guard/status';

function rp(paths: string[]): StoredObject {
  return {
    apiVersion: 'security.runtime.com/v1',
    kind: 'RuntimePolicy',
    metadata: { name: 'block-shells', namespace: 'payments' },
    spec: {
      selector: { matchLabels: { app: 'web' } },
      process: { matchPaths: paths.map((path) => ({ path })) },
      action: 'Block',
    },
  };
}

const rhp: StoredObject = {
  apiVersion: 'security.runtime.com/v1',
  kind: 'RuntimeHostPolicy',
  metadata: { name: 'host-guard' },
  spec: {
    nodeSelector: { matchLabels: { role: 'worker' } },
    process: { matchPaths: [{ path: '/usr/bin/gdb' }] },
    action: 'Block',
  },
};

/** Writes node `node`'s report ConfigMap as its enforcer would. */
function putReport(
  api: StandInApiServer,
  node: string,
  policies: NodePolicyReport[],
  updatedAt = new Date(),
): void {
  api.put(CM, {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: nodeStatusObjectName(node), namespace: NS, labels: { [NODE_STATUS_LABEL]: 'true' } },
    data: {
      [NODE_STATUS_DATA_KEY]: formatNodeStatusReport({
        version: 1,
        node,
        plane: 'fanotify',
        rtctlVersion: '0.1.0',
        updatedAt: updatedAt.toISOString(),
        released: false,
        policies,
      }),
    },
  });
}

function entries(
  api: StandInApiServer,
  generation: number,
  over: Partial<NodePolicyReport> = {},
): NodePolicyReport[] {
  return [
    {
      kind: 'RuntimePolicy',
      namespace: 'payments',
      name: 'block-shells',
      uid: api.get(RP, 'payments', 'block-shells')?.metadata.uid ?? '',
      generation,
      workloads: 1,
      enforced: true,
      gaps: [],
      ...over,
    },
    {
      kind: 'RuntimeHostPolicy',
      name: 'host-guard',
      uid: api.get(RHP, undefined, 'host-guard')?.metadata.uid ?? '',
      generation: 1,
      workloads: 1,
      enforced: true,
      gaps: [],
    },
  ];
}

async function seed(): Promise<StandInApiServer> {
  const api = await startStandInApiServer();
  api.put(RP, rp(['/bin/sh']));
  api.put(RHP, rhp);
  for (const name of ['node-a', 'node-b'])
    api.put('v1/nodes', { apiVersion: 'v1', kind: 'Node', metadata: { name, labels: { role: 'worker' } } });
  putReport(api, 'node-a', entries(api, 1));
  putReport(api, 'node-b', entries(api, 1));
  return api;
}

const statusOf = (
  api: StandInApiServer,
  collection = RP,
  ns = 'payments',
  name = 'block-shells',
): PolicyStatus | undefined => readPolicyStatus(api.get(collection, ns, name)?.['status']);
const ready = (s: PolicyStatus | undefined): string | undefined =>
  s?.conditions[0] && `${s.conditions[0].status} ${s.conditions[0].reason}`;
const statusWrites = (api: StandInApiServer, path = RP_STATUS, user?: string): number =>
  api.find((r) => r.method === 'PATCH' && r.path === path && (user === undefined || r.user === user)).length;

function startReplica(
  api: StandInApiServer,
  token: string,
  over: { election?: boolean; minWriteIntervalMs?: number } = {},
): Promise<ControllerReplica> {
  const kc = api.kubeConfig(token);
  return startControllerReplica({
    feeds: createControllerFeeds(kc, NS, logger),
    writer: createKubernetesStatusWriter(kc),
    logger,
    minWriteIntervalMs: over.minWriteIntervalMs ?? 200,
    debounceMs: 20,
    staleAfterMs: 60_000,
    pendingGraceMs: 60_000,
    resyncMs: 3_600_000,
    ...(over.election === true
      ? {
          election: {
            store: createKubernetesLeaseStore(kc, NS, 'rtctl-controller'),
            identity: token,
            leaseDurationMs: 1000,
            renewDeadlineMs: 600,
            retryPeriodMs: 100,
          },
        }
      : {}),
  });
}

/** Waits until the controller has no change left to process. */
const settled = (r: ControllerReplica): Promise<number> =>
  waitUntil('the controller to settle', () => {
    const p = r.controller.passes();
    return p.pending ? undefined : p.count;
  });

describe('controller: policy status against the stand-in API server', function () {
  this.timeout(30000);

  it('writes each policy status by server-side apply on the status subresource, with observedGeneration', async () => {
    const api = await seed();
    const r = await startReplica(api, 'ctl');
    try {
      await waitUntil('RuntimePolicy Ready', () => ready(statusOf(api)) === 'True Enforced');
      await waitUntil(
        'RuntimeHostPolicy Ready',
        () => ready(statusOf(api, RHP, '', 'host-guard')) === 'True Enforced',
      );
      const s = statusOf(api);
      assert.equal(s?.observedGeneration, 1);
      assert.deepEqual([s?.enforcedNodes, s?.expectedNodes], [2, 2]);
      assert.equal(s?.conditions[0]?.message, 'Enforced on 2 of 2 nodes');
      for (const path of [RP_STATUS, RHP_STATUS]) {
        const writes = api.find((x) => x.method === 'PATCH' && x.path === path);
        assert.equal(writes.length, 1, path);
        const w = writes[0];
        assert.equal(w?.contentType, 'application/apply-patch+yaml');
        assert.equal(w?.query['fieldManager'], CONTROLLER_FIELD_MANAGER);
        assert.equal(w?.query['force'], 'true');
        const body = w?.body as { status?: unknown; spec?: unknown; metadata?: { name?: string } };
        assert.equal(body.spec, undefined, 'only the status is applied');
        assert.ok(body.status);
      }
      // Never a write anywhere but the two status subresources.
      assert.deepEqual(
        api
          .find((x) => x.method !== 'GET')
          .map((x) => `${x.method} ${x.path}`)
          .sort(),
        [`PATCH ${RP_STATUS}`, `PATCH ${RHP_STATUS}`].sort(),
      );
      // observedGeneration follows a spec change; the nodes still on generation 1 make it pending.
      api.put(RP, rp(['/bin/sh', '/bin/bash']));
      await waitUntil('generation 2 observed', () => statusOf(api)?.observedGeneration === 2);
      assert.equal(ready(statusOf(api)), 'Unknown Pending');
      putReport(api, 'node-a', entries(api, 2));
      putReport(api, 'node-b', entries(api, 2, { enforced: false }));
      await waitUntil('Ready False naming node-b', () => ready(statusOf(api)) === 'False NotEnforced');
      assert.match(statusOf(api)?.conditions[0]?.message ?? '', /not enforced on node-b/);
    } finally {
      await r.stop();
      await api.close();
    }
  });

  it('an unchanged status is not written again (a heartbeat report, a status-only echo)', async () => {
    const api = await seed();
    const r = await startReplica(api, 'ctl');
    try {
      await waitUntil('Ready', () => ready(statusOf(api)) === 'True Enforced');
      await settled(r);
      const before = r.controller.writes();
      const passes = r.controller.passes().count;
      // Heartbeats: new updatedAt, same content.
      putReport(api, 'node-a', entries(api, 1));
      putReport(api, 'node-b', entries(api, 1));
      await waitUntil(
        'a pass over the heartbeat',
        () => r.controller.passes().count > passes && !r.controller.passes().pending,
      );
      assert.equal(r.controller.writes(), before);
      assert.equal(statusWrites(api), 1);
    } finally {
      await r.stop();
      await api.close();
    }
  });

  it('a burst of 100 report changes gives at most 3 status writes per policy, and the last state wins', async () => {
    const api = await seed();
    const r = await startReplica(api, 'ctl', { minWriteIntervalMs: 1000 });
    try {
      await waitUntil('Ready', () => ready(statusOf(api)) === 'True Enforced');
      await settled(r);
      const before = statusWrites(api);
      for (let i = 0; i < 100; i++) putReport(api, 'node-b', entries(api, 1, { enforced: i % 2 === 0 }));
      // The last report says not enforced (i = 99).
      await waitUntil('the last state', () => ready(statusOf(api)) === 'False NotEnforced');
      await settled(r);
      const burst = statusWrites(api) - before;
      assert.ok(burst >= 1 && burst <= 3, `status writes for 100 report changes: ${burst}`);
      assert.ok(statusWrites(api, RHP_STATUS) <= 1 + 3);
      assert.equal(r.controller.badReports(), 0);
    } finally {
      await r.stop();
      await api.close();
    }
  });

  it('an unreadable report is counted and ignored, never a crash', async () => {
    const api = await seed();
    api.put(CM, {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: {
        name: nodeStatusObjectName('node-c'),
        namespace: NS,
        labels: { [NODE_STATUS_LABEL]: 'true' },
      },
      data: { [NODE_STATUS_DATA_KEY]: '{"version":1,"node":' },
    });
    const r = await startReplica(api, 'ctl');
    try {
      await waitUntil('Ready', () => ready(statusOf(api)) === 'True Enforced');
      assert.equal(r.controller.badReports(), 1);
    } finally {
      await r.stop();
      await api.close();
    }
  });

  it('two replicas: only the Lease holder writes; the other takes over once the Lease expires', async () => {
    const api = await seed();
    const a = await startReplica(api, 'replica-a', { election: true });
    const b = await startReplica(api, 'replica-b', { election: true });
    try {
      const first = await waitUntil('one leader', () =>
        a.isLeader() !== b.isLeader() ? (a.isLeader() ? a : b) : undefined,
      );
      const [leader, other, leaderId, otherId] =
        first === a ? [a, b, 'replica-a', 'replica-b'] : [b, a, 'replica-b', 'replica-a'];
      await waitUntil('Ready', () => ready(statusOf(api)) === 'True Enforced');
      const lease = api.get(LEASES, NS, 'rtctl-controller');
      assert.equal((lease?.['spec'] as { holderIdentity?: string }).holderIdentity, leaderId);
      assert.equal(statusWrites(api, RP_STATUS, otherId), 0);
      assert.equal(other.isLeader(), false);
      // The leader is cut off from the API server: it cannot renew, steps down, and the other takes over
      // once the Lease has not changed for its duration.
      api.failWhen((x) => x.user === leaderId, 503);
      await waitUntil('the takeover', () => other.isLeader() && !leader.isLeader(), 15000);
      const held = api.get(LEASES, NS, 'rtctl-controller')?.['spec'] as {
        holderIdentity?: string;
        leaseTransitions?: number;
      };
      assert.equal(held.holderIdentity, otherId);
      assert.equal(held.leaseTransitions, 1);
      putReport(api, 'node-a', entries(api, 1, { enforced: false }));
      await waitUntil('the new leader writes', () => ready(statusOf(api)) === 'False NotEnforced');
      assert.ok(statusWrites(api, RP_STATUS, otherId) >= 1);
      // The old leader sent no status write after it was cut off that the server accepted.
      assert.equal(
        api.find((x) => x.user === leaderId && x.method === 'PATCH' && x.status < 300 && x.path === RP_STATUS)
          .length,
        1,
      );
      // Lease requests: get, create or update with the resourceVersion read.
      const leaseCalls = new Set(api.find((x) => x.path.includes('/leases')).map((x) => x.method));
      assert.deepEqual([...leaseCalls].sort(), ['GET', 'POST', 'PUT']);
    } finally {
      api.failWhen(undefined);
      await a.stop();
      await b.stop();
      await api.close();
    }
  });

  it('a replica that stops gives its Lease up, so the other takes over without waiting for expiry', async () => {
    const api = await seed();
    const a = await startReplica(api, 'replica-a', { election: true });
    await waitUntil('a leads', () => a.isLeader());
    const b = await startReplica(api, 'replica-b', { election: true });
    try {
      await a.stop();
      assert.equal(
        (api.get(LEASES, NS, 'rtctl-controller')?.['spec'] as { holderIdentity?: string }).holderIdentity,
        '',
      );
      await waitUntil('b leads', () => b.isLeader(), 5000);
    } finally {
      await b.stop();
      await api.close();
    }
  });
});
