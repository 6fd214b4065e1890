// Test harness: a private containerd (own root, state, socket and config in a temp dir), a busybox-static
// image built locally as an OCI layout and imported (no network, no registry), and containers run with `ctr`,
// labelled the way the kubelet labels pod containers.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  copyFileSync,
  linkSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import { hasCommand, isRoot } from '../../support/prereq.js';

const run = promisify(execFile);

/** The containerd namespace the kubelet uses. */
export const CONTAINERD_NAMESPACE = 'k8s.io';
/** The image the harness builds and imports. */
export const BUSYBOX_IMAGE = 'rtctl.test/busybox:1';
/** Busybox applets linked into the image (hard links, so each keeps its own path for exec). */
const APPLETS = [
  'sh',
  'sleep',
  'cat',
  'ls',
  'echo',
  'true',
  'id',
  'head',
  'env',
  'touch',
  'rm',
  'mkdir',
  'wc',
  'seq',
];

/** Prerequisites of the containerd tests, as [ok, reason] pairs for requirePrereqs. */
export function containerdPrereqs(): [boolean, string][] {
  return [
    [isRoot(), 'must run as root'],
    [hasCommand('containerd'), 'containerd not installed (apt-get install containerd)'],
    [hasCommand('ctr'), 'ctr not installed (apt-get install containerd)'],
    [hasCommand('runc'), 'runc not installed (apt-get install runc)'],
    [hasCommand('cc'), 'a C compiler is needed for the fanotify helper'],
    [existsBusybox(), '/bin/busybox (busybox-static) not installed'],
  ];
}

function existsBusybox(): boolean {
  try {
    return readFileSync('/bin/busybox').byteLength > 0;
  } catch {
    return false;
  }
}

/** One running container's identity as the test created it. */
export interface TestContainer {
  id: string;
  pod: string;
  namespace: string;
  container: string;
  labels: Record<string, string>;
  pid: number;
}

/** Result of a command run in a container. */
export interface ExecResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** A private containerd instance. */
export interface Containerd {
  dir: string;
  socket: string;
  imageDigest: string;
  ctr(args: readonly string[]): Promise<ExecResult>;
  runContainer(spec: {
    id: string;
    pod: string;
    namespace: string;
    container: string;
    labels: Record<string, string>;
    /** Bind mounts: host source → container destination (read-only). */
    mounts?: { source: string; destination: string }[];
    /** The container's cgroup path (runc's cgroupsPath, `ctr run --cgroup`); absent: ctr's default. */
    cgroup?: string;
  }): Promise<TestContainer>;
  /**
   * Runs a container the way plain containerd (ctr, nerdctl) does, without Kubernetes: only the given labels
   * (no io.kubernetes.* ones), in the given containerd namespace (default `default`; the image is imported
   * there first).
   */
  runPlainContainer(spec: {
    id: string;
    labels: Record<string, string>;
    containerdNamespace?: string;
  }): Promise<{ id: string; pid: number; containerdNamespace: string }>;
  exec(id: string, argv: readonly string[]): Promise<ExecResult>;
  removeContainer(id: string): Promise<void>;
  stop(): Promise<void>;
}

/** Mount points at or below a folder, in mount order (from /proc/self/mountinfo; octal escapes decoded). */
export function mountsBelow(dir: string): string[] {
  return readFileSync('/proc/self/mountinfo', 'utf8')
    .split('\n')
    .map((l) => l.split(' ')[4] ?? '')
    .map((m) => m.replace(/\\([0-7]{3})/g, (_, o: string) => String.fromCharCode(parseInt(o, 8))))
    .filter((m) => m === dir || m.startsWith(`${dir}/`));
}

function sha256(data: Buffer | string): string {
  return createHash('sha256').update(data).digest('hex');
}

