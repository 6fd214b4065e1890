// The rtctl image: built from scratch by `npm run image` (Debian root file system by mmdebstrap, cached by its
// input hash; Node 20 and dependencies from the npm registry; native tools compiled here), reproducible (the
// same inputs assemble to the same digest), imported into a private containerd, and the webhook run from it
// (as the Deployment runs it: uid 65532, read-only root) answers AdmissionReviews over HTTPS.
// Needs root, mmdebstrap, containerd and the npm registry; run under the heavy lock.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { chmodSync, chownSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { get } from 'node:http';
import { tmpdir } from 'node:os';
import { createServer } from 'node:net';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { assembleImage } from '../../image/assemble-oci.js';
import { toYamlStream } from '../../compiler/emit/yaml-text.js';
import { Ports } from '../../install/names.js';
import { startContainerd, containerdPrereqs, type Containerd } from '../enforcer/support/containerd.js';
import { readLogs, stopHelper, waitForAlert, waitForStatus } from '../enforcer/support/enforcer-process.js';
import { hasCommand, isRoot, requirePrereqs } from '../support/prereq.js';
import { createReview, createTestCertificates, createTestClient } from '../webhook/support/harness.js';
import {
  buildImageOnce,
  IMAGE_EPOCH as EPOCH,
  IMAGE_OUT as OUT,
  rootfsTar,
  TEST_IMAGE as IMAGE,
} from './support/build-image.js';
import {
  ctrRunArgs,
  decodeCapabilities,
  readBoundingSet,
  readEnforcerPodShape,
} from './support/daemonset-run.js';

function readLog(file: string): string {
  try {
    return readFileSync(file, 'utf8').slice(-3000);
  } catch {
    return '(no log)';
  }
}

function getText(url: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    get(url, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    }).on('error', reject);
  });
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  await new Promise((resolve) => server.close(resolve));
  return typeof address === 'object' && address !== null ? address.port : 0;
}

function tarJson(archive: string, member: string): Record<string, unknown> {
  return JSON.parse(execFileSync('tar', ['-xOf', archive, member], { encoding: 'utf8' })) as Record<
    string,
    unknown
  >;
}

const policy = (action: string): Record<string, unknown> => ({
  apiVersion: 'security.runtime.com/v1',
  kind: 'RuntimePolicy',
  metadata: { name: 'block-sleep', namespace: 'default' },
  spec: {
    selector: { matchLabels: { app: 'web' } },
    process: { matchPaths: [{ path: '/bin/sleep' }] },
    action,
  },
});

