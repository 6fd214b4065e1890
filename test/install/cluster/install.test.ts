// `rtctl install` against the stand-in API server on loopback (HTTPS, kubeconfig file; no real API server can
// run here): the exact requests (server-side apply, field manager, dependency order with the CRDs Established
// first and the webhook configuration last), the certificate, idempotence, --verify, cert-manager, and the
// three errors (no cluster, missing RBAC, another version).
import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import path from 'node:path';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { RTCTL_VERSION, VERSION_LABEL } from '../../../install/cluster/install-plan.js';
import {
  certificateProblem,
  materialOf,
  webhookDnsNames,
} from '../../../install/cluster/webhook-certificate.js';
import { startCluster, rtctl, summary, versions } from './support.js';

const NS = 'rtctl-system';

describe('rtctl install against the stand-in API server', function () {
  this.timeout(120_000);

  it('applies every object with server-side apply (field manager rtctl, no force), CRDs Established before anything else, the webhook ready before its configuration, which comes last', async () => {
    const c = await startCluster();
    try {
      const r = await rtctl(['install', '--kubeconfig', c.server.kubeconfigPath, '--timeout', '60s']);
      assert.equal(r.status, 0, r.stderr);
      const reqs = c.server.requests;
      const patches = reqs.filter((q) => q.method === 'PATCH');
      assert.ok(patches.length > 15, `${patches.length} applies`);
      for (const p of patches) {
        assert.equal(p.contentType, 'application/apply-patch+yaml', p.url);
        const q = new URL(p.url, 'https://x').searchParams;
        assert.equal(q.get('fieldManager'), 'rtctl', p.url);
        assert.equal(q.get('force'), null, p.url);
      }
      assert.deepEqual(
        reqs.filter((q) => !['GET', 'PATCH'].includes(q.method)).map((q) => `${q.method} ${q.url}`),
        [],
      );
      const s = summary(reqs);
      const crdPatches = s.flatMap((x, i) => (x.startsWith('PATCH customresourcedefinitions') ? [i] : []));
      assert.equal(crdPatches.length, 2);
      const firstOtherAt = reqs.findIndex(
        (q) => q.method === 'PATCH' && q.resource !== 'customresourcedefinitions',
      );
      // Each CRD was read until the stand-in said Established (its second read), before any other apply.
      for (const name of [
        'runtimepolicies.security.runtime.com',
        'runtimehostpolicies.security.runtime.com',
      ]) {
        const reads = reqs.flatMap((q, i) =>
          q.method === 'GET' && q.resource === 'customresourcedefinitions' && q.path.endsWith(`/${name}`)
            ? [i]
            : [],
        );
        assert.equal(reads.length, 2, name);
        assert.ok((reads[1] ?? Infinity) < firstOtherAt, `${name} established before the rest`);
      }
      const order = patches.map((p) => p.resource);
      const firstOf = (res: string): number => order.indexOf(res);
      const lastOf = (res: string): number => order.lastIndexOf(res);
      assert.ok(lastOf('customresourcedefinitions') < firstOf('namespaces'));
      assert.ok(firstOf('namespaces') < firstOf('serviceaccounts'));
      assert.ok(lastOf('rolebindings') < firstOf('services') || firstOf('rolebindings') === -1);
      assert.ok(lastOf('clusterrolebindings') < firstOf('services'));
      assert.ok(lastOf('services') < firstOf('secrets'));
      assert.ok(firstOf('secrets') < firstOf('daemonsets'));
      assert.equal(order.at(-1), 'validatingwebhookconfigurations');
      const vwc = reqs.findIndex(
        (q) => q.method === 'PATCH' && q.resource === 'validatingwebhookconfigurations',
      );
      const webhookReady = reqs.findIndex(
        (q) => q.method === 'GET' && q.path.endsWith('/deployments/rtctl-webhook'),
      );
      assert.ok(
        webhookReady >= 0 && webhookReady < vwc,
        'webhook Deployment read ready before its configuration',
      );
      // Every object carries the version; the caBundle is the CA that signed the serving certificate.
      const ds = c.server.get('daemonsets', 'rtctl-enforcer', NS);
      assert.equal(ds?.metadata.labels?.[VERSION_LABEL], RTCTL_VERSION);
      const material = materialOf(c.server.get('secrets', 'rtctl-webhook-tls', NS));
      assert.ok(material !== undefined);
      assert.equal(certificateProblem(material, webhookDnsNames(NS), new Date()), undefined);
      const config = c.server.get('validatingwebhookconfigurations', 'rtctl-webhook');
      const hooks = config?.['webhooks'] as Array<{ clientConfig: { caBundle?: string } }>;
      assert.ok(hooks.length > 0);
      for (const h of hooks)
        assert.equal(Buffer.from(h.clientConfig.caBundle ?? '', 'base64').toString(), material.caCert);
      assert.equal(config?.metadata['annotations'], undefined);
      assert.match(r.stderr, /^created CustomResourceDefinition runtimepolicies\.security\.runtime\.com$/m);
      assert.match(r.stderr, /^established CustomResourceDefinition/m);
      assert.match(r.stderr, /^installed$/m);
    } finally {
      await c.close();
    }
  });

  it('a second run changes nothing: the same apply bodies, no resourceVersion moves, no POST or DELETE, the certificate kept', async () => {
    const c = await startCluster();
    try {
      const args = ['install', '--kubeconfig', c.server.kubeconfigPath];
      assert.equal((await rtctl(args)).status, 0);
      const firstBodies = c.server.requests
        .filter((q) => q.method === 'PATCH')
        .map((q) => `${q.url}\n${q.body}`);
      const before = versions(c.server);
      const secret = JSON.stringify(c.server.get('secrets', 'rtctl-webhook-tls', NS)?.['data']);
      const from = c.server.requests.length;
      const r = await rtctl(args);
      assert.equal(r.status, 0, r.stderr);
      const second = c.server.requests.slice(from);
      assert.deepEqual(
        second.filter((q) => q.method !== 'GET' && q.method !== 'PATCH').map((q) => q.method),
        [],
      );
      assert.deepEqual(
        second.filter((q) => q.method === 'PATCH').map((q) => `${q.url}\n${q.body}`),
        firstBodies,
      );
      assert.deepEqual(versions(c.server), before);
      assert.equal(JSON.stringify(c.server.get('secrets', 'rtctl-webhook-tls', NS)?.['data']), secret);
      assert.match(r.stderr, /keeping the valid one/);
      // Pod templates hold nothing that differs between runs (else every run would restart the pods).
      assert.doesNotMatch(
        JSON.stringify(c.server.get('daemonsets', 'rtctl-enforcer', NS)?.['spec']),
        /restartedAt|20\d\d-/,
      );
    } finally {
      await c.close();
    }
  });

  it('a certificate that expires within 30 days is replaced, and the configuration gets the new CA', async () => {
    const c = await startCluster();
    try {
      const { issueCertificate, tlsSecret } = await import('../../../install/cluster/webhook-certificate.js');
      c.server.seed('namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } });
      const old = issueCertificate(NS, new Date(Date.now() - 350 * 24 * 3600 * 1000));
      c.server.seed('secrets', tlsSecret(NS, old, {}));
      const r = await rtctl(['install', '--kubeconfig', c.server.kubeconfigPath]);
      assert.equal(r.status, 0, r.stderr);
      assert.match(
        r.stderr,
        /replacing the one in Secret rtctl-webhook-tls: tls\.crt expires|ca\.crt expires/,
      );
      const now = materialOf(c.server.get('secrets', 'rtctl-webhook-tls', NS));
      assert.notEqual(now?.caCert, old.caCert);
    } finally {
      await c.close();
    }
  });

  it('--verify prints the plane of each node and when it reported', async () => {
    const c = await startCluster();
    try {
      const r = await rtctl(['install', '--kubeconfig', c.server.kubeconfigPath, '--verify']);
      assert.equal(r.status, 0, r.stderr);
      assert.deepEqual(r.stdout.trim().split('\n'), [
        'node node-a: plane fanotify, rtctl 0.1.0, 0/0 policies enforced, last report ' +
          r.stdout.split('last report ')[1]?.split('\n')[0],
        'node node-b: plane bpf-lsm, rtctl 0.1.0, 0/0 policies enforced, last report ' +
          r.stdout.split('last report ')[2]?.split('\n')[0],
      ]);
      assert.match(r.stdout, /last report 2026-01-01T00:00:00\.000Z \(\d+[smh] ago\)/);
      assert.match(r.stderr, /^ready DaemonSet rtctl-system\/rtctl-enforcer$/m);
      assert.match(r.stderr, /^verified: 2 node\(s\) report$/m);
    } finally {
      await c.close();
    }
  });

  it('--verify exits 1 naming a node without a report', async () => {
    const c = await startCluster({
      enforcers: [
        { node: 'node-a', plane: 'fanotify' },
        { node: 'node-b', plane: 'fanotify', silent: true },
      ],
    });
    try {
      const r = await rtctl([
        'install',
        '--kubeconfig',
        c.server.kubeconfigPath,
        '--verify',
        '--timeout',
        '1s',
      ]);
      assert.equal(r.status, 1, r.stderr);
      assert.match(r.stdout, /^node node-b: no report$/m);
      assert.match(r.stderr, /^rtctl: install: not verified within 1s: no report from node node-b$/m);
    } finally {
      await c.close();
    }
  });

  it('workloads not ready in time: exit 1 naming them, and the webhook configuration is never applied', async () => {
    const c = await startCluster();
    c.server.workloadsReady = false;
    try {
      // The timeout covers the CRDs' wait too (Established on their second read): 3 s leaves room for that
      // on a loaded machine, the workloads never get ready.
      const r = await rtctl(['install', '--kubeconfig', c.server.kubeconfigPath, '--timeout', '3s']);
      assert.equal(r.status, 1, r.stderr);
      assert.match(
        r.stderr,
        /rtctl: install: Deployment rtctl-system\/rtctl-webhook not ready within 3s: 0\/2 ready, 0\/2 updated, 0\/2 available; the ValidatingWebhookConfiguration was not applied/,
      );
      assert.equal(
        c.server.requests.filter((q) => q.resource === 'validatingwebhookconfigurations').length,
        0,
      );
    } finally {
      await c.close();
    }
  });

  it('--cert-manager applies the Issuer and Certificate, waits for the Secret cert-manager issues, sets no caBundle', async () => {
    const c = await startCluster({ certManager: true });
    try {
      const r = await rtctl(['install', '--kubeconfig', c.server.kubeconfigPath, '--cert-manager']);
      assert.equal(r.status, 0, r.stderr);
      const order = c.server.requests.filter((q) => q.method === 'PATCH').map((q) => q.resource);
      assert.ok(order.indexOf('issuers') < order.indexOf('certificates'));
      assert.ok(order.indexOf('certificates') < order.indexOf('daemonsets'));
      assert.equal(order.indexOf('secrets'), -1, 'rtctl writes no Secret');
      const config = c.server.get('validatingwebhookconfigurations', 'rtctl-webhook');
      for (const h of config?.['webhooks'] as Array<{ clientConfig: { caBundle?: string } }>)
        assert.equal(h.clientConfig.caBundle, undefined);
      assert.equal(
        (config?.metadata['annotations'] as Record<string, string>)['cert-manager.io/inject-ca-from'],
        `${NS}/rtctl-webhook`,
      );
    } finally {
      await c.close();
    }
  });

  it('--cert-manager where cert-manager is not installed: exit 2 saying so', async () => {
    const c = await startCluster();
    try {
      const r = await rtctl(['install', '--kubeconfig', c.server.kubeconfigPath, '--cert-manager']);
      assert.equal(r.status, 2);
      assert.match(
        r.stderr,
        /^rtctl: install: patch issuers\.cert-manager\.io "rtctl-webhook" in namespace rtctl-system: the server does not serve issuers in cert-manager\.io\/v1 \(is cert-manager installed\?\)/m,
      );
    } finally {
      await c.close();
    }
  });
});

describe('rtctl install errors against the stand-in API server', function () {
  this.timeout(60_000);

  it("no kubeconfig anywhere: exit 2 saying so (not client-node's fallback to http://localhost:8080)", async () => {
    const home = await mkdtemp(path.join(tmpdir(), 'rtctl-nohome-'));
    try {
      const r = await rtctl(['install', '--timeout', '5s'], 60_000, { KUBECONFIG: '', HOME: home });
      assert.equal(r.status, 2, r.stderr);
      assert.match(r.stderr, /^rtctl: install: no kubeconfig found: set KUBECONFIG or --kubeconfig/m);
    } finally {
      await rm(home, { recursive: true, force: true });
    }
  });

  it('no cluster reachable: exit 2 naming the server URL and the cause', async () => {
    const c = await startCluster();
    try {
      // A port that was just free: nothing listens there.
      const port = await new Promise<number>((resolve) => {
        const s = createServer().listen(0, '127.0.0.1', () => {
          const p = (s.address() as { port: number }).port;
          s.close(() => resolve(p));
        });
      });
      const kubeconfig = path.join(c.dir, 'closed');
      const { readFile } = await import('node:fs/promises');
      await writeFile(
        kubeconfig,
        (await readFile(c.server.kubeconfigPath, 'utf8')).replace(c.server.url, `https://127.0.0.1:${port}`),
      );
      const r = await rtctl(['install', '--kubeconfig', kubeconfig]);
      assert.equal(r.status, 2);
      assert.match(
        r.stderr,
        new RegExp(
          `^rtctl: install: cannot reach the cluster at https://127\\.0\\.0\\.1:${port} \\(get daemonsets\\.apps "rtctl-enforcer" in namespace rtctl-system\\): connect ECONNREFUSED`,
          'm',
        ),
      );
    } finally {
      await c.close();
    }
  });

  it('fields another manager owns: exit 2 naming the object and the manager; --force-conflicts takes them over', async () => {
    const c = await startCluster();
    try {
      c.server.seed('namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } });
      c.server.seed('serviceaccounts', {
        apiVersion: 'v1',
        kind: 'ServiceAccount',
        metadata: {
          name: 'rtctl-webhook',
          namespace: NS,
          labels: { team: 'x' },
          managedFields: [{ manager: 'helm' }],
        },
      });
      const r = await rtctl(['install', '--kubeconfig', c.server.kubeconfigPath]);
      assert.equal(r.status, 2);
      assert.match(
        r.stderr,
        /^rtctl: install: conflict on patch serviceaccounts "rtctl-webhook" in namespace rtctl-system: Apply failed with 1 conflict: conflict with "helm": \.metadata\.labels; another field manager owns these fields \(rerun with --force-conflicts to take them over\)$/m,
      );
      const from = c.server.requests.length;
      const f = await rtctl(['install', '--kubeconfig', c.server.kubeconfigPath, '--force-conflicts']);
      assert.equal(f.status, 0, f.stderr);
      const patches = c.server.requests.slice(from).filter((q) => q.method === 'PATCH');
      assert.ok(
        patches.length > 0 &&
          patches.every((q) => new URL(q.url, 'https://x').searchParams.get('force') === 'true'),
      );
    } finally {
      await c.close();
    }
  });

  it('a kubeconfig without the context asked for: exit 2 naming it', async () => {
    const c = await startCluster();
    try {
      const r = await rtctl(['install', '--kubeconfig', c.server.kubeconfigPath, '--context', 'prod']);
      assert.equal(r.status, 2);
      assert.match(r.stderr, /^rtctl: install: kubeconfig has no context "prod"$/m);
      assert.equal(c.server.requests.length, 0);
    } finally {
      await c.close();
    }
  });

  it('missing RBAC: exit 2 naming the verb, the resource and the namespace of the refused request', async () => {
    const cases: Array<[{ verb: string; resource: string; namespace?: string }, RegExp]> = [
      [
        { verb: 'patch', resource: 'clusterrolebindings' },
        /^rtctl: install: permission denied: cannot patch clusterrolebindings\.rbac\.authorization\.k8s\.io "rtctl-enforcer" \(cluster-wide\) \(clusterrolebindings "rtctl-enforcer" is forbidden: User "installer" cannot patch/m,
      ],
      [
        { verb: 'get', resource: 'secrets', namespace: NS },
        /^rtctl: install: permission denied: cannot get secrets "rtctl-webhook-tls" in namespace rtctl-system \(/m,
      ],
    ];
    for (const [forbid, expected] of cases) {
      const c = await startCluster();
      try {
        c.server.forbidden = [forbid];
        const r = await rtctl(['install', '--kubeconfig', c.server.kubeconfigPath]);
        assert.equal(r.status, 2, forbid.resource);
        assert.match(r.stderr, expected);
        assert.match(r.stderr, /docs\/install\.md/);
      } finally {
        await c.close();
      }
    }
  });

  it('an install of another version: exit 2 and nothing applied, unless --upgrade', async () => {
    const c = await startCluster();
    try {
      c.server.seed('namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } });
      c.server.seed('daemonsets', {
        apiVersion: 'apps/v1',
        kind: 'DaemonSet',
        metadata: { name: 'rtctl-enforcer', namespace: NS, labels: { [VERSION_LABEL]: '0.0.9' } },
        spec: {},
      });
      const r = await rtctl(['install', '--kubeconfig', c.server.kubeconfigPath]);
      assert.equal(r.status, 2);
      assert.match(
        r.stderr,
        /^rtctl: install: namespace rtctl-system has an rtctl 0\.0\.9 install \(DaemonSet rtctl-enforcer, label app\.kubernetes\.io\/version\); this is rtctl 0\.1\.0: rerun with --upgrade to replace it$/m,
      );
      assert.equal(c.server.requests.filter((q) => q.method !== 'GET').length, 0);
      const u = await rtctl(['install', '--kubeconfig', c.server.kubeconfigPath, '--upgrade']);
      assert.equal(u.status, 0, u.stderr);
      assert.match(u.stderr, /replacing an rtctl 0\.0\.9 install with rtctl 0\.1\.0 \(--upgrade\)/);
      assert.equal(
        c.server.get('daemonsets', 'rtctl-enforcer', NS)?.metadata.labels?.[VERSION_LABEL],
        RTCTL_VERSION,
      );
    } finally {
      await c.close();
    }
  });
});
