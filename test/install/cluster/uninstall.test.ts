// `rtctl uninstall` against the stand-in API server on loopback (no real API server can run here; its stand-in
// enforcers report released as the real ones do): release requested and awaited before the DaemonSet goes, reverse
// order, CRDs and policies kept unless --purge, idempotence, and a node that does not release.
import assert from 'node:assert/strict';
import { RELEASE_CONFIGMAP_NAME } from '../../../compiler/model/node-status.js';
import { runInstall } from '../../../install/cluster/install-run.js';
import { readValues } from '../../../install/values.js';
import type { StandInEnforcer } from '../support/stand-in-api-server.js';
import { contextFor, rtctl, startCluster } from './support.js';

const NS = 'rtctl-system';
const VALUES = readValues({ webhook: { certManager: false } }).values;

async function installed(enforcers?: StandInEnforcer[]): Promise<Awaited<ReturnType<typeof startCluster>>> {
  const c = await startCluster(enforcers === undefined ? {} : { enforcers });
  const { ctx } = contextFor(c.server);
  await runInstall(ctx, {
    values: VALUES,
    certManager: false,
    forceConflicts: false,
    upgrade: false,
    timeoutMs: 30_000,
  });
  // A user's policy, created after the install.
  c.server.seed('runtimepolicies', {
    apiVersion: 'security.runtime.com/v1',
    kind: 'RuntimePolicy',
    metadata: { name: 'block-shells', namespace: 'default' },
    spec: { action: 'Block' },
  });
  c.server.requests.length = 0;
  return c;
}

const remaining = (c: Awaited<ReturnType<typeof startCluster>>): string[] =>
  [...c.server.objects().keys()].filter((k) => !k.startsWith('/nodes/')).sort();