describe('image: built from Debian packages and the npm registry, run under containerd', function () {
  this.timeout(30 * 60 * 1000);
  let digest = '';

  before(function () {
    requirePrereqs(this, [
      [isRoot(), 'must run as root (mmdebstrap --mode=root)'],
      [hasCommand('mmdebstrap'), 'mmdebstrap (Debian package mmdebstrap)'],
      [hasCommand('clang') && hasCommand('bpftool'), 'clang and bpftool for the BPF objects'],
    ]);
    // Once per run (the IMDS image test shares it); RTCTL_TEST_IMAGE_PREBUILT=1 reuses build/image (local only).
    buildImageOnce();
    digest = readFileSync(path.join(OUT, 'digest'), 'utf8').trim();
  });

  it('is an OCI image layout: index names the image, the config runs rtctl, two gzip layers', () => {
    const archive = path.join(OUT, 'rtctl-oci.tar');
    assert.deepEqual(tarJson(archive, './oci-layout'), { imageLayoutVersion: '1.0.0' });
    const index = tarJson(archive, './index.json') as {
      manifests: Array<{ digest: string; annotations: Record<string, string> }>;
    };
    assert.equal(index.manifests[0]?.digest, digest);
    assert.equal(
      index.manifests[0]?.annotations['io.containerd.image.name'],
      `docker.io/${IMAGE}`.replace('docker.io/rtctl.test', 'rtctl.test'),
    );
    const manifest = tarJson(archive, `./blobs/sha256/${digest.slice(7)}`) as {
      config: { digest: string };
      layers: Array<{ mediaType: string }>;
    };
    assert.deepEqual(
      manifest.layers.map((l) => l.mediaType),
      ['application/vnd.oci.image.layer.v1.tar+gzip', 'application/vnd.oci.image.layer.v1.tar+gzip'],
    );
    const config = tarJson(archive, `./blobs/sha256/${manifest.config.digest.slice(7)}`) as {
      created: string;
      config: { Entrypoint: string[] };
    };
    assert.deepEqual(config.config.Entrypoint, ['/usr/local/bin/rtctl']);
    assert.equal(config.created, '2026-01-01T00:00:00Z');
  });

  it('the same inputs assemble to the same digest', async () => {
    const rootfs = rootfsTar();
    const again = await assembleImage({
      rootfsTar: rootfs,
      appDir: path.join(OUT, 'app'),
      name: IMAGE,
      out: path.join(OUT, 'again.tar'),
      epoch: EPOCH,
    });
    assert.equal(again, digest);
    assert.equal(
      execFileSync('sha256sum', [path.join(OUT, 'again.tar')], { encoding: 'utf8' }).split(' ')[0],
      execFileSync('sha256sum', [path.join(OUT, 'rtctl-oci.tar')], { encoding: 'utf8' }).split(' ')[0],
    );
  });

  describe('under a private containerd', () => {
    let containerd: Containerd | undefined;

    before(async function () {
      requirePrereqs(this, containerdPrereqs());
      containerd = await startContainerd();
      const imported = await containerd.ctr(['images', 'import', path.join(OUT, 'rtctl-oci.tar')]);
      assert.equal(imported.code, 0, imported.stderr);
    });

    after(async () => {
      await containerd?.stop();
    });

    it('imports with its digest and runs rtctl with Node 20', async () => {
      assert.ok(containerd);
      const images = await containerd.ctr(['images', 'ls']);
      assert.ok(
        images.stdout.split('\n').some((l) => l.startsWith(IMAGE) && l.includes(digest)),
        images.stdout,
      );
      const r = await containerd.ctr([
        'run',
        '--rm',
        '--read-only',
        IMAGE,
        'version-check',
        'node',
        '-e',
        'process.stdout.write(process.version)',
      ]);
      assert.equal(r.code, 0, r.stderr);
      assert.match(r.stdout, /^v20\./);
      const help = await containerd.ctr([
        'run',
        '--rm',
        '--read-only',
        IMAGE,
        'help-check',
        'rtctl',
        '--version',
      ]);
      assert.equal(help.code, 0, help.stderr);
      assert.equal(help.stdout.trim(), '0.1.0');
    });

    it('the webhook runs from the image as the Deployment runs it and answers an AdmissionReview over HTTPS', async () => {
      assert.ok(containerd);
      const certs = createTestCertificates();
      // The Deployment runs the webhook as uid 65532 with a read-only root; the Secret's files are readable to it.
      for (const f of [certs.certFile, certs.keyFile]) chownSync(f, 65532, 65532);
      chmodSync(certs.dir, 0o755);
      const log = path.join(certs.dir, 'webhook.log');
      const port = await freePort();
      const run = await containerd.ctr([
        'run',
        '-d',
        '--net-host',
        '--read-only',
        '--log-uri',
        `file://${log}`,
        '--mount',
        `type=bind,src=${certs.dir},dst=/etc/rtctl/tls,options=rbind:ro`,
        IMAGE,
        'webhook-under-test',
        'setpriv',
        '--reuid=65532',
        '--regid=65532',
        '--clear-groups',
        '--no-new-privs',
        'rtctl',
        'webhook',
        'serve',
        '--cert=/etc/rtctl/tls/tls.crt',
        '--key=/etc/rtctl/tls/tls.key',
        `--listen=127.0.0.1:${port}`,
      ]);
      assert.equal(run.code, 0, run.stderr);
      const client = createTestClient(port, certs.caCert);
      try {
        let ready = false;
        for (let i = 0; i < 300 && !ready; i++) {
          ready = await client.request('GET', '/readyz', undefined, 2000).then(
            (r) => r.status === 200,
            () => false,
          );
          if (!ready) await sleep(100);
        }
        assert.ok(
          ready,
          `webhook in the image did not become ready on ${port} (Deployment port ${Ports.webhookHttps}):\n${readLog(log)}`,
        );
        const allow = createReview(policy('Block'));
        const deny = createReview(policy('Nope'));
        const ok = (await client.post('/validate', allow)).json as {
          response: { uid: string; allowed: boolean };
        };
        const no = (await client.post('/validate', deny)).json as {
          response: { uid: string; allowed: boolean; status: { message: string } };
        };
        assert.equal(ok.response.uid, (allow['request'] as { uid: string }).uid);
        assert.equal(ok.response.allowed, true);
        assert.equal(no.response.allowed, false);
        assert.match(no.response.status.message, /RT2004/);
      } finally {
        client.close();
        await containerd.removeContainer('webhook-under-test');
        certs.cleanup();
      }
    });

    it('the enforcer runs from the image as the DaemonSet runs it (host PID, its mounts and capabilities, not privileged) and blocks an exec and, with the cgroup network plane, a connect to the metadata address in a sibling pod container', async function () {
      this.timeout(5 * 60 * 1000);
      assert.ok(containerd);
      const cd = containerd;
      const shape = readEnforcerPodShape();
      assert.equal(shape.hostPID, true, 'the DaemonSet runs in the host PID namespace');
      const work = mkdtempSync(path.join(tmpdir(), 'rtctl-image-enforcer-'));
      const dirs = Object.fromEntries(
        ['policies', 'state', 'log', 'tmp', 'bpf'].map((d) => [d, path.join(work, d)] as const),
      );
      for (const d of Object.values(dirs)) mkdirSync(d);
      writeFileSync(
        path.join(dirs['policies'] ?? '', 'block-sleep.yaml'),
        toYamlStream([
          {
            apiVersion: 'security.runtime.com/v1',
            kind: 'RuntimePolicy',
            metadata: { name: 'block-sleep', namespace: 'ns-image' },
            spec: {
              severity: 6,
              selector: { matchLabels: { app: 'img-web' } },
              process: { matchPaths: [{ path: '/bin/sleep' }] },
              action: 'Block',
            },
          },
          {
            apiVersion: 'security.runtime.com/v1',
            kind: 'RuntimePolicy',
            metadata: { name: 'no-imds', namespace: 'ns-image' },
            spec: {
              severity: 7,
              selector: { matchLabels: { app: 'img-web' } },
              network: { matchAddresses: [{ cidr: '169.254.169.254/32', ports: [80], protocol: 'tcp' }] },
              action: 'Block',
            },
          },
        ]),
      );
      const port = await freePort();
      const url = `http://127.0.0.1:${port}`;
      const log = path.join(work, 'enforcer.log');
      // A sandboxed test host may lack capabilities in its own bounding set (CAP_SYS_RESOURCE here, which the
      // DaemonSet asks for only for kernels before 5.11): those are left out and named in the test's output.
      const bounding = new Set(readBoundingSet());
      const ungrantable = shape.capabilities.filter((c) => !bounding.has(c));
      if (ungrantable.length > 0)
        process.stderr.write(
          `      (this host cannot grant ${ungrantable.join(', ')}: the enforcer runs without)\n`,
        );
      // The DaemonSet's environment turns the cgroup network plane on.
      assert.equal(shape.env['RTCTL_NETWORK_PIN_DIR'], '/sys/fs/bpf/rtctl-net');
      assert.ok(shape.mounts.some((m) => m.hostPath === '/sys/fs/cgroup' && m.readOnly));
      const { options, command } = ctrRunArgs(shape, {
        hostPaths: {
          // A test folder that is not a bpffs (as on a node whose init system mounted none): the enforcer
          // mounts one there, in its own mount namespace. /sys/fs/cgroup is the host's, read-only: the plane
          // attaches only to the sibling container's cgroup (the test's containerd made it; no host policy).
          '/sys/fs/bpf': dirs['bpf'] ?? '',
          '/run/containerd/containerd.sock': cd.socket,
          '/run/rtctl': dirs['state'] ?? '',
          '/var/log/rtctl': dirs['log'] ?? '',
        },
        emptyDirs: { tmp: dirs['tmp'] ?? '' },
        env: { NODE_NAME: 'node-image' },
        // Directory mode stands in for the API server (none runs here); the alert server on a free port.
        replaceArgs: { '--kubernetes': null, '--listen': `--listen=127.0.0.1:${port}` },
        extraArgs: ['--policy-dir=/etc/rtctl/policies', '--poll-ms=200'],
        extraMounts: [{ source: dirs['policies'] ?? '', destination: '/etc/rtctl/policies' }],
        // The test's own PID namespace is the host's (pid 1's link may be unreadable in a sandbox).
        hostPidNamespace: `/proc/${process.pid}/ns/pid`,
        ungrantable,
      });
      try {
        await cd.runContainer({
          id: 'img-web-c',
          pod: 'img-web',
          namespace: 'ns-image',
          container: 'web',
          labels: { app: 'img-web' },
        });
        const run = await cd.ctr([
          'run',
          '-d',
          '--net-host',
          '--log-uri',
          `file://${log}`,
          ...options,
          IMAGE,
          'enforcer-under-test',
          ...command,
        ]);
        assert.equal(run.code, 0, run.stderr);
        const status = await waitForStatus(
          url,
          (s) =>
            s.workloads.some(
              (w) =>
                w.pod === 'img-web' && w.policies.includes('block-sleep') && w.policies.includes('no-imds'),
            ),
          4 * 60 * 1000,
        ).catch((err: unknown) => {
          throw new Error(
            `${err instanceof Error ? err.message : String(err)}\nenforcer log:\n${readLog(log)}`,
          );
        });
        assert.equal(
          status.dataPlane,
          'Fanotify',
          'auto chooses fanotify on this kernel (BPF-LSM is refused)',
        );
        assert.equal(status.node, 'node-image');
        // The readiness and liveness probes' endpoint answers.
        assert.equal((await getText(`${url}/healthz`)).status, 200);
        // The process runs with exactly the DaemonSet's capabilities and no_new_privs.
        const tasks = await cd.ctr(['tasks', 'ls']);
        const pid = /^enforcer-under-test\s+(\d+)\s+RUNNING/m.exec(tasks.stdout)?.[1];
        assert.ok(pid, tasks.stdout);
        const procStatus = readFileSync(`/proc/${pid}/status`, 'utf8');
        const capEff = /^CapEff:\s+([0-9a-f]+)$/m.exec(procStatus)?.[1] ?? '';
        assert.deepEqual(
          decodeCapabilities(capEff),
          shape.capabilities.filter((c) => !ungrantable.includes(c)).sort(),
        );
        assert.match(procStatus, /^NoNewPrivs:\s+1$/m);

        const r = await cd.exec('img-web-c', ['/bin/sh', '-c', '/bin/sleep 0']);
        assert.equal(r.code, 126, `exit ${r.code}: ${r.stderr}`);
        assert.match(r.stderr, /\/bin\/sleep: Operation not permitted/);
        await waitForAlert(url, (a) => a.PodName === 'img-web' && a.Resource === '/bin/sleep');
        const alerts = readLogs(url, ['-n', 'ns-image']).filter((a) => a.Resource === '/bin/sleep');
        assert.equal(alerts.length, 1, JSON.stringify(alerts));
        const [a] = alerts;
        assert.equal(a?.PolicyName, 'block-sleep');
        assert.equal(a?.Action, 'Block');
        assert.equal(a?.Enforcer, 'Fanotify');
        assert.equal(a?.HostName, 'node-image');
        assert.equal(a?.ContainerName, 'web');
        assert.equal(a?.Severity, '6');

        // Network rules are enforced (the cgroup network plane is on): the node says so, a connect to the
        // metadata address in the pod's own network namespace fails with EPERM, and the alert is in the logs.
        const noImds = status.enforcement.find((p) => p.name === 'no-imds');
        assert.equal(noImds?.level, 'enforced', JSON.stringify(noImds));
        assert.deepEqual(noImds?.notEnforced, []);
        assert.match(
          readFileSync(`/proc/${pid}/mountinfo`, 'utf8'),
          / \/sys\/fs\/bpf [^\n]* - bpf /,
          'the enforcer mounted a bpffs on its /sys/fs/bpf',
        );
        const nc = await cd.exec('img-web-c', ['/bin/busybox', 'nc', '-w', '2', '169.254.169.254', '80']);
        assert.notEqual(nc.code, 0);
        assert.match(`${nc.stderr}${nc.stdout}`, /Operation not permitted/, JSON.stringify(nc));
        await waitForAlert(url, (x) => x.PodName === 'img-web' && x.Operation === 'Network');
        const net = readLogs(url, ['-n', 'ns-image']).filter((x) => x.Operation === 'Network');
        assert.equal(net.length, 1, JSON.stringify(net));
        assert.equal(net[0]?.PolicyName, 'no-imds');
        assert.equal(net[0]?.Action, 'Block');
        assert.equal(net[0]?.Enforcer, 'CgroupBPF');
        assert.equal(net[0]?.Resource, '169.254.169.254:80');
        assert.equal(net[0]?.ContainerName, 'web');
        assert.equal(net[0]?.Severity, '7');
      } finally {
        await stopHelper(path.join(dirs['state'] ?? '', 'fanotify.sock'));
        await cd.removeContainer('enforcer-under-test');
        await cd.removeContainer('img-web-c');
        rmSync(work, { recursive: true, force: true });
      }
    });
  });
});
