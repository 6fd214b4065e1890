// The IMDS-only image (`npm run image:imds`): the rtctl image's two layers with another config (Entrypoint
// `rtctl imds serve`, 0.0.0.0:8080, uid 65532), assembled from the same cached rootfs and app tree as the rtctl
// image (built once per run, shared with image.test.ts), reproducible, imported into a private containerd and
// run twice: with its own defaults in a network namespace of its own (probed from inside the container), and
// on a host loopback port as another project's test would run it (probed from here).
// Needs root, mmdebstrap, containerd and the npm registry; run under the heavy lock.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { assembleImage, IMDS_IMAGE_PORT } from '../../image/assemble-oci.js';
import { TOKEN_HEADER, TOKEN_TTL_HEADER } from '../../compiler/instance-metadata-options/options.js';
import { startContainerd, containerdPrereqs, type Containerd } from '../enforcer/support/containerd.js';
import { hasCommand, isRoot, requirePrereqs } from '../support/prereq.js';
import { buildImageOnce, IMAGE_EPOCH, IMAGE_OUT, rootfsTar } from './support/build-image.js';

const IMDS_IMAGE = 'rtctl.test/rtctl-imds:ci';
const ARCHIVE = path.join(IMAGE_OUT, 'rtctl-imds-oci.tar');
const INSTANCE_ID = /^i-[0-9a-f]{8,17}$/;

interface ImageConfig {
  created: string;
  config: {
    User: string;
    Entrypoint: string[];
    Cmd: string[];
    Env: string[];
    ExposedPorts: Record<string, unknown>;
    Labels: Record<string, string>;
  };
  rootfs: { diff_ids: string[] };
}

function tarJson(archive: string, member: string): unknown {
  return JSON.parse(execFileSync('tar', ['-xOf', archive, member], { encoding: 'utf8' })) as unknown;
}

/** The index, manifest and config of an image archive. */
function readArchive(archive: string): {
  name: string | undefined;
  digest: string | undefined;
  layers: string[];
  config: ImageConfig;
} {
  const index = tarJson(archive, './index.json') as {
    manifests: Array<{ digest: string; annotations: Record<string, string> }>;
  };
  const digest = index.manifests[0]?.digest ?? '';
  const manifest = tarJson(archive, `./blobs/sha256/${digest.slice(7)}`) as {
    config: { digest: string };
    layers: Array<{ digest: string }>;
  };
  return {
    name: index.manifests[0]?.annotations['io.containerd.image.name'],
    digest,
    layers: manifest.layers.map((l) => l.digest),
    config: tarJson(archive, `./blobs/sha256/${manifest.config.digest.slice(7)}`) as ImageConfig,
  };
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  await new Promise((resolve) => server.close(resolve));
  return typeof address === 'object' && address !== null ? address.port : 0;
}

/** A v2 session: PUT a token, GET the instance id with it. Runs in Node (here, or in the container). */
const probeSource = (base: string): string => `
const t = await fetch('${base}/latest/api/token', { method: 'PUT', headers: { '${TOKEN_TTL_HEADER}': '60' } });
const token = await t.text();
const r = await fetch('${base}/latest/meta-data/instance-id', { headers: { '${TOKEN_HEADER}': token } });
process.stdout.write(JSON.stringify({ tokenStatus: t.status, status: r.status, body: await r.text() }));
`;

interface Probe {
  tokenStatus: number;
  status: number;
  body: string;
}

async function probeFromHost(base: string): Promise<Probe> {
  const t = await fetch(`${base}/latest/api/token`, {
    method: 'PUT',
    headers: { [TOKEN_TTL_HEADER]: '60' },
    signal: AbortSignal.timeout(2000),
  });
  const token = await t.text();
  const r = await fetch(`${base}/latest/meta-data/instance-id`, {
    headers: { [TOKEN_HEADER]: token },
    signal: AbortSignal.timeout(2000),
  });
  return { tokenStatus: t.status, status: r.status, body: await r.text() };
}

/** Polls `probe` until the service answers (a failed connection is "not yet"), up to about 30 s. */
async function whenReady(probe: () => Promise<Probe | undefined>): Promise<Probe | undefined> {
  for (let i = 0; i < 150; i++) {
    const got = await probe().catch(() => undefined);
    if (got !== undefined) return got;
    await sleep(200);
  }
  return undefined;
}

