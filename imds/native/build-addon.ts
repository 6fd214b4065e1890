// Builds the ip-ttl N-API addon from source with the system C compiler and Node's own headers. Idempotent:
// a build newer than its source is reused. Run directly (`node --import tsx imds/native/build-addon.ts`), or
// called by `rtctl imds serve` and by the tests when the addon is missing. Output goes to the gitignored build/.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, renameSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** Where the addon's source lives, relative to the repository (also valid when running from dist/). */
export function locateAddonSourceDir(): string {
  const here = path.dirname(fileURLToPath(import.meta.url));
  const candidates = [here, path.resolve(here, '../../../imds/native')];
  for (const dir of candidates) if (existsSync(path.join(dir, 'ip-ttl.c'))) return dir;
  return here;
}

/** Absolute path of the built addon. */
export function locateAddon(): string {
  return path.join(locateAddonSourceDir(), 'build', 'ip-ttl.node');
}

/** Directories that may hold node_api.h, best first. */
function findNodeIncludeDir(): string | undefined {
  const prefix = path.resolve(path.dirname(process.execPath), '..');
  const candidates = [path.join(prefix, 'include', 'node'), '/usr/include/node', '/usr/local/include/node'];
  return candidates.find((dir) => existsSync(path.join(dir, 'node_api.h')));
}

/** Result of a build: the addon's path, or why it could not be built. */
export type BuildResult = { ok: true; path: string; rebuilt: boolean } | { ok: false; error: string };

/** Builds the addon unless an up-to-date build exists. Never throws. */
export function buildIpTtlAddon(): BuildResult {
  const dir = locateAddonSourceDir();
  const source = path.join(dir, 'ip-ttl.c');
  const output = locateAddon();
  if (!existsSync(source)) return { ok: false, error: `addon source not found at ${source}` };
  if (existsSync(output) && statSync(output).mtimeMs >= statSync(source).mtimeMs) {
    return { ok: true, path: output, rebuilt: false };
  }
  const include = findNodeIncludeDir();
  if (include === undefined)
    return { ok: false, error: 'node_api.h not found (install the Node.js headers)' };
  const compiler = process.env['CC'] ?? 'cc';
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
    const e = err as { stderr?: Buffer; message?: string };
    const detail = e.stderr !== undefined && e.stderr.length > 0 ? e.stderr.toString() : String(e.message);
    return { ok: false, error: `${compiler} failed: ${detail.trim()}` };
  }
}

if (process.argv[1] !== undefined && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const result = buildIpTtlAddon();
  if (result.ok) process.stdout.write(`${result.path}${result.rebuilt ? ' (built)' : ' (up to date)'}\n`);
  else {
    process.stderr.write(`build-addon: ${result.error}\n`);
    process.exitCode = 2;
  }
}
