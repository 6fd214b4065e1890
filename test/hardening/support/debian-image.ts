// The Debian root file system (rootfs.ts) as an OCI image in the private containerd of the enforcer tests'
// harness (test/enforcer/support/containerd.ts), and containers run from it, labelled as the kubelet labels pod
// containers. The image tar is cached next to the root file system tar, under the same content key.
import { createHash } from 'node:crypto';
import {
  createReadStream,
  existsSync,
  mkdirSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { linkSync } from 'node:fs';
import { join } from 'node:path';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import type { Containerd, ExecResult } from '../../enforcer/support/containerd.js';
import { CACHE_DIR, rootfsKey } from './rootfs.js';

const run = promisify(execFile);

/** The image name, one per package list. */
export function debianImageName(): string {
  return `rtctl.test/debian-hardening:${rootfsKey()}`;
}

async function sha256File(path: string): Promise<string> {
  const h = createHash('sha256');
  for await (const chunk of createReadStream(path)) h.update(chunk as Buffer);
  return h.digest('hex');
}

function sha256(data: Buffer | string): string {
  return createHash('sha256').update(data).digest('hex');
}

/** Builds (or reuses) the OCI image tar of the root file system tar; returns its path. */
export async function ensureDebianImageTar(rootfsTar: string): Promise<string> {
  const out = join(CACHE_DIR, `image-${rootfsKey()}.tar`);
  if (existsSync(out) && statSync(out).size > 0) return out;
  const dir = join(CACHE_DIR, `image-${rootfsKey()}.build-${process.pid}`);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(join(dir, 'blobs/sha256'), { recursive: true });
  const layerDigest = await sha256File(rootfsTar);
  // A hard link, not a copy: the layer is the root file system tar itself (same file system under CACHE_DIR).
  linkSync(rootfsTar, join(dir, 'blobs/sha256', layerDigest));
  const blob = (data: Buffer): { digest: string; size: number } => {
    const digest = sha256(data);
    writeFileSync(join(dir, 'blobs/sha256', digest), data);
    return { digest: `sha256:${digest}`, size: data.byteLength };
  };
  const layer = { digest: `sha256:${layerDigest}`, size: statSync(rootfsTar).size };
  const config = blob(
    Buffer.from(
      JSON.stringify({
        architecture: process.arch === 'arm64' ? 'arm64' : 'amd64',
        os: 'linux',
        config: {
          Env: ['PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin', 'LANG=C.UTF-8'],
          Cmd: ['/usr/bin/sleep', 'infinity'],
        },
        rootfs: { type: 'layers', diff_ids: [layer.digest] },
      }),
    ),
  );
  const manifest = blob(
    Buffer.from(
      JSON.stringify({
        schemaVersion: 2,
        mediaType: 'application/vnd.oci.image.manifest.v1+json',
        config: { mediaType: 'application/vnd.oci.image.config.v1+json', ...config },
        layers: [{ mediaType: 'application/vnd.oci.image.layer.v1.tar', ...layer }],
      }),
    ),
  );
  writeFileSync(
    join(dir, 'index.json'),
    JSON.stringify({
      schemaVersion: 2,
      manifests: [
        {
          mediaType: 'application/vnd.oci.image.manifest.v1+json',
          ...manifest,
          annotations: { 'org.opencontainers.image.ref.name': debianImageName() },
        },
      ],
    }),
  );
  writeFileSync(join(dir, 'oci-layout'), '{"imageLayoutVersion":"1.0.0"}');
  const partial = `${out}.partial-${process.pid}`;
  await run('tar', ['-C', dir, '-cf', partial, '.'], { timeout: 10 * 60 * 1000 });
  renameSync(partial, out);
  rmSync(dir, { recursive: true, force: true });
  return out;
}

/** Imports the image into the private containerd (unpacked for the default snapshotter). */
export async function importDebianImage(cd: Containerd, imageTar: string): Promise<void> {
  const r = await cd.ctr(['images', 'import', imageTar]);
  if (r.code !== 0) throw new Error(`image import failed: ${r.stderr}`);
}

/** One pod container as the kubelet would label it. */
export interface DebianContainerSpec {
  id: string;
  pod: string;
  namespace: string;
  container: string;
  labels?: Record<string, string>;
  /** Bind mounts: host source → container destination. */
  mounts?: { source: string; destination: string; readOnly?: boolean }[];
  /** Share the host's network namespace (services on loopback ports). */
  netHost?: boolean;
}

/** Runs a container of the Debian image whose first process sleeps; commands run with `exec`. */
export async function runDebianContainer(cd: Containerd, spec: DebianContainerSpec): Promise<void> {
  const labels: Record<string, string> = {
    ...(spec.labels ?? {}),
    'io.kubernetes.pod.name': spec.pod,
    'io.kubernetes.pod.namespace': spec.namespace,
    'io.kubernetes.container.name': spec.container,
  };
  const args = ['run', '-d', '--runc-root', join(cd.dir, 'runc')];
  if (spec.netHost === true) args.push('--net-host');
  for (const [k, v] of Object.entries(labels)) args.push('--label', `${k}=${v}`);
  for (const m of spec.mounts ?? [])
    args.push(
      '--mount',
      `type=bind,src=${m.source},dst=${m.destination},options=rbind:${m.readOnly === false ? 'rw' : 'ro'}`,
    );
  args.push(debianImageName(), spec.id, '/usr/bin/sleep', 'infinity');
  const r = await cd.ctr(args);
  if (r.code !== 0) throw new Error(`ctr run ${spec.id} failed: ${r.stderr}`);
}

let execCounter = 0;

/** uid:gid of a user name, per container (see resolveUser). */
const userIds = new Map<string, string>();

/**
 * The numeric uid:gid of a user of the container's image, looked up once with `id` run in the container and
 * then cached. `ctr tasks exec --user <name>` must not be used: to look a name up, containerd mounts the
 * container's snapshot a second time with the same overlay upper and work directories, which leaves the
 * running container's overlay unable to copy a directory up (every later create in a folder of the image fails
 * with ENOENT; the kernel warns "upperdir is in-use"). A numeric uid:gid needs no lookup. Call it before
 * enforcement starts when the lookup's exec of `id` must not show in a test's alerts.
 */
export async function resolveUser(cd: Containerd, id: string, name: string): Promise<string> {
  if (/^\d+:\d+$/.test(name)) return name;
  const key = `${id}\0${name}`;
  const known = userIds.get(key);
  if (known !== undefined) return known;
  const [u, g] = await Promise.all([
    execIn(cd, id, ['/usr/bin/id', '-u', name]),
    execIn(cd, id, ['/usr/bin/id', '-g', name]),
  ]);
  if (u.code !== 0 || g.code !== 0) throw new Error(`no user ${name} in ${id}: ${u.stderr}${g.stderr}`);
  const ids = `${u.stdout.trim()}:${g.stdout.trim()}`;
  userIds.set(key, ids);
  return ids;
}

/** Runs a command in a container and waits for it (or, with detach, only for its start). */
export async function execIn(
  cd: Containerd,
  id: string,
  argv: readonly string[],
  options: { user?: string; detach?: boolean } = {},
): Promise<ExecResult> {
  const execId = `h${process.pid.toString(36)}-${(execCounter++).toString(36)}`;
  const args = ['tasks', 'exec', '--exec-id', execId];
  if (options.user !== undefined) args.push('--user', await resolveUser(cd, id, options.user));
  if (options.detach === true) args.push('--detach');
  return cd.ctr([...args, id, ...argv]);
}

/**
 * Stops and removes a container: every process killed (exec'd ones too), the task deleted once it stopped,
 * then the container, so that the harness's stop finds no mounted root file system.
 */
export async function removeDebianContainer(cd: Containerd, id: string): Promise<void> {
  await cd.ctr(['tasks', 'kill', '-a', '-s', 'SIGKILL', id]);
  for (let i = 0; i < 100; i++) {
    if ((await cd.ctr(['tasks', 'delete', id])).code === 0) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  const r = await cd.ctr(['containers', 'delete', id]);
  if (r.code !== 0 && !/not found/.test(r.stderr))
    throw new Error(`ctr containers delete ${id}: ${r.stderr}`);
}