describe('image: the IMDS service alone (npm run image:imds), run under containerd', function () {
  this.timeout(30 * 60 * 1000);
  let rootfs = '';
  let digest = '';

  before(async function () {
    requirePrereqs(this, [
      [isRoot(), 'must run as root (mmdebstrap --mode=root)'],
      [hasCommand('mmdebstrap'), 'mmdebstrap (Debian package mmdebstrap)'],
      [hasCommand('clang') && hasCommand('bpftool'), 'clang and bpftool for the BPF objects'],
    ]);
    buildImageOnce();
    rootfs = rootfsTar();
    digest = await assembleImage({
      rootfsTar: rootfs,
      appDir: path.join(IMAGE_OUT, 'app'),
      name: IMDS_IMAGE,
      out: ARCHIVE,
      epoch: IMAGE_EPOCH,
      variant: 'imds',
    });
  });

  it('has the rtctl image layers and a config running `rtctl imds serve` on 0.0.0.0 as uid 65532', () => {
    const imds = readArchive(ARCHIVE);
    const full = readArchive(path.join(IMAGE_OUT, 'rtctl-oci.tar'));
    assert.equal(imds.digest, digest);
    assert.equal(imds.name, IMDS_IMAGE);
    assert.notEqual(imds.digest, full.digest);
    assert.deepEqual(imds.layers, full.layers, 'the same two layers as the rtctl image');
    assert.deepEqual(imds.config.rootfs.diff_ids, full.config.rootfs.diff_ids);
    assert.deepEqual(imds.config.config.Entrypoint, ['/usr/local/bin/rtctl', 'imds', 'serve']);
    assert.deepEqual(imds.config.config.Cmd, ['--listen', `0.0.0.0:${IMDS_IMAGE_PORT}`]);
    assert.equal(imds.config.config.User, '65532:65532');
    assert.deepEqual(Object.keys(imds.config.config.ExposedPorts), [`${IMDS_IMAGE_PORT}/tcp`]);
    assert.equal(imds.config.config.Labels['org.opencontainers.image.title'], 'rtctl-imds');
    assert.equal(imds.config.created, '2026-01-01T00:00:00Z');
  });

  it('the same inputs assemble to the same digest and the same bytes', async () => {
    const again = path.join(IMAGE_OUT, 'imds-again.tar');
    try {
      const second = await assembleImage({
        rootfsTar: rootfs,
        appDir: path.join(IMAGE_OUT, 'app'),
        name: IMDS_IMAGE,
        out: again,
        epoch: IMAGE_EPOCH,
        variant: 'imds',
      });
      assert.equal(second, digest);
      const sum = (f: string) => execFileSync('sha256sum', [f], { encoding: 'utf8' }).split(' ')[0];
      assert.equal(sum(again), sum(ARCHIVE));
    } finally {
      rmSync(again, { force: true });
    }
  });

  describe('under a private containerd', () => {
    let containerd: Containerd | undefined;

    before(async function () {
      requirePrereqs(this, containerdPrereqs());
      containerd = await startContainerd();
      const imported = await containerd.ctr(['images', 'import', ARCHIVE]);
      assert.equal(imported.code, 0, imported.stderr);
    });

    after(async () => {
      await containerd?.stop();
    });

    it('runs with its own Entrypoint and Cmd (own network namespace) and serves a v2 session on 8080', async () => {
      assert.ok(containerd);
      const c = containerd;
      const images = await c.ctr(['images', 'ls']);
      assert.ok(
        images.stdout.split('\n').some((l) => l.startsWith(IMDS_IMAGE) && l.includes(digest)),
        images.stdout,
      );
      const logDir = mkdtempSync(path.join(tmpdir(), 'rtctl-imds-image-'));
      const log = path.join(logDir, 'imds.log');
      const id = 'imds-defaults';
      // No command: the image's Entrypoint + Cmd; no --net-host: a namespace with its own loopback only.
      const run = await c.ctr(['run', '-d', '--log-uri', `file://${log}`, IMDS_IMAGE, id]);
      assert.equal(run.code, 0, run.stderr);
      try {
        const base = `http://127.0.0.1:${IMDS_IMAGE_PORT}`;
        const got = await whenReady(async () => {
          const r = await c.exec(id, ['node', '--input-type=module', '-e', probeSource(base)]);
          return r.code === 0 ? (JSON.parse(r.stdout) as Probe) : undefined;
        });
        assert.ok(got, `the IMDS image did not answer on ${base} inside its container:\n${readLog(log)}`);
        assert.equal(got.tokenStatus, 200);
        assert.equal(got.status, 200);
        assert.match(got.body, INSTANCE_ID);
        const uid = await c.exec(id, ['node', '-e', 'process.stdout.write(String(process.getuid()))']);
        assert.equal(uid.stdout, '65532');
        // The management endpoint stays inside: the CLI in the container finds the token file by itself.
        const cert = await c.exec(id, ['rtctl', 'imds', 'identity-certificate']);
        assert.equal(cert.code, 0, cert.stderr);
        assert.match(cert.stdout, /-----BEGIN CERTIFICATE-----/);
      } finally {
        await c.removeContainer(id);
        rmSync(logDir, { recursive: true, force: true });
      }
    });

    it('runs on a host loopback port (--net-host, --listen) as another project would, answering from the host', async () => {
      assert.ok(containerd);
      const c = containerd;
      const port = await freePort();
      const managePort = await freePort();
      const logDir = mkdtempSync(path.join(tmpdir(), 'rtctl-imds-image-'));
      const log = path.join(logDir, 'imds.log');
      const id = 'imds-loopback';
      // ctr replaces the whole command line when one is given (Entrypoint included).
      const run = await c.ctr([
        'run',
        '-d',
        '--net-host',
        '--read-only',
        '--mount',
        'type=tmpfs,src=tmpfs,dst=/tmp,options=rw:nosuid:nodev:mode=1777',
        '--log-uri',
        `file://${log}`,
        IMDS_IMAGE,
        id,
        'rtctl',
        'imds',
        'serve',
        `--listen=127.0.0.1:${port}`,
        `--manage-listen=127.0.0.1:${managePort}`,
      ]);
      assert.equal(run.code, 0, run.stderr);
      try {
        const base = `http://127.0.0.1:${port}`;
        const got = await whenReady(() => probeFromHost(base));
        assert.ok(got, `the IMDS image did not answer on ${base}:\n${readLog(log)}`);
        assert.equal(got.tokenStatus, 200);
        assert.equal(got.status, 200);
        assert.match(got.body, INSTANCE_ID);
        const noToken = await fetch(`${base}/latest/meta-data/instance-id`, {
          headers: { [TOKEN_HEADER]: 'not-a-token' },
        });
        assert.equal(noToken.status, 401);
      } finally {
        await c.removeContainer(id);
        rmSync(logDir, { recursive: true, force: true });
      }
    });
  });
});

function readLog(file: string): string {
  try {
    return readFileSync(file, 'utf8').slice(-3000);
  } catch {
    return '(no log)';
  }
}
