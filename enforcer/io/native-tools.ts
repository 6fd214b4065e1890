// Where the prebuilt native artifacts live and how runtime code finds them. `npm run build:native`
// (scripts/build-native.ts, also run by `npm run build` and before `npm test`) compiles them into
// dist/native/ at build time; nothing is compiled on a node at start-up. A missing artifact is an error
// naming the build step and, when the build skipped it, why (build-native.json records that).
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The enforcer's native artifacts, as paths relative to the native output folder (the IMDS addon, built
 * into the same folder, is located by imds/native/build-addon.ts). */
export const NativeArtifact = {
  /** The fanotify data plane's helper (enforcer/native/fanotify-helper.c). */
  fanotifyHelper: 'rtctl-fanotify',
  /** The trivial-LSM-program trial of `rtctl probe` (enforcer/native/probe-bpf-lsm.c). */
  bpfLsmProbe: 'rtctl-probe-bpf-lsm',
  /** The BPF-LSM loader with the programs embedded (enforcer/bpf/). */
  bpfLoader: 'bpf/rtctl-bpf-loader',
  /** The cgroup network plane's loader and programs (enforcer/network/). */
  networkLoader: 'network/rtctl-net-loader',
  networkObject: 'network/rtctl-net.bpf.o',
  /** The system call audit plane's loader and programs (enforcer/syscalls/). */
  syscallLoader: 'syscalls/rtctl-sys-loader',
  syscallObject: 'syscalls/rtctl-sys.bpf.o',
} as const;
export type NativeArtifact = (typeof NativeArtifact)[keyof typeof NativeArtifact];

/** The build record `npm run build:native` writes next to the artifacts. */
export const NATIVE_BUILD_RECORD = 'build-native.json';

/** One artifact's line in the build record. */
export interface NativeBuildEntry {
  status: 'built' | 'up-to-date' | 'skipped' | 'failed';
  /** Why it was skipped or failed. */
  reason?: string;
}

/** The package root: the nearest folder above this module holding package.json (sources or dist/). */
export function findPackageRoot(from: string = dirname(fileURLToPath(import.meta.url))): string {
  let dir = from;
  for (let i = 0; i < 8; i++) {
    if (existsSync(join(dir, 'package.json'))) return dir;
    dir = resolve(dir, '..');
  }
  throw new Error(`no package.json above ${from}`);
}

/** The folder the native build writes to. */
export function findNativeDir(): string {
  return join(findPackageRoot(), 'dist', 'native');
}

function readBuildRecord(dir: string): Record<string, NativeBuildEntry> {
  try {
    const parsed: unknown = JSON.parse(readFileSync(join(dir, NATIVE_BUILD_RECORD), 'utf8'));
    if (typeof parsed !== 'object' || parsed === null) return {};
    const artifacts = (parsed as { artifacts?: unknown }).artifacts;
    return typeof artifacts === 'object' && artifacts !== null
      ? (artifacts as Record<string, NativeBuildEntry>)
      : {};
  } catch {
    return {};
  }
}

/** The path of a prebuilt artifact, or a message saying it is missing, why, and how to build it. */
export function locateNativeArtifact(
  artifact: NativeArtifact,
  dir: string = findNativeDir(),
): { ok: true; path: string } | { ok: false; error: string } {
  const path = join(dir, artifact);
  if (existsSync(path)) return { ok: true, path };
  const entry = readBuildRecord(dir)[artifact];
  const why =
    entry?.reason !== undefined
      ? `the native build ${entry.status === 'failed' ? 'failed' : 'skipped it'}: ${entry.reason}`
      : 'the native build has not run';
  return { ok: false, error: `${path} is not built (${why}); run \`npm run build:native\`` };
}