/** Builds the busybox rootfs and an OCI image layout tar of it; returns the tar path. */
async function buildImageTar(
  dir: string,
  extraFiles: Record<string, string | { mode: number; content: string | Uint8Array }>,
): Promise<string> {
  const rootfs = join(dir, 'rootfs');
  for (const d of ['bin', 'tmp', 'etc', 'proc', 'sys', 'dev', 'run', 'data'])
    mkdirSync(join(rootfs, d), { recursive: true });
  copyFileSync('/bin/busybox', join(rootfs, 'bin/busybox'));
  for (const a of APPLETS) linkSync(join(rootfs, 'bin/busybox'), join(rootfs, 'bin', a));
  writeFileSync(
    join(rootfs, 'etc/passwd'),
    'root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534::/:/bin/sh\n',
  );
  writeFileSync(join(rootfs, 'data/hello.txt'), 'hello from the image\n');
  for (const [path, file] of Object.entries(extraFiles)) {
    mkdirSync(join(rootfs, path, '..'), { recursive: true });
    if (typeof file === 'string') writeFileSync(join(rootfs, path), file);
    else writeFileSync(join(rootfs, path), file.content, { mode: file.mode });
  }
  const layer = join(dir, 'layer.tar');
  await run('tar', [
    '--sort=name',
    '--mtime=@0',
    '--owner=0',
    '--group=0',
    '--numeric-owner',
    '-C',
    rootfs,
    '-cf',
    layer,
    '.',
  ]);
  const layout = join(dir, 'layout');
  mkdirSync(join(layout, 'blobs/sha256'), { recursive: true });
  const blob = (data: Buffer): { digest: string; size: number } => {
    const digest = sha256(data);
    writeFileSync(join(layout, 'blobs/sha256', digest), data);
    return { digest: `sha256:${digest}`, size: data.byteLength };
  };
  const layerBlob = blob(readFileSync(layer));
  const config = blob(
    Buffer.from(
      JSON.stringify({
        architecture: process.arch === 'arm64' ? 'arm64' : 'amd64',
        os: 'linux',
        config: { Env: ['PATH=/bin'], Cmd: ['/bin/sh'] },
        rootfs: { type: 'layers', diff_ids: [layerBlob.digest] },
      }),
    ),
  );
  const manifest = blob(
    Buffer.from(
      JSON.stringify({
        schemaVersion: 2,
        mediaType: 'application/vnd.oci.image.manifest.v1+json',
        config: { mediaType: 'application/vnd.oci.image.config.v1+json', ...config },
        layers: [{ mediaType: 'application/vnd.oci.image.layer.v1.tar', ...layerBlob }],
      }),
    ),
  );
  writeFileSync(
    join(layout, 'index.json'),
    JSON.stringify({
      schemaVersion: 2,
      manifests: [
        {
          mediaType: 'application/vnd.oci.image.manifest.v1+json',
          ...manifest,
          annotations: { 'org.opencontainers.image.ref.name': BUSYBOX_IMAGE },
        },
      ],
    }),
  );
  writeFileSync(join(layout, 'oci-layout'), '{"imageLayoutVersion":"1.0.0"}');
  const tar = join(dir, 'image.tar');
  await run('tar', ['-C', layout, '-cf', tar, '.']);
  return tar;
}

/**
 * Starts containerd in a fresh temp dir and imports the busybox image. `extraFiles` are added to the image
 * (path inside the image → content).
 */
