// RBAC covers every API call the components make: the enforcer's real informer code runs against a recording
// stand-in API server (no real API server can run here), and each request it sends must be allowed by the
// ClusterRole the install description generates, and listed in the API-call table the RBAC is made from.
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { pino } from 'pino';
import { createInformerFeeds } from '../../enforcer/io/kubernetes-informer-feeds.js';
import type { KubeFeed } from '../../enforcer/kubernetes/kube-feed.js';
import { allows, API_CALLS, rulesFor, type PolicyRule } from '../../install/api-calls.js';
import { buildManifests } from '../../install/manifests.js';
import { Component, nameOf } from '../../install/names.js';
import { readValues } from '../../install/values.js';
import { attributesOf, startRecordingApiServer } from './support/recording-api-server.js';
import {
  NODE_STATUS_VERSION,
  RELEASE_CONFIGMAP_NAME,
  type NodeStatusReport,
} from '../../compiler/model/node-status.js';
import {
  createConfigMapReleaseWatch,
  createConfigMapStatusWriter,
} from '../../enforcer/io/kubernetes-node-status.js';
import {
  createControllerFeeds,
  createKubernetesStatusWriter,
} from '../../controller/io/kubernetes-controller-io.js';
import { createKubernetesLeaseStore } from '../../controller/io/kubernetes-lease-store.js';
import { startLeaderElection } from '../../controller/leader-election.js';
import type { PolicyStatus } from '../../controller/policy-status.js';
import { startStandInApiServer, type StandInRequest } from '../support/stand-in-api-server.js';
import { waitUntil } from '../support/wait-until.js';

const ALL_ON = readValues({ controller: { enabled: true } }).values;

function rulesOf(kind: string, name: string): PolicyRule[] {
  const role = buildManifests(ALL_ON).find(
    (o) => o['kind'] === kind && (o['metadata'] as { name: string }).name === name,
  );
  return (role?.['rules'] as PolicyRule[] | undefined) ?? [];
}

