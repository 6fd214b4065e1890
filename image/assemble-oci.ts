// Assembles the rtctl OCI image archive from two layer trees: the Debian root file system (a tar from
// mmdebstrap) and the application tree (node, rtctl, native tools). Deterministic: tar entries sorted, owned
// by root, timestamps set to SOURCE_DATE_EPOCH, gzip without name or time, JSON with fixed key order; the
// same inputs give the same digest. The archive is an OCI image layout in a tar, as `ctr images import` reads.
// Variants share both layers and differ only in the image config: `rtctl` (every component, Entrypoint rtctl)
// and `imds` (the IMDS service alone: `rtctl imds serve` on 0.0.0.0:8080 as uid 65532).
//
// Usage: node --import tsx image/assemble-oci.ts --rootfs <tar> --app <dir> --name <repo:tag> --out <tar>
//        [--variant rtctl|imds]
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  createReadStream,
  createWriteStream,
  mkdirSync,
  mkdtempSync,
  renameSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { parseArgs } from 'node:util';
import { createGzip } from 'node:zlib';

interface Blob {
  digest: string;
  size: number;
}

interface Layer extends Blob {
  diffId: string;
}

/** The image variants: same layers, different config. */
export const IMAGE_VARIANTS = ['rtctl', 'imds'] as const;
export type ImageVariant = (typeof IMAGE_VARIANTS)[number];

/** The port the IMDS image's metadata service listens on (0.0.0.0; unprivileged, so uid 65532 can bind it). */
export const IMDS_IMAGE_PORT = 8080;

const PATH_ENV = 'PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';

/** The `config` of the image config for a variant (Entrypoint, Cmd, user, ports, labels). */
export function imageRunConfig(variant: ImageVariant): Record<string, unknown> {
  if (variant === 'rtctl')
    return {
      Entrypoint: ['/usr/local/bin/rtctl'],
      Env: [PATH_ENV, 'NODE_ENV=production'],
      WorkingDir: '/',
      Labels: { 'org.opencontainers.image.title': 'rtctl' },
    };
  // The management endpoint stays on the container's loopback (its default 127.0.0.1:9180): reach it with
  // `docker exec <c> rtctl imds trigger ...`, which finds the token file through the same XDG_RUNTIME_DIR.
  return {
    User: '65532:65532',
    Entrypoint: ['/usr/local/bin/rtctl', 'imds', 'serve'],
    Cmd: ['--listen', `0.0.0.0:${IMDS_IMAGE_PORT}`],
    Env: [PATH_ENV, 'NODE_ENV=production', 'XDG_RUNTIME_DIR=/tmp', 'HOME=/tmp'],
    WorkingDir: '/',
    ExposedPorts: { [`${IMDS_IMAGE_PORT}/tcp`]: {} },
    StopSignal: 'SIGTERM',
    Labels: {
      'org.opencontainers.image.title': 'rtctl-imds',
      'org.opencontainers.image.description':
        'The rtctl instance metadata service emulator alone (rtctl imds serve), for tests',
    },
  };
}

/** Flags of GNU tar that make an archive depend only on the files' contents, names and modes. */
export function deterministicTarFlags(epoch: number): string[] {
  return [
    '--sort=name',
    `--mtime=@${epoch}`,
    '--owner=0',
    '--group=0',
    '--numeric-owner',
    '--format=posix',
    '--pax-option=exthdr.name=%d/PaxHeaders/%f,delete=atime,delete=ctime',
  ];
}

function hashing(hash: ReturnType<typeof createHash>, count: { n: number }): Transform {
  return new Transform({
    transform(chunk: Buffer, _enc, done) {
      hash.update(chunk);
      count.n += chunk.length;
      done(null, chunk);
    },
  });
}

/** Compresses a tar into blobs/, returning the layer's digest, size and diff id. */
async function addLayer(layout: string, tar: string): Promise<Layer> {
  const tmp = path.join(layout, 'blobs', 'layer.tmp');
  const diff = createHash('sha256');
  const comp = createHash('sha256');
  const raw = { n: 0 };
  const size = { n: 0 };
  // level 6, no file name or time in the gzip header (zlib writes neither): the same bytes every time.
  await pipeline(
    createReadStream(tar),
    hashing(diff, raw),
    createGzip({ level: 6 }),
    hashing(comp, size),
    createWriteStream(tmp),
  );
  const digest = `sha256:${comp.digest('hex')}`;
  renameSync(tmp, path.join(layout, 'blobs', 'sha256', digest.slice(7)));
  return { digest, size: size.n, diffId: `sha256:${diff.digest('hex')}` };
}