export async function startContainerd(
  extraFiles: Record<string, string | { mode: number; content: string | Uint8Array }> = {},
): Promise<Containerd> {
  const dir = mkdtempSync(join(tmpdir(), 'rtctl-containerd-'));
  const socket = join(dir, 'containerd.sock');
  writeFileSync(
    join(dir, 'config.toml'),
    [
      'version = 2',
      `root = "${dir}/root"`,
      `state = "${dir}/state"`,
      'disabled_plugins = ["io.containerd.grpc.v1.cri"]',
      '[grpc]',
      `  address = "${socket}"`,
      '[ttrpc]',
      `  address = "${socket}.ttrpc"`,
      '',
    ].join('\n'),
  );
  const log = openSync(join(dir, 'containerd.log'), 'a');
  const daemon: ChildProcess = spawn('containerd', ['--config', join(dir, 'config.toml')], {
    stdio: ['ignore', log, log],
  });
  /** containerd namespace of each container the test created (pod containers: k8s.io). */
  const namespaceOf = new Map<string, string>();
  const ctrIn = async (namespace: string, args: readonly string[]): Promise<ExecResult> => {
    try {
      const r = await run('ctr', ['-a', socket, '-n', namespace, ...args], {
        maxBuffer: 16 << 20,
      });
      return { code: 0, stdout: r.stdout, stderr: r.stderr };
    } catch (err) {
      const e = err as { code?: number | string; stdout?: string; stderr?: string };
      return {
        code: typeof e.code === 'number' ? e.code : 1,
        stdout: e.stdout ?? '',
        stderr: e.stderr ?? '',
      };
    }
  };
  const ctr = (args: readonly string[]): Promise<ExecResult> => ctrIn(CONTAINERD_NAMESPACE, args);
  const ctrOf = (id: string, args: readonly string[]): Promise<ExecResult> =>
    ctrIn(namespaceOf.get(id) ?? CONTAINERD_NAMESPACE, args);
  const imported = new Set<string>([CONTAINERD_NAMESPACE]);
  let imageTar = '';
  const fail = async (err: unknown): Promise<never> => {
    daemon.kill('SIGTERM');
    await new Promise((r) => (daemon.exitCode !== null ? r(undefined) : daemon.once('exit', r)));
    let logTail = '';
    try {
      logTail = readFileSync(join(dir, 'containerd.log'), 'utf8').slice(-2000);
    } catch {
      // no log
    }
    rmSync(dir, { recursive: true, force: true });
    const message = err instanceof Error ? err.message : String(err);
    throw new Error(`${message}\ncontainerd log (tail):\n${logTail}`);
  };
  let digest: RegExpExecArray | null;
  try {
    let up = false;
    for (let i = 0; i < 100 && !up; i++) {
      up = (await ctr(['version'])).code === 0;
      if (!up) await sleep(100);
    }
    if (!up) throw new Error('containerd did not start');
    const tar = await buildImageTar(join(dir, 'image'), extraFiles);
    imageTar = tar;
    const importResult = await ctr(['images', 'import', tar]);
    if (importResult.code !== 0) throw new Error(`image import failed: ${importResult.stderr}`);
    const images = await ctr(['images', 'ls']);
    digest = /sha256:[0-9a-f]{64}/.exec(
      images.stdout.split('\n').find((l) => l.startsWith(BUSYBOX_IMAGE)) ?? '',
    );
    if (digest === null) throw new Error(`imported image not listed: ${images.stdout}`);
  } catch (err) {
    return fail(err);
  }
  if (digest === null) return fail(new Error('imported image not listed'));
  const imageDigest = digest[0];
  const containers = new Set<string>();

  const api: Containerd = {
    dir,
    socket,
    imageDigest,
    ctr,
    async runContainer(spec) {
      const labels: Record<string, string> = {
        ...spec.labels,
        'io.kubernetes.pod.name': spec.pod,
        'io.kubernetes.pod.namespace': spec.namespace,
        'io.kubernetes.container.name': spec.container,
      };
      const args = ['run', '-d', '--runc-root', join(dir, 'runc')];
      for (const [k, v] of Object.entries(labels)) args.push('--label', `${k}=${v}`);
      for (const m of spec.mounts ?? []) {
        args.push('--mount', `type=bind,src=${m.source},dst=${m.destination},options=rbind:ro`);
      }
      if (spec.cgroup !== undefined) args.push('--cgroup', spec.cgroup);
      args.push(BUSYBOX_IMAGE, spec.id, '/bin/sleep', '100000');
      const r = await ctr(args);
      if (r.code !== 0) throw new Error(`ctr run ${spec.id} failed: ${r.stderr}`);
      containers.add(spec.id);
      const tasks = await ctr(['tasks', 'ls']);
      const row = tasks.stdout.split('\n').find((l) => l.split(/\s+/)[0] === spec.id);
      const pid = Number(row?.split(/\s+/)[1] ?? 0);
      return {
        id: spec.id,
        pod: spec.pod,
        namespace: spec.namespace,
        container: spec.container,
        labels: spec.labels,
        pid,
      };
    },
    async runPlainContainer(spec) {
      const namespace = spec.containerdNamespace ?? 'default';
      if (!imported.has(namespace)) {
        const r = await ctrIn(namespace, ['images', 'import', imageTar]);
        if (r.code !== 0) throw new Error(`image import into ${namespace} failed: ${r.stderr}`);
        imported.add(namespace);
      }
      const args = ['run', '-d', '--runc-root', join(dir, 'runc')];
      for (const [k, v] of Object.entries(spec.labels)) args.push('--label', `${k}=${v}`);
      args.push(BUSYBOX_IMAGE, spec.id, '/bin/sleep', '100000');
      const r = await ctrIn(namespace, args);
      if (r.code !== 0) throw new Error(`ctr run ${spec.id} failed: ${r.stderr}`);
      containers.add(spec.id);
      namespaceOf.set(spec.id, namespace);
      const tasks = await ctrIn(namespace, ['tasks', 'ls']);
      const row = tasks.stdout.split('\n').find((l) => l.split(/\s+/)[0] === spec.id);
      return { id: spec.id, pid: Number(row?.split(/\s+/)[1] ?? 0), containerdNamespace: namespace };
    },
    exec(id, argv) {
      const execId = `e${Date.now().toString(36)}${Math.floor(Math.random() * 1e6).toString(36)}`;
      return ctrOf(id, ['tasks', 'exec', '--exec-id', execId, id, ...argv]);
    },
    async removeContainer(id) {
      // Every process of the task, not only its first one: `ctr tasks exec` processes keep the task (and so
      // its root file system mount) alive past the first process's death while they run.
      await ctrOf(id, ['tasks', 'kill', '-a', '-s', 'SIGKILL', id]);
      let deleted = false;
      let last: ExecResult | undefined;
      const end = Date.now() + 20000;
      while (!deleted && Date.now() < end) {
        last = await ctrOf(id, ['tasks', 'delete', id]);
        deleted = last.code === 0 || /not found/.test(last.stderr);
        if (!deleted) await sleep(100);
      }
      // The shim still holds the task: make it let go (it kills what remains and unmounts the root file system).
      if (!deleted) last = await ctrOf(id, ['tasks', 'delete', '--force', id]);
      const c = await ctrOf(id, ['containers', 'delete', id]);
      containers.delete(id);
      namespaceOf.delete(id);
      if (c.code !== 0 && !/not found/.test(c.stderr))
        throw new Error(
          `removing container ${id}: ${c.stderr.trim()} (task delete: ${last?.stderr.trim() ?? ''})`,
        );
    },
    async stop() {
      const errors: string[] = [];
      for (const id of [...containers])
        await api.removeContainer(id).catch((err: unknown) => errors.push(String(err)));
      daemon.kill('SIGTERM');
      await new Promise((r) => {
        if (daemon.exitCode !== null) r(undefined);
        else daemon.once('exit', r);
      });
      // Whatever is still mounted below the folder (a snapshot or task root a failed removal left behind) is
      // detached before the folder goes, so nothing leaks into the host's mount table.
      const left = mountsBelow(dir);
      for (const m of left.reverse()) await run('umount', ['-l', m]).catch(() => undefined);
      rmSync(dir, { recursive: true, force: true });
      if (errors.length > 0 || left.length > 0)
        throw new Error(
          `containerd stop: ${[...errors, ...left.map((m) => `left mounted (now detached): ${m}`)].join('; ')}`,
        );
    },
  };
  return api;
}