describe('install: RBAC against the calls the code makes', function () {
  this.timeout(30000);

  it('request paths map to RBAC attributes', () => {
    const cases: Array<[string, string, string, string, string]> = [
      ['GET', '/api/v1/pods?fieldSelector=spec.nodeName%3Dn', 'list', '', 'pods'],
      ['GET', '/api/v1/pods?watch=true', 'watch', '', 'pods'],
      [
        'GET',
        '/apis/security.runtime.com/v1/runtimepolicies',
        'list',
        'security.runtime.com',
        'runtimepolicies',
      ],
      [
        'PATCH',
        '/apis/security.runtime.com/v1/namespaces/a/runtimepolicies/p/status',
        'patch',
        'security.runtime.com',
        'runtimepolicies/status',
      ],
      [
        'PUT',
        '/apis/coordination.k8s.io/v1/namespaces/x/leases/l',
        'update',
        'coordination.k8s.io',
        'leases',
      ],
      ['GET', '/api/v1/namespaces/x', 'get', '', 'namespaces'],
    ];
    for (const [method, url, verb, group, resource] of cases)
      assert.deepEqual(
        (({ verb: v, group: g, resource: r }) => [v, g, r])(attributesOf(method, url)),
        [verb, group, resource],
        url,
      );
  });

  it('the enforcer informers (against the recording stand-in API server) make only calls its ClusterRole allows, and use every rule', async () => {
    const server = await startRecordingApiServer();
    const logger = pino({ level: 'silent' });
    const f = createInformerFeeds(server.kubeConfig(), 'node-1', logger);
    const feeds: KubeFeed[] = [f.runtimePolicies, f.runtimeHostPolicies, f.namespaces, f.pods, f.nodes];
    try {
      await Promise.all(feeds.map((x) => x.start(() => undefined)));
      const until = Date.now() + 10000;
      while (Date.now() < until && server.calls.filter((c) => c.verb === 'watch').length < 5) await sleep(20);
    } finally {
      await Promise.all(feeds.map((x) => x.stop()));
      await server.close();
    }
    const rules = rulesOf('ClusterRole', nameOf(Component.Enforcer));
    const seen = new Set<string>();
    for (const call of server.calls) {
      assert.ok(
        allows(rules, call),
        `not allowed: ${call.verb} ${call.group}/${call.resource} (${call.path})`,
      );
      seen.add(`${call.verb} ${call.group}/${call.resource}`);
    }
    // The table lists nothing the code does not do: least privilege.
    const table = API_CALLS[Component.Enforcer]
      .filter((c) => c.source === 'enforcer/io/kubernetes-informer-feeds.ts')
      .map((c) => `${c.verb} ${c.group}/${c.resource}`);
    assert.deepEqual([...seen].sort(), [...new Set(table)].sort());
  });

  /** The RBAC checks of the requests: an apply that created its object is also authorized as create. */
  function authorizedAs(
    requests: readonly StandInRequest[],
  ): Array<{ verb: string; group: string; resource: string; path: string }> {
    return requests.flatMap((r) =>
      r.method === 'PATCH' && r.status === 201 && r.contentType.startsWith('application/apply-patch')
        ? [r.call, { ...r.call, verb: 'create' }]
        : [r.call],
    );
  }

  /** Every call is allowed by the component's Role/ClusterRole, and the table lists nothing the code does not do. */
  function assertCovers(
    component: Component,
    calls: ReturnType<typeof authorizedAs>,
    namespace: string,
  ): void {
    const clusterRules = rulesOf('ClusterRole', nameOf(component));
    const localRules = rulesOf('Role', nameOf(component));
    const seen = new Set<string>();
    for (const call of calls) {
      const namespaced =
        call.path.startsWith('/api/v1/namespaces/' + namespace + '/') ||
        call.path.includes(`/namespaces/${namespace}/`);
      const inNamespaceOnly = API_CALLS[component].some(
        (c) => c.scope === 'namespace' && c.group === call.group && c.resource === call.resource,
      );
      const rules = inNamespaceOnly ? localRules : clusterRules;
      if (inNamespaceOnly)
        assert.ok(namespaced, `${call.verb} ${call.resource} outside ${namespace}: ${call.path}`);
      assert.ok(
        allows(rules, call),
        `${component} not allowed: ${call.verb} ${call.group}/${call.resource} (${call.path})`,
      );
      seen.add(`${call.verb} ${call.group}/${call.resource}`);
    }
    const table = API_CALLS[component].map((c) => `${c.verb} ${c.group}/${c.resource}`);
    assert.deepEqual([...seen].sort(), [...new Set(table)].sort(), component);
  }

  it('the enforcer (informers, node report writer, release watch; stand-in API server) makes only calls its RBAC allows, and uses every rule', async () => {
    const api = await startStandInApiServer();
    const logger = pino({ level: 'silent' });
    const kc = api.kubeConfig();
    const ns = ALL_ON.namespace;
    const f = createInformerFeeds(kc, 'node-1', logger);
    const feeds: KubeFeed[] = [f.runtimePolicies, f.runtimeHostPolicies, f.namespaces, f.pods, f.nodes];
    const watch = createConfigMapReleaseWatch(kc, ns, logger);
    let released = false;
    try {
      await Promise.all(feeds.map((x) => x.start(() => undefined)));
      await watch.start(() => (released = true));
      const writer = createConfigMapStatusWriter(kc, ns);
      const report: NodeStatusReport = {
        version: NODE_STATUS_VERSION,
        node: 'node-1',
        plane: 'fanotify',
        rtctlVersion: '0.1.0',
        updatedAt: new Date().toISOString(),
        released: false,
        policies: [],
      };
      await writer.write(report);
      await writer.write({ ...report, updatedAt: new Date(Date.now() + 1000).toISOString() });
      api.put('v1/configmaps', {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: RELEASE_CONFIGMAP_NAME, namespace: ns },
        data: { release: 'true' },
      });
      await waitUntil('the release', () => released);
      await waitUntil('six watches', () => api.requests.filter((r) => r.call.verb === 'watch').length >= 6);
    } finally {
      await watch.stop();
      await Promise.all(feeds.map((x) => x.stop()));
      await api.close();
    }
    assertCovers(Component.Enforcer, authorizedAs(api.requests), ns);
  });

  it('the status controller (informers, status writes, Lease election; stand-in API server) makes only calls its RBAC allows, and uses every rule', async () => {
    const api = await startStandInApiServer();
    const logger = pino({ level: 'silent' });
    const kc = api.kubeConfig();
    const ns = ALL_ON.namespace;
    api.put('security.runtime.com/v1/runtimepolicies', {
      apiVersion: 'security.runtime.com/v1',
      kind: 'RuntimePolicy',
      metadata: { name: 'p', namespace: 'a' },
      spec: {},
    });
    api.put('security.runtime.com/v1/runtimehostpolicies', {
      apiVersion: 'security.runtime.com/v1',
      kind: 'RuntimeHostPolicy',
      metadata: { name: 'h' },
      spec: {},
    });
    const f = createControllerFeeds(kc, ns, logger);
    const feeds: KubeFeed[] = [f.runtimePolicies, f.runtimeHostPolicies, f.reports, f.nodes];
    const status: PolicyStatus = {
      observedGeneration: 1,
      enforcedNodes: 0,
      expectedNodes: 0,
      rulesNotEnforced: [],
      conditions: [],
    };
    const store = createKubernetesLeaseStore(kc, ns, 'rtctl-controller');
    let leading = false;
    const a = startLeaderElection({
      store,
      identity: 'a',
      leaseDurationMs: 1000,
      renewDeadlineMs: 500,
      retryPeriodMs: 50,
      logger,
      onStartedLeading: () => (leading = true),
      onStoppedLeading: () => undefined,
    });
    try {
      await Promise.all(feeds.map((x) => x.start(() => undefined)));
      const writer = createKubernetesStatusWriter(kc);
      await writer.write({ kind: 'RuntimePolicy', namespace: 'a', name: 'p' }, status);
      await writer.write({ kind: 'RuntimeHostPolicy', name: 'h' }, status);
      await waitUntil('leading', () => leading);
      await waitUntil('a renewal', () =>
        api.requests.some((r) => r.method === 'PUT' && r.path.includes('/leases/')),
      );
      await waitUntil('four watches', () => api.requests.filter((r) => r.call.verb === 'watch').length >= 4);
    } finally {
      await a.stop();
      await Promise.all(feeds.map((x) => x.stop()));
      await api.close();
    }
    assertCovers(Component.Controller, authorizedAs(api.requests), ns);
  });

  it('each component with API calls gets exactly the rules generated from its table; the others no token', () => {
    for (const component of Object.values(Component)) {
      const calls = API_CALLS[component];
      const cluster = rulesOf('ClusterRole', nameOf(component));
      const local = rulesOf('Role', nameOf(component));
      assert.deepEqual(cluster, rulesFor(calls.filter((c) => c.scope === 'cluster')), component);
      assert.deepEqual(local, rulesFor(calls.filter((c) => c.scope === 'namespace')), component);
      for (const c of calls)
        assert.ok(allows(c.scope === 'cluster' ? cluster : local, c), `${component} ${c.verb}`);
      const sa = buildManifests(ALL_ON).find(
        (o) =>
          o['kind'] === 'ServiceAccount' && (o['metadata'] as { name: string }).name === nameOf(component),
      );
      assert.equal(sa?.['automountServiceAccountToken'], calls.length > 0, component);
    }
  });
});
