// The enforcer's node report and release in Kubernetes mode, against the stand-in API server (no real API
// server can run here): the real Kubernetes policy source (informers), the real enforcer control loop and the
// real report writer and release watch (@kubernetes/client-node); the kernel data plane is an in-memory one
// (the kernel side is not under test here) and the container list a fixed one (containerd's edge).
import assert from 'node:assert/strict';
import { pino } from 'pino';
import { findEnforcementTarget } from '../../../compiler/enforcement/enforcement-table.js';
import {
  NODE_STATUS_DATA_KEY,
  NODE_STATUS_LABEL,
  RELEASE_CONFIGMAP_NAME,
  nodeStatusObjectName,
  parseNodeStatusReport,
  type NodePolicyReport,
  type NodeStatusReport,
} from '../../../compiler/model/node-status.js';
import { createAlertHub } from '../../../enforcer/alerts/alert-hub.js';
import type { DataPlane, DataPlaneEvent, EnforcementState } from '../../../enforcer/data-plane.js';
import { createEnforcer, type Enforcer } from '../../../enforcer/enforcer.js';
import { createInformerFeeds } from '../../../enforcer/io/kubernetes-informer-feeds.js';
import {
  createConfigMapReleaseWatch,
  createConfigMapStatusWriter,
  ENFORCER_FIELD_MANAGER,
} from '../../../enforcer/io/kubernetes-node-status.js';
import { createKubernetesPolicySource } from '../../../enforcer/kubernetes/kubernetes-policy-source.js';
import { createNodeReporter } from '../../../enforcer/kubernetes/node-reporter.js';
import {
  createNodeStatusReporting,
  type NodeStatusReporting,
} from '../../../enforcer/kubernetes/node-status-reporting.js';
import { describeContainer, KubeletLabel } from '../../../enforcer/workload.js';
import {
  startStandInApiServer,
  type StandInApiServer,
  type StoredObject,
} from '../../support/stand-in-api-server.js';
import { waitUntil } from '../../support/wait-until.js';

const NS = 'rtctl-system';
const NODE = 'node-1';
const RP = 'security.runtime.com/v1/runtimepolicies';
const CM = 'v1/configmaps';
const logger = pino({ level: 'silent' });

function policy(paths: string[], extra: Record<string, unknown> = {}): StoredObject {
  return {
    apiVersion: 'security.runtime.com/v1',
    kind: 'RuntimePolicy',
    metadata: { name: 'block-shells', namespace: 'payments' },
    spec: {
      selector: { matchLabels: { app: 'web' } },
      process: { matchPaths: paths.map((path) => ({ path })) },
      // A rule the fanotify plane cannot enforce (no capability hook): the report's gap.
      capabilities: { matchCapabilities: [{ capability: 'net_raw' }] },
      action: 'Block',
      ...extra,
    },
  };
}

/** An in-memory data plane recording applies and stops (fake: the real planes need a kernel hook). */
function memoryPlane(): DataPlane & { applied: number[]; stops: boolean[] } {
  let generation = 0;
  const applied: number[] = [];
  const stops: boolean[] = [];
  return {
    name: 'fanotify',
    auditName: 'fanotify',
    applied,
    stops,
    start: () => Promise.resolve(),
    apply(state: EnforcementState) {
      generation = state.generation;
      applied.push(state.generation);
      return Promise.resolve();
    },
    enforced: () => Promise.resolve({ generation, workloads: [] }),
    events: () => ({
      [Symbol.asyncIterator]: () => ({
        next: () => Promise.resolve<IteratorResult<DataPlaneEvent>>({ done: true, value: undefined }),
      }),
    }),
    stats: () => Promise.resolve({ decisions: 0, cacheHits: 0, reported: 0, dropped: 0, workloads: 0 }),
    stop({ keepEnforcing }) {
      stops.push(keepEnforcing);
      return Promise.resolve();
    },
  };
}

function storedReport(api: StandInApiServer): NodeStatusReport | undefined {
  const cm = api.get(CM, NS, nodeStatusObjectName(NODE));
  const text = (cm?.['data'] as Record<string, string> | undefined)?.[NODE_STATUS_DATA_KEY];
  if (text === undefined) return undefined;
  const parsed = parseNodeStatusReport(text);
  assert.ok(parsed.ok, parsed.ok ? '' : parsed.error);
  return parsed.report;
}

interface Harness {
  api: StandInApiServer;
  plane: ReturnType<typeof memoryPlane>;
  enforcer: Enforcer;
  reporting: NodeStatusReporting;
  close(): Promise<void>;
}