describe('rtctl uninstall against the stand-in API server', function () {
  this.timeout(120_000);

  it('requests release, waits until every node reports released, then deletes in reverse order (webhook configuration first), keeping only the CRDs and policies', async () => {
    const c = await installed();
    try {
      const r = await rtctl(['uninstall', '--kubeconfig', c.server.kubeconfigPath]);
      assert.equal(r.status, 0, r.stderr);
      const reqs = c.server.requests;
      const release = reqs.findIndex(
        (q) =>
          q.method === 'PATCH' &&
          q.resource === 'configmaps' &&
          q.path.endsWith(`/${RELEASE_CONFIGMAP_NAME}`),
      );
      assert.ok(release >= 0, 'release requested');
      assert.equal(reqs[release]?.contentType, 'application/apply-patch+yaml');
      assert.deepEqual((JSON.parse(reqs[release]?.body ?? '{}') as { data?: unknown }).data, {
        release: 'true',
      });
      // The stand-in enforcers release only after one more read of the reports: uninstall read them until then.
      const reportReads = reqs.flatMap((q, i) =>
        i > release && q.method === 'GET' && q.resource === 'configmaps' && q.url.includes('labelSelector')
          ? [i]
          : [],
      );
      const dsDelete = reqs.findIndex((q) => q.method === 'DELETE' && q.resource === 'daemonsets');
      assert.ok(reportReads.length >= 2, `reports read ${reportReads.length} times after the request`);
      assert.ok((reportReads[1] ?? Infinity) < dsDelete, 'released reports read before the DaemonSet goes');
      const deletes = reqs.filter((q) => q.method === 'DELETE' && q.status === 200).map((q) => q.resource);
      assert.equal(deletes[0], 'validatingwebhookconfigurations');
      assert.ok(deletes.indexOf('daemonsets') < deletes.indexOf('services'));
      assert.ok(deletes.indexOf('services') < deletes.indexOf('clusterroles'));
      assert.equal(deletes.at(-1), 'namespaces');
      assert.equal(deletes.indexOf('customresourcedefinitions'), -1);
      assert.deepEqual(remaining(c), [
        'apiextensions.k8s.io/customresourcedefinitions//runtimehostpolicies.security.runtime.com',
        'apiextensions.k8s.io/customresourcedefinitions//runtimepolicies.security.runtime.com',
        'security.runtime.com/runtimepolicies/default/block-shells',
      ]);
      assert.match(r.stderr, /^every node released enforcement$/m);
      assert.match(r.stderr, /^kept the CRDs and every policy \(--purge deletes them\)$/m);

      // Second run: nothing to do, exit 0, nothing deleted.
      const from = reqs.length;
      const again = await rtctl(['uninstall', '--kubeconfig', c.server.kubeconfigPath]);
      assert.equal(again.status, 0, again.stderr);
      assert.match(again.stderr, /^nothing to do: rtctl is not installed here$/m);
      const second = c.server.requests.slice(from);
      assert.deepEqual(
        second.filter((q) => q.status < 300 && q.method !== 'GET').map((q) => q.url),
        [],
      );
      assert.equal(remaining(c).length, 3);
    } finally {
      await c.close();
    }
  });

  it('--purge deletes the CRDs too, and with them every policy: nothing is left', async () => {
    const c = await installed();
    try {
      const r = await rtctl(['uninstall', '--kubeconfig', c.server.kubeconfigPath, '--purge']);
      assert.equal(r.status, 0, r.stderr);
      assert.deepEqual(remaining(c), []);
      const deletes = c.server.requests
        .filter((q) => q.method === 'DELETE' && q.status === 200)
        .map((q) => q.resource);
      assert.equal(deletes.at(-1), 'customresourcedefinitions');
    } finally {
      await c.close();
    }
  });

  it('a node that does not release stops the uninstall, names the node and withdraws the request; --force goes on with a warning', async () => {
    const c = await installed([
      { node: 'node-a', plane: 'fanotify' },
      { node: 'node-b', plane: 'bpf-lsm', releases: false },
    ]);
    try {
      const r = await rtctl(['uninstall', '--kubeconfig', c.server.kubeconfigPath, '--timeout', '1s']);
      assert.equal(r.status, 1, r.stderr);
      assert.match(
        r.stderr,
        /^rtctl: uninstall: uninstall stopped, nothing deleted: not released on node node-b after 1s; the release request was withdrawn\. Rerun with a longer --timeout, or with --force to delete anyway$/m,
      );
      assert.deepEqual(
        c.server.requests.filter((q) => q.method === 'DELETE').map((q) => `${q.resource} ${q.status}`),
        ['configmaps 200'],
      );
      assert.equal(c.server.get('configmaps', RELEASE_CONFIGMAP_NAME, NS), undefined);
      assert.ok(c.server.get('daemonsets', 'rtctl-enforcer', NS) !== undefined);

      const f = await rtctl([
        'uninstall',
        '--kubeconfig',
        c.server.kubeconfigPath,
        '--timeout',
        '1s',
        '--force',
      ]);
      assert.equal(f.status, 0, f.stderr);
      assert.match(f.stderr, /^WARNING: not released on node node-b after 1s; going on \(--force\)/m);
      assert.equal(c.server.get('daemonsets', 'rtctl-enforcer', NS), undefined);
    } finally {
      await c.close();
    }
  });

  it('the report of a node that left the cluster does not hold the uninstall', async () => {
    const c = await installed();
    try {
      c.server.seed('configmaps', {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: {
          name: 'rtctl-node-gone',
          namespace: NS,
          labels: { 'security.runtime.com/node-status': 'true' },
        },
        data: {
          'status.json': JSON.stringify({
            version: 1,
            node: 'gone',
            plane: 'fanotify',
            rtctlVersion: '0.1.0',
            updatedAt: '2025-01-01T00:00:00Z',
            released: false,
            policies: [],
          }),
        },
      });
      const r = await rtctl(['uninstall', '--kubeconfig', c.server.kubeconfigPath, '--timeout', '30s']);
      assert.equal(r.status, 0, r.stderr);
      assert.match(r.stderr, /^ignored the report of node gone: no such node any more$/m);
      assert.equal(c.server.get('configmaps', 'rtctl-node-gone', NS), undefined);
    } finally {
      await c.close();
    }
  });

  it('an enforcer pod without a report counts as not released', async () => {
    const c = await installed([
      { node: 'node-a', plane: 'fanotify' },
      { node: 'node-b', plane: 'fanotify', silent: true },
    ]);
    try {
      const r = await rtctl(['uninstall', '--kubeconfig', c.server.kubeconfigPath, '--timeout', '1s']);
      assert.equal(r.status, 1, r.stderr);
      assert.match(r.stderr, /1 enforcer pod\(s\) of 2 have no report after 1s/);
    } finally {
      await c.close();
    }
  });

  it('a namespace that existed before rtctl is kept; the objects in it go', async () => {
    const c = await startCluster();
    try {
      c.server.seed('namespaces', {
        apiVersion: 'v1',
        kind: 'Namespace',
        metadata: { name: NS, labels: { team: 'sec' } },
      });
      const { ctx, lines } = contextFor(c.server);
      await runInstall(ctx, {
        values: VALUES,
        certManager: false,
        forceConflicts: false,
        upgrade: false,
        timeoutMs: 30_000,
      });
      assert.ok(
        lines.includes(`namespace ${NS} exists and is not rtctl's: labelled, never deleted by uninstall`),
      );
      const r = await rtctl(['uninstall', '--kubeconfig', c.server.kubeconfigPath]);
      assert.equal(r.status, 0, r.stderr);
      assert.match(r.stderr, /^kept namespace rtctl-system: it existed before rtctl$/m);
      assert.deepEqual(
        remaining(c).filter((k) => !k.startsWith('apiextensions')),
        [`/namespaces//${NS}`],
      );
    } finally {
      await c.close();
    }
  });

  it('install withdraws a release request an interrupted uninstall left behind', async () => {
    const c = await installed();
    try {
      c.server.seed('configmaps', {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: RELEASE_CONFIGMAP_NAME, namespace: NS },
        data: { release: 'true' },
      });
      const { ctx, lines } = contextFor(c.server);
      await runInstall(ctx, {
        values: VALUES,
        certManager: false,
        forceConflicts: false,
        upgrade: false,
        timeoutMs: 30_000,
      });
      assert.equal(c.server.get('configmaps', RELEASE_CONFIGMAP_NAME, NS), undefined);
      assert.ok(lines.some((l) => l.startsWith(`deleted ConfigMap ${NS}/${RELEASE_CONFIGMAP_NAME}`)));
    } finally {
      await c.close();
    }
  });
});
