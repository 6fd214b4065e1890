// Prepares what the test guest boots: Debian's generic kernel package (fetched with `apt-get download`,
// unpacked with `dpkg -x`, module index built with busybox depmod) and an initramfs built here from
// busybox-static, the 9p/virtio modules of that kernel and test/guest/initramfs-init.sh.
// Idempotent: everything is cached under test/.work/guest/ and rebuilt only when its inputs change.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import path from 'node:path';

/** Modules the first stage loads (with their dependencies) to reach the host's files over 9p. */
const INITRAMFS_MODULES = ['virtio_pci', '9pnet_virtio', '9p'] as const;

/** The prepared guest: kernel image, initramfs, and the unpacked module tree (bound over /lib/modules). */
export interface GuestKernel {
  version: string;
  kernel: string;
  initrd: string;
  modulesDir: string;
  /** The harness's cache directory. */
  workDir: string;
}

/** Where the harness caches its files. */
export function resolveGuestWorkDir(repoRoot: string): string {
  return path.join(repoRoot, 'test', '.work', 'guest');
}

function run(cmd: string, args: string[], cwd?: string): string {
  return execFileSync(cmd, args, {
    cwd,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
    maxBuffer: 64 << 20,
  });
}

/** The concrete kernel image package behind `linux-image-amd64` (e.g. linux-image-6.1.0-50-amd64). */
function resolveKernelPackage(): string {
  const override = process.env['RTCTL_GUEST_KERNEL_PACKAGE'];
  if (override !== undefined && override !== '') return override;
  const deps = run('apt-cache', ['depends', 'linux-image-amd64']);
  const match = /Depends:\s+(linux-image-\S+)/.exec(deps);
  if (match?.[1] === undefined) {
    throw new Error('guest: cannot resolve the kernel package behind linux-image-amd64 (run apt-get update)');
  }
  return match[1];
}

/** Downloads and unpacks the kernel package once; returns the unpack directory and kernel version. */
function prepareKernelTree(workDir: string): { tree: string; version: string } {
  const pkg = resolveKernelPackage();
  const tree = path.join(workDir, pkg);
  const stamp = path.join(tree, '.complete');
  if (!existsSync(stamp)) {
    const debDir = path.join(workDir, 'debs');
    mkdirSync(debDir, { recursive: true });
    let deb = readdirSync(debDir).find((f) => f.startsWith(`${pkg}_`) && f.endsWith('.deb'));
    if (deb === undefined) {
      run('apt-get', ['download', pkg], debDir);
      deb = readdirSync(debDir).find((f) => f.startsWith(`${pkg}_`) && f.endsWith('.deb'));
    }
    if (deb === undefined) throw new Error(`guest: apt-get download ${pkg} produced no .deb`);
    rmSync(tree, { recursive: true, force: true });
    run('dpkg', ['-x', path.join(debDir, deb), tree]);
    const versions = readdirSync(path.join(tree, 'lib', 'modules'));
    const v = versions[0];
    if (v === undefined) throw new Error(`guest: ${pkg} has no lib/modules/<version>`);
    run('busybox', ['depmod', '-b', tree, v]);
    writeFileSync(stamp, `${v}\n`);
  }
  const version = readFileSync(stamp, 'utf8').trim();
  return { tree, version };
}

/** Module files (relative to lib/modules/<v>/) in load order for the given module names. */
export function orderModules(modulesDep: string, names: readonly string[]): string[] {
  const deps = new Map<string, string[]>();
  for (const line of modulesDep.split('\n')) {
    const [file, rest] = line.split(':');
    if (file === undefined || rest === undefined) continue;
    deps.set(file.trim(), rest.trim() === '' ? [] : rest.trim().split(/\s+/));
  }
  const byName = new Map<string, string>();
  for (const file of deps.keys()) byName.set(path.basename(file).replace(/\.ko(\.\w+)?$/, ''), file);
  const ordered: string[] = [];
  const visit = (file: string, trail: Set<string>): void => {
    if (ordered.includes(file) || trail.has(file)) return;
    trail.add(file);
    for (const d of deps.get(file) ?? []) visit(d, trail);
    ordered.push(file);
  };
  for (const name of names) {
    const file = byName.get(name);
    if (file === undefined) throw new Error(`guest: module ${name} not in modules.dep`);
    visit(file, new Set());
  }
  return ordered;
}

/** Builds (or reuses) the initramfs for the given kernel tree. */
function prepareInitramfs(workDir: string, tree: string, version: string, repoRoot: string): string {
  const initScript = readFileSync(path.join(repoRoot, 'test', 'guest', 'initramfs-init.sh'));
  const modRoot = path.join(tree, 'lib', 'modules', version);
  const modules = orderModules(readFileSync(path.join(modRoot, 'modules.dep'), 'utf8'), INITRAMFS_MODULES);
  const key = createHash('sha256').update(initScript).update(version).update(modules.join(',')).digest('hex');
  const initrd = path.join(workDir, `initramfs-${key.slice(0, 16)}.cpio`);
  if (existsSync(initrd)) return initrd;
  const staging = path.join(workDir, 'initramfs-staging');
  rmSync(staging, { recursive: true, force: true });
  for (const d of ['bin', 'proc', 'sys', 'dev', 'newroot', 'modules'])
    mkdirSync(path.join(staging, d), { recursive: true });
  copyFileSync('/bin/busybox', path.join(staging, 'bin', 'busybox'));
  writeFileSync(path.join(staging, 'init'), initScript, { mode: 0o755 });
  for (const m of modules)
    copyFileSync(path.join(modRoot, m), path.join(staging, 'modules', path.basename(m)));
  writeFileSync(path.join(staging, 'modules.order'), modules.map((m) => path.basename(m)).join('\n') + '\n');
  const tmp = `${initrd}.tmp`;
  execFileSync('sh', ['-c', `find . | LC_ALL=C sort | cpio -o -H newc --quiet > ${JSON.stringify(tmp)}`], {
    cwd: staging,
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  execFileSync('mv', [tmp, initrd]);
  rmSync(staging, { recursive: true, force: true });
  return initrd;
}

/** Prepares (or reuses) the guest kernel and initramfs. Throws with a clear message on failure. */
export function prepareGuestKernel(repoRoot: string): GuestKernel {
  const workDir = resolveGuestWorkDir(repoRoot);
  mkdirSync(workDir, { recursive: true });
  const { tree, version } = prepareKernelTree(workDir);
  const kernel = path.join(tree, 'boot', `vmlinuz-${version}`);
  if (!existsSync(kernel)) throw new Error(`guest: kernel image ${kernel} missing`);
  const initrd = prepareInitramfs(workDir, tree, version, repoRoot);
  return { version, kernel, initrd, modulesDir: path.join(tree, 'lib', 'modules'), workDir };
}
