// Builds the ip-ttl N-API addon from source with the system C compiler and Node's own headers, at build time
// (`npm run build:native` calls it; nothing builds it at run time). Incremental: a build newer than its
// source is reused. Output: dist/native/ip-ttl.node, which `rtctl imds serve` loads (socket-ttl.ts).
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, renameSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** The package root: the nearest folder above this module holding package.json (sources or dist/). */
function findPackageRoot(): string {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 8; i++) {
    if (existsSync(path.join(dir, 'package.json'))) return dir;
    dir = path.resolve(dir, '..');
  }
  return path.dirname(fileURLToPath(import.meta.url));
}

/** Where the addon's source lives. */
export function locateAddonSource(): string {
  return path.join(findPackageRoot(), 'imds', 'native', 'ip-ttl.c');
}

/** Absolute path of the built addon. */
export function locateAddon(): string {
  return path.join(findPackageRoot(), 'dist', 'native', 'ip-ttl.node');
}

/** Directories that may hold node_api.h, best first. */
function findNodeIncludeDir(): string | undefined {
  const prefix = path.resolve(path.dirname(process.execPath), '..');
  const candidates = [path.join(prefix, 'include', 'node'), '/usr/include/node', '/usr/local/include/node'];
  return candidates.find((dir) => existsSync(path.join(dir, 'node_api.h')));
}

/** Result of a build: the addon's path, or why it could not be built (`missing`: a toolchain is absent). */
export type BuildResult =
  { ok: true; path: string; rebuilt: boolean } | { ok: false; error: string; missing: boolean };

/** Builds the addon unless an up-to-date build exists. Never throws. */
export function buildIpTtlAddon(compiler = 'cc'): BuildResult {
  const source = locateAddonSource();
  const output = locateAddon();
  if (!existsSync(source)) return { ok: false, error: `addon source not found at ${source}`, missing: true };
  if (existsSync(output) && statSync(output).mtimeMs >= statSync(source).mtimeMs) {
    return { ok: true, path: output, rebuilt: false };
  }
  const include = findNodeIncludeDir();
  if (include === undefined)
    return { ok: false, error: 'node_api.h not found (install the Node.js headers)', missing: true };
  try {
    mkdirSync(path.dirname(output), { recursive: true });
    const tmp = `${output}.${process.pid}.tmp`;
    execFileSync(
      compiler,
      ['-std=c11', '-D_GNU_SOURCE', '-O2', '-Wall', '-fPIC', '-shared', `-I${include}`, '-o', tmp, source],
      { stdio: ['ignore', 'ignore', 'pipe'] },
    );
    renameSync(tmp, output);
    return { ok: true, path: output, rebuilt: true };
  } catch (err) {
    const e = err as { stderr?: Buffer; message?: string; code?: string };
    if (e.code === 'ENOENT') return { ok: false, error: `no C compiler (${compiler})`, missing: true };
    const detail = e.stderr !== undefined && e.stderr.length > 0 ? e.stderr.toString() : String(e.message);
    return { ok: false, error: `${compiler} failed: ${detail.trim()}`, missing: false };
  }
}
