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
    const table = API_CALLS[Component.Enforcer].map((c) => `${c.verb} ${c.group}/${c.resource}`);
    assert.deepEqual([...seen].sort(), [...new Set(table)].sort());
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