function addJson(layout: string, value: unknown): Blob {
  const bytes = Buffer.from(JSON.stringify(value));
  const digest = `sha256:${createHash('sha256').update(bytes).digest('hex')}`;
  writeFileSync(path.join(layout, 'blobs', 'sha256', digest.slice(7)), bytes);
  return { digest, size: bytes.length };
}

/** Builds the archive; returns the manifest digest (the image's digest). */
export async function assembleImage(options: {
  rootfsTar: string;
  appDir: string;
  name: string;
  out: string;
  epoch: number;
  /** Which image config (default `rtctl`); the layers are the same for every variant. */
  variant?: ImageVariant;
}): Promise<string> {
  const work = mkdtempSync(path.join(tmpdir(), 'rtctl-oci-'));
  try {
    const layout = path.join(work, 'layout');
    mkdirSync(path.join(layout, 'blobs', 'sha256'), { recursive: true });
    const appTar = path.join(work, 'app.tar');
    execFileSync('tar', [...deterministicTarFlags(options.epoch), '-C', options.appDir, '-cf', appTar, '.']);
    const layers = [await addLayer(layout, options.rootfsTar), await addLayer(layout, appTar)];
    const created = new Date(options.epoch * 1000).toISOString().replace('.000Z', 'Z');
    const config = addJson(layout, {
      created,
      architecture: 'amd64',
      os: 'linux',
      config: imageRunConfig(options.variant ?? 'rtctl'),
      rootfs: { type: 'layers', diff_ids: layers.map((l) => l.diffId) },
      history: [
        { created, created_by: 'mmdebstrap --variant=minbase (image/rootfs.sh)' },
        { created, created_by: 'node, rtctl and its native tools (image/build.sh)' },
      ],
    });
    const manifest = addJson(layout, {
      schemaVersion: 2,
      mediaType: 'application/vnd.oci.image.manifest.v1+json',
      config: { mediaType: 'application/vnd.oci.image.config.v1+json', ...config },
      layers: layers.map((l) => ({
        mediaType: 'application/vnd.oci.image.layer.v1.tar+gzip',
        digest: l.digest,
        size: l.size,
      })),
    });
    const tag = options.name.slice(options.name.lastIndexOf(':') + 1);
    const fullName = options.name.includes('/') ? options.name : `docker.io/library/${options.name}`;
    writeFileSync(
      path.join(layout, 'index.json'),
      JSON.stringify({
        schemaVersion: 2,
        manifests: [
          {
            mediaType: 'application/vnd.oci.image.manifest.v1+json',
            ...manifest,
            annotations: { 'io.containerd.image.name': fullName, 'org.opencontainers.image.ref.name': tag },
          },
        ],
      }),
    );
    writeFileSync(path.join(layout, 'oci-layout'), JSON.stringify({ imageLayoutVersion: '1.0.0' }));
    mkdirSync(path.dirname(options.out), { recursive: true });
    execFileSync('tar', [
      ...deterministicTarFlags(options.epoch),
      '-C',
      layout,
      '-cf',
      `${options.out}.tmp`,
      '.',
    ]);
    renameSync(`${options.out}.tmp`, options.out);
    return manifest.digest;
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

if (import.meta.url === `file://${process.argv[1] ?? ''}`) {
  const { values } = parseArgs({
    options: {
      rootfs: { type: 'string' },
      app: { type: 'string' },
      name: { type: 'string', default: 'rtctl:0.1.0' },
      out: { type: 'string' },
      variant: { type: 'string', default: 'rtctl' },
    },
  });
  const variant = IMAGE_VARIANTS.find((v) => v === values.variant);
  const epoch = Number(process.env['SOURCE_DATE_EPOCH']);
  if (
    values.rootfs === undefined ||
    values.app === undefined ||
    values.out === undefined ||
    !(epoch > 0) ||
    variant === undefined
  ) {
    process.stderr.write(
      'usage: SOURCE_DATE_EPOCH=<s> assemble-oci.ts --rootfs <tar> --app <dir> --out <tar> [--variant rtctl|imds]\n',
    );
    process.exit(2);
  }
  const digest = await assembleImage({
    rootfsTar: values.rootfs,
    appDir: values.app,
    name: values.name,
    out: values.out,
    epoch,
    variant,
  });
  process.stdout.write(`${digest}\n`);
}