async function startHarness(): Promise<Harness> {
  const api = await startStandInApiServer();
  api.put(RP, policy(['/bin/sh']));
  api.put('v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'payments' } });
  api.put('v1/nodes', { apiVersion: 'v1', kind: 'Node', metadata: { name: NODE, labels: { zone: 'a' } } });
  api.put('v1/pods', {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'web-1', namespace: 'payments', labels: { app: 'web' } },
    spec: { nodeName: NODE },
  });
  const kc = api.kubeConfig();
  const plane = memoryPlane();
  const target = findEnforcementTarget('fanotify');
  assert.ok(target);
  const reporting = createNodeStatusReporting({
    writer: createConfigMapStatusWriter(kc, NS),
    releaseWatch: createConfigMapReleaseWatch(kc, NS, logger),
    node: NODE,
    plane: 'fanotify',
    target,
    rtctlVersion: '0.1.0',
    logger,
    minIntervalMs: 100,
    heartbeatMs: 60000,
  });
  const enforcer = createEnforcer({
    source: createKubernetesPolicySource({
      feeds: createInformerFeeds(kc, NODE, logger),
      nodeName: NODE,
      logger,
      debounceMs: 10,
    }),
    containers: {
      list: (podLabels) =>
        Promise.resolve([
          describeContainer({
            id: 'c1',
            labels: {
              [KubeletLabel.PodName]: 'web-1',
              [KubeletLabel.PodNamespace]: 'payments',
              [KubeletLabel.ContainerName]: 'app',
            },
            image: 'web:1',
            pid: process.pid,
            cgroupPath: '/k8s.io/c1',
            ...(podLabels?.('payments', 'web-1') ? { podLabels: podLabels('payments', 'web-1') ?? {} } : {}),
          }),
        ]),
    },
    plane,
    enforcementTarget: target,
    hub: createAlertHub(),
    clusterName: 'c',
    nodeName: NODE,
    nodeLabels: {},
    pollMs: 3600000,
    logger,
    onStateApplied: reporting.onStateApplied,
  });
  await enforcer.start();
  await reporting.start(() => enforcer.release());
  return {
    api,
    plane,
    enforcer,
    reporting,
    async close() {
      await reporting.stop();
      await enforcer.stop({ keepEnforcing: false });
      await api.close();
    },
  };
}

/** The report's entry of the policy once it says generation `g` with a workload selected. */
const entryAt = (api: StandInApiServer, g: number): NodePolicyReport | undefined =>
  storedReport(api)?.policies.find((p) => p.name === 'block-shells' && p.generation === g && p.workloads > 0);

describe('enforcer node report and release against the stand-in API server', function () {
  this.timeout(30000);
  let h: Harness;
  beforeEach(async () => {
    h = await startHarness();
  });
  afterEach(async () => {
    await h.close();
  });

  it('writes one report ConfigMap for the node by server-side apply: generation, uid, workloads, enforced, gaps', async () => {
    const e = await waitUntil('the report of generation 1', () => entryAt(h.api, 1));
    const stored = h.api.get(RP, 'payments', 'block-shells');
    assert.deepEqual(e, {
      kind: 'RuntimePolicy',
      namespace: 'payments',
      name: 'block-shells',
      uid: stored?.metadata.uid,
      generation: 1,
      workloads: 1,
      enforced: true,
      gaps: [
        {
          rule: '/spec/capabilities/matchCapabilities/0',
          level: 'not-enforced',
          reason: e.gaps[0]?.reason ?? '',
        },
      ],
    });
    assert.match(e.gaps[0]?.reason ?? '', /\S/);
    const report = storedReport(h.api);
    assert.equal(report?.node, NODE);
    assert.equal(report?.plane, 'fanotify');
    assert.equal(report?.released, false);
    const cm = h.api.get(CM, NS, nodeStatusObjectName(NODE));
    assert.equal(cm?.metadata.labels?.[NODE_STATUS_LABEL], 'true');
    // Only one report object: the node's.
    assert.deepEqual(
      h.api.list(CM).map((o) => o.metadata.name),
      [nodeStatusObjectName(NODE)],
    );
    const writes = h.api.find((r) => r.method === 'PATCH' && r.call.resource === 'configmaps');
    assert.ok(writes.length >= 1);
    for (const w of writes) {
      assert.equal(w.path, `/api/v1/namespaces/${NS}/configmaps/${nodeStatusObjectName(NODE)}`);
      assert.equal(w.contentType, 'application/apply-patch+yaml');
      assert.equal(w.query['fieldManager'], ENFORCER_FIELD_MANAGER);
      assert.equal(w.query['force'], 'true');
      assert.equal(w.status, writes.indexOf(w) === 0 ? 201 : 200);
    }
  });

  it('reports the new generation after a spec change, and a refused generation with its findings', async () => {
    await waitUntil('generation 1', () => entryAt(h.api, 1));
    h.api.put(RP, policy(['/bin/sh', '/bin/bash']));
    await waitUntil('generation 2', () => entryAt(h.api, 2));
    h.api.put(RP, policy(['bin/sh']));
    const refused = await waitUntil('the refused generation 3', () =>
      storedReport(h.api)?.policies.find((p) => p.generation === 3),
    );
    assert.equal(refused.enforced, false);
    assert.equal(refused.workloads, 0);
    assert.match(refused.errors?.[0] ?? '', /^RT\d{4} \/spec\/process\/matchPaths\/0\/path/);
  });

  it('releases the data plane when rtctl-release says release: "true", reports released, and stays up', async () => {
    await waitUntil('generation 1', () => entryAt(h.api, 1));
    const applies = h.plane.applied.length;
    h.api.put(CM, {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: RELEASE_CONFIGMAP_NAME, namespace: NS },
      data: { release: 'false' },
    });
    h.api.put(RP, policy(['/bin/sh', '/bin/ls']));
    await waitUntil('generation 2 (release: "false" releases nothing)', () => entryAt(h.api, 2));
    assert.deepEqual(h.plane.stops, []);
    h.api.put(CM, {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: RELEASE_CONFIGMAP_NAME, namespace: NS },
      data: { release: 'true' },
    });
    await waitUntil('the released report', () => storedReport(h.api)?.released === true);
    assert.deepEqual(h.plane.stops, [false]);
    assert.deepEqual(storedReport(h.api)?.policies, []);
    assert.equal((await h.enforcer.status()).released, true);
    // Nothing is applied again: not on a policy change, not on a reconcile.
    const after = h.plane.applied.length;
    assert.ok(after > applies);
    h.api.put(RP, policy(['/bin/true']));
    await h.enforcer.reconcile();
    assert.equal(h.plane.applied.length, after);
    await h.reporting.released();
  });
});

