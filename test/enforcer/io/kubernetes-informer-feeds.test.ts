// The informer feeds (@kubernetes/client-node list + watch) against a stand-in API server on loopback: a
// minimal HTTP server that answers the list and watch requests for the five resources the enforcer reads.
// No real API server can run here; the stand-in implements only list, watch (ADDED/MODIFIED/DELETED) and
// records the requests so the test can check the node-scoped selectors.
import assert from 'node:assert/strict';
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import * as k8s from '@kubernetes/client-node';
import { pino } from 'pino';
import { createInformerFeeds } from '../../../enforcer/io/kubernetes-informer-feeds.js';
import type { KubeObject } from '../../../enforcer/kubernetes/kube-feed.js';
import { createKubernetesPolicySource } from '../../../enforcer/kubernetes/kubernetes-policy-source.js';
import type { PolicySnapshot } from '../../../enforcer/policy-source.js';

interface StandIn {
  url: string;
  requests: string[];
  emit(path: string, type: 'ADDED' | 'MODIFIED' | 'DELETED', object: KubeObject): void;
  close(): Promise<void>;
}

async function startStandIn(initial: Record<string, KubeObject[]>): Promise<StandIn> {
  const items = new Map(
    Object.entries(initial).map(([p, list]) => [
      p,
      new Map(list.map((o) => [`${o.metadata?.namespace ?? ''}/${o.metadata?.name ?? ''}`, o])),
    ]),
  );
  const watchers = new Map<string, Set<ServerResponse>>();
  const requests: string[] = [];
  let version = 100;
  const server: Server = createServer((req, res) => {
    requests.push(req.url ?? '');
    const url = new URL(req.url ?? '/', 'http://x');
    const store = items.get(url.pathname);
    if (store === undefined) {
      res.writeHead(404, { 'content-type': 'application/json' }).end('{"kind":"Status","code":404}');
      return;
    }
    if (url.searchParams.get('watch') === 'true') {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.flushHeaders();
      const set = watchers.get(url.pathname) ?? new Set();
      set.add(res);
      watchers.set(url.pathname, set);
      req.on('close', () => set.delete(res));
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json' }).end(
      JSON.stringify({
        kind: 'List',
        apiVersion: 'v1',
        metadata: { resourceVersion: String(version) },
        items: [...store.values()],
      }),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    emit(path, type, object) {
      const store = items.get(path);
      const key = `${object.metadata?.namespace ?? ''}/${object.metadata?.name ?? ''}`;
      version++;
      const withVersion = { ...object, metadata: { ...object.metadata, resourceVersion: String(version) } };
      if (type === 'DELETED') store?.delete(key);
      else store?.set(key, withVersion);
      for (const w of watchers.get(path) ?? []) w.write(`${JSON.stringify({ type, object: withVersion })}\n`);
    },
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

const RP = '/apis/security.runtime.com/v1/runtimepolicies';
const rp = (name: string, path: string): KubeObject => ({
  apiVersion: 'security.runtime.com/v1',
  kind: 'RuntimePolicy',
  metadata: { name, namespace: 'ns-a', resourceVersion: '1' },
  spec: { selector: { matchLabels: { app: 'web' } }, process: { matchPaths: [{ path }] }, action: 'Block' },
});

describe('Kubernetes informer feeds against a stand-in API server on loopback', function () {
  this.timeout(30000);

  it('lists and watches policies, namespaces, this node and its pods, and follows changes', async () => {
    const standIn = await startStandIn({
      [RP]: [rp('a', '/bin/sleep')],
      '/apis/security.runtime.com/v1/runtimehostpolicies': [],
      '/api/v1/namespaces': [
        {
          apiVersion: 'v1',
          kind: 'Namespace',
          metadata: { name: 'ns-a', resourceVersion: '1', annotations: { 'runtime-file-posture': 'block' } },
        },
      ],
      '/api/v1/pods': [
        {
          apiVersion: 'v1',
          kind: 'Pod',
          metadata: { name: 'web-1', namespace: 'ns-a', resourceVersion: '1', labels: { app: 'web' } },
        },
      ],
      '/api/v1/nodes': [
        {
          apiVersion: 'v1',
          kind: 'Node',
          metadata: { name: 'node-1', resourceVersion: '1', labels: { zone: 'a' } },
        },
      ],
    });
    const kc = new k8s.KubeConfig();
    kc.loadFromOptions({
      clusters: [{ name: 'stand-in', server: standIn.url, skipTLSVerify: true }],
      users: [{ name: 'u', token: 'test' }],
      contexts: [{ name: 'c', cluster: 'stand-in', user: 'u' }],
      currentContext: 'c',
    });
    const logger = pino({ level: 'silent' });
    const source = createKubernetesPolicySource({
      feeds: createInformerFeeds(kc, 'node-1', logger),
      nodeName: 'node-1',
      logger,
      debounceMs: 20,
    });
    const snapshots: PolicySnapshot[] = [];
    try {
      const first = await source.start((s) => snapshots.push(s));
      // Informers deliver their initial lists asynchronously: wait for the first complete snapshot.
      const end = Date.now() + 10000;
      let current = first;
      while (
        Date.now() < end &&
        (current.ruleSet.policies.length === 0 ||
          current.podLabels?.size !== 1 ||
          current.nodeLabels === undefined)
      ) {
        await sleep(50);
        current = snapshots.at(-1) ?? first;
      }
      assert.deepEqual(
        current.ruleSet.policies.map((p) => p.name),
        ['a'],
      );
      assert.equal(current.postures.get('ns-a')?.file, 'block');
      assert.deepEqual(current.podLabels?.get('ns-a/web-1'), { app: 'web' });
      assert.deepEqual(current.nodeLabels, { zone: 'a' });
      assert.ok(
        standIn.requests.some(
          (r) =>
            r.startsWith('/api/v1/pods') &&
            decodeURIComponent(r).includes('fieldSelector=spec.nodeName=node-1'),
        ),
        standIn.requests.join('\n'),
      );
      assert.ok(
        standIn.requests.some((r) => r.includes('watch=true')),
        'watches were opened',
      );

      const count = snapshots.length;
      standIn.emit(RP, 'MODIFIED', rp('a', '/bin/cat'));
      standIn.emit(RP, 'ADDED', rp('b', '/bin/ls'));
      const until = Date.now() + 10000;
      while (Date.now() < until && (snapshots.at(-1)?.ruleSet.policies.length ?? 0) < 2) await sleep(50);
      const changed = snapshots.at(-1);
      assert.ok(snapshots.length > count);
      assert.deepEqual(
        changed?.ruleSet.policies.map((p) => p.rules[0]?.matcher),
        [
          { kind: 'path', path: '/bin/cat' },
          { kind: 'path', path: '/bin/ls' },
        ],
      );
      standIn.emit(RP, 'DELETED', rp('a', '/bin/cat'));
      const until2 = Date.now() + 10000;
      while (Date.now() < until2 && (snapshots.at(-1)?.ruleSet.policies.length ?? 0) !== 1) await sleep(50);
      assert.deepEqual(
        snapshots.at(-1)?.ruleSet.policies.map((p) => p.name),
        ['b'],
      );
    } finally {
      await source.stop();
      await standIn.close();
    }
  });
});
