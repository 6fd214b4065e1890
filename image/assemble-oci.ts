// Assembles the rtctl OCI image archive from two layer trees: the Debian root file system (a tar from
// mmdebstrap) and the application tree (node, rtctl, native tools). Deterministic: tar entries sorted, owned
// by root, timestamps set to SOURCE_DATE_EPOCH, gzip without name or time, JSON with fixed key order; the
// same inputs give the same digest. The archive is an OCI image layout in a tar, as `ctr images import` reads.
//
// Usage: node --import tsx image/assemble-oci.ts --rootfs <tar> --app <dir> --name <repo:tag> --out <tar>
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
      config: {
        Entrypoint: ['/usr/local/bin/rtctl'],
        Env: ['PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin', 'NODE_ENV=production'],
        WorkingDir: '/',
        Labels: { 'org.opencontainers.image.title': 'rtctl' },
      },
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
    },
  });
  const epoch = Number(process.env['SOURCE_DATE_EPOCH']);
  if (values.rootfs === undefined || values.app === undefined || values.out === undefined || !(epoch > 0)) {
    process.stderr.write(
      'usage: SOURCE_DATE_EPOCH=<s> assemble-oci.ts --rootfs <tar> --app <dir> --out <tar>\n',
    );
    process.exit(2);
  }
  const digest = await assembleImage({
    rootfsTar: values.rootfs,
    appDir: values.app,
    name: values.name,
    out: values.out,
    epoch,
  });
  process.stdout.write(`${digest}\n`);
}