describe('node reporter: bounded writes against the stand-in API server', function () {
  this.timeout(30000);

  const entry = (n: number): NodePolicyReport => ({
    kind: 'RuntimePolicy',
    namespace: 'payments',
    name: 'p',
    generation: n,
    workloads: 1,
    enforced: true,
    gaps: [],
  });

  it('a burst of 100 changes gives at most 2 writes, the last content wins; unchanged content writes nothing', async () => {
    const api = await startStandInApiServer();
    const reporter = createNodeReporter({
      writer: createConfigMapStatusWriter(api.kubeConfig(), NS),
      node: NODE,
      plane: 'fanotify',
      rtctlVersion: '0.1.0',
      logger,
      minIntervalMs: 500,
      heartbeatMs: 3_600_000,
    });
    try {
      for (let i = 1; i <= 100; i++) reporter.update([entry(i)]);
      await waitUntil('the last content', () => storedReport(api)?.policies[0]?.generation === 100);
      await waitUntil('nothing pending', () => !reporter.pending());
      const patches = (): number => api.find((r) => r.method === 'PATCH').length;
      assert.ok(patches() >= 1 && patches() <= 2, String(patches()));
      assert.equal(reporter.writes(), patches());
      const before = patches();
      for (let i = 0; i < 50; i++) reporter.update([entry(100)]);
      assert.equal(reporter.pending(), false);
      // A later change is written: the unchanged updates before it added no write of their own.
      reporter.update([entry(101)]);
      assert.equal(reporter.pending(), true);
      await waitUntil('the next content', () => storedReport(api)?.policies[0]?.generation === 101);
      assert.equal(patches(), before + 1);
    } finally {
      reporter.stop();
      await api.close();
    }
  });

  it('rewrites an unchanged report on the heartbeat, so a silent node shows as stale', async () => {
    const api = await startStandInApiServer();
    const reporter = createNodeReporter({
      writer: createConfigMapStatusWriter(api.kubeConfig(), NS),
      node: NODE,
      plane: 'fanotify',
      rtctlVersion: '0.1.0',
      logger,
      minIntervalMs: 50,
      heartbeatMs: 1000,
    });
    try {
      reporter.update([entry(1)]);
      const first = await waitUntil('the first report', () => storedReport(api)?.updatedAt);
      const second = await waitUntil('a heartbeat write', () => {
        const at = storedReport(api)?.updatedAt;
        return at !== undefined && at !== first ? at : undefined;
      });
      assert.ok(Date.parse(second) >= Date.parse(first) + 900, `${first} → ${second}`);
      assert.equal(storedReport(api)?.policies[0]?.generation, 1);
    } finally {
      reporter.stop();
      await api.close();
    }
  });

  it('retries a failed write', async () => {
    const api = await startStandInApiServer();
    api.failWhen((r) => r.method === 'PATCH', 503);
    const reporter = createNodeReporter({
      writer: createConfigMapStatusWriter(api.kubeConfig(), NS),
      node: NODE,
      plane: 'fanotify',
      rtctlVersion: '0.1.0',
      logger,
      minIntervalMs: 50,
      heartbeatMs: 3_600_000,
    });
    try {
      reporter.update([entry(7)]);
      await waitUntil(
        'a refused write',
        () => api.find((r) => r.method === 'PATCH' && r.status === 503).length > 0,
      );
      assert.equal(reporter.pending(), true);
      api.failWhen(undefined);
      await waitUntil('the retried write', () => storedReport(api)?.policies[0]?.generation === 7);
    } finally {
      reporter.stop();
      await api.close();
    }
  });
});
