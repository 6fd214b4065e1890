// `rtctl controller run` as a real process against the stand-in API server (no real API server can run here):
// health endpoints, a status written, the Lease held and given up on SIGTERM; usage mistakes exit 2.
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { get } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readControllerConfig, type ControllerFlags } from '../../controller/config.js';
import { readPolicyStatus } from '../../controller/policy-status.js';
import { REPO_ROOT, rtctlArgs } from '../enforcer/support/enforcer-process.js';
import { startStandInApiServer } from '../support/stand-in-api-server.js';
import { waitUntil } from '../support/wait-until.js';

const FLAGS: ControllerFlags = {
  leaseName: 'rtctl-controller',
  healthListen: '127.0.0.1:8081',
  leaseDurationMs: '15000',
  renewDeadlineMs: '10000',
  retryPeriodMs: '2000',
  minWriteIntervalMs: '5000',
  staleAfterMs: '180000',
  pendingGraceMs: '60000',
  resyncMs: '30000',
};

function httpStatus(url: string): Promise<number> {
  return new Promise((resolve) => {
    get(url, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    }).on('error', () => resolve(0));
  });
}

describe('rtctl controller run', function () {
  this.timeout(60000);

  const bad: Array<[string, Partial<ControllerFlags>, RegExp]> = [
    [
      'a renew deadline not below the lease duration',
      { renewDeadlineMs: '15000' },
      /--renew-deadline-ms must be less/,
    ],
    [
      'a retry period not below the renew deadline',
      { retryPeriodMs: '10000' },
      /--retry-period-ms must be less/,
    ],
    ['a health address that is not one', { healthListen: 'nowhere' }, /--health-listen: /],
    [
      'a write interval that is not a number',
      { minWriteIntervalMs: '5s' },
      /--min-write-interval-ms: a whole number/,
    ],
  ];
  for (const [name, over, message] of bad)
    it(`refuses ${name}`, () =>
      assert.throws(() => readControllerConfig({ ...FLAGS, ...over }, {}), message));

  it('takes the namespace and identity from the pod environment, the Lease namespace from the namespace', () => {
    const c = readControllerConfig(
      { ...FLAGS, leaderElect: true },
      { POD_NAMESPACE: 'sec', POD_NAME: 'ctl-1' },
    );
    assert.equal(c.namespace, 'sec');
    assert.deepEqual(
      [c.leaderElection?.namespace, c.leaderElection?.identity, c.leaderElection?.name],
      ['sec', 'ctl-1', 'rtctl-controller'],
    );
    assert.equal(readControllerConfig(FLAGS, {}).leaderElection, undefined);
  });

  it('a usage mistake exits 2 with a message', () => {
    const r = spawnSync(process.execPath, rtctlArgs(['controller', 'run', '--resync-ms', 'soon']), {
      cwd: REPO_ROOT,
      encoding: 'utf8',
    });
    assert.equal(r.status, 2);
    assert.match(r.stderr, /^rtctl: --resync-ms: a whole number of milliseconds/m);
  });

  it('runs against the stand-in API server: health, a status written under a Lease, the Lease given up on SIGTERM', async () => {
    const api = await startStandInApiServer();
    const work = mkdtempSync(join(tmpdir(), 'rtctl-controller-'));
    api.put('security.runtime.com/v1/runtimehostpolicies', {
      apiVersion: 'security.runtime.com/v1',
      kind: 'RuntimeHostPolicy',
      metadata: { name: 'h' },
      spec: {
        nodeSelector: { matchLabels: { role: 'x' } },
        process: { matchPaths: [{ path: '/bin/x' }] },
        action: 'Block',
      },
    });
    writeFileSync(
      join(work, 'kubeconfig'),
      `apiVersion: v1\nkind: Config\nclusters: [{name: s, cluster: {server: "${api.url}", insecure-skip-tls-verify: true}}]\nusers: [{name: u, user: {token: ctl}}]\ncontexts: [{name: c, context: {cluster: s, user: u}}]\ncurrent-context: c\n`,
    );
    const child = spawn(
      process.execPath,
      rtctlArgs([
        'controller',
        'run',
        '--kubeconfig',
        join(work, 'kubeconfig'),
        '--namespace',
        'rtctl-system',
        '--leader-elect',
        '--identity',
        'ctl-a',
        '--health-listen',
        '127.0.0.1:0',
        '--min-write-interval-ms',
        '200',
      ]),
      { cwd: REPO_ROOT, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let err = '';
    child.stderr.setEncoding('utf8').on('data', (c: string) => (err += c));
    try {
      const health = await waitUntil(
        'the health address',
        () => /"health":"(http:[^"]+)"/.exec(err)?.[1],
        30000,
      );
      assert.equal(await httpStatus(`${health}/healthz`), 200);
      assert.equal(await httpStatus(`${health}/readyz`), 200);
      assert.equal(await httpStatus(`${health}/other`), 404);
      const status = await waitUntil('a status', () =>
        readPolicyStatus(api.get('security.runtime.com/v1/runtimehostpolicies', '', 'h')?.['status']),
      );
      // No node and no report yet: nothing is known to be enforced.
      assert.equal(`${status.conditions[0]?.status} ${status.conditions[0]?.reason}`, 'Unknown NoReports');
      const lease = (): { holderIdentity?: string } =>
        api.get('coordination.k8s.io/v1/leases', 'rtctl-system', 'rtctl-controller')?.['spec'] ?? {};
      assert.equal(lease().holderIdentity, 'ctl-a');
      const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      assert.equal(await exited, 0, err.slice(-2000));
      assert.equal(lease().holderIdentity, '');
    } finally {
      child.kill('SIGKILL');
      await api.close();
      rmSync(work, { recursive: true, force: true });
    }
  });
});
