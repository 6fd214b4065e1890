// The hardening tests' container root file system: real Debian packages (bash, coreutils, apt, curl, python3,
// nginx, redis, postgresql, …) installed by mmdebstrap into a tar, cached outside the repository by a content
// hash of the package list and build options, so a second run reuses it. Run this file directly
// (`node --import tsx test/hardening/support/rootfs.ts`) to build the cache ahead of the tests.
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { REPO_ROOT } from '../../support/paths.js';

const run = promisify(execFile);

/** The cache folder (outside the repository); RTCTL_TEST_CACHE overrides it. */
export const CACHE_DIR = process.env['RTCTL_TEST_CACHE'] ?? '/var/cache/rtctl-test';
/** The package list file. */
export const PACKAGE_LIST = join(REPO_ROOT, 'test', 'hardening', 'rootfs-packages.txt');
const SUITE = 'bookworm';
const MIRROR = 'http://deb.debian.org/debian';
const VARIANT = 'apt';

/** The packages named in the list file (comments and blank lines dropped), sorted. */
export function rootfsPackages(): string[] {
  return readFileSync(PACKAGE_LIST, 'utf8')
    .split('\n')
    .map((l) => l.replace(/#.*/, '').trim())
    .filter((l) => l !== '')
    .sort();
}

/** The cache key: a hash of the package names and every build option. */
export function rootfsKey(): string {
  const h = createHash('sha256');
  h.update(JSON.stringify({ suite: SUITE, mirror: MIRROR, variant: VARIANT, packages: rootfsPackages() }));
  return h.digest('hex').slice(0, 16);
}

/** Path of the cached root file system tar for the current package list. */
export function rootfsTarPath(): string {
  return join(CACHE_DIR, `rootfs-${rootfsKey()}.tar`);
}

/** True when the cached tar exists and is not empty. */
export function rootfsCached(): boolean {
  const p = rootfsTarPath();
  return existsSync(p) && statSync(p).size > 0;
}

/**
 * Returns the cached root file system tar, building it first when absent (minutes: it downloads the packages).
 * The tar is written to a temporary name and renamed, so an interrupted build never leaves a half tar behind.
 */
export async function ensureRootfs(log: (line: string) => void = () => {}): Promise<string> {
  const tar = rootfsTarPath();
  if (rootfsCached()) return tar;
  mkdirSync(CACHE_DIR, { recursive: true });
  const partial = `${tar}.partial-${process.pid}`;
  rmSync(partial, { force: true });
  const started = Date.now();
  log(`building ${tar} with mmdebstrap (${rootfsPackages().length} packages)`);
  await run(
    'mmdebstrap',
    [
      `--variant=${VARIANT}`,
      `--include=${rootfsPackages().join(',')}`,
      '--format=tar',
      SUITE,
      partial,
      MIRROR,
    ],
    { maxBuffer: 64 << 20, timeout: 30 * 60 * 1000 },
  );
  renameSync(partial, tar);
  log(`built ${tar} in ${Math.round((Date.now() - started) / 1000)} s`);
  return tar;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  ensureRootfs((l) => process.stdout.write(`${l}\n`)).then(
    (tar) => process.stdout.write(`${tar}\n`),
    (err: unknown) => {
      process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
      process.exitCode = 1;
    },
  );
}
