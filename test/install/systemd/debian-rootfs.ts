// Test support: a fresh Debian bookworm root file system made with mmdebstrap (minbase plus the given
// packages), cached as a tar by the hash of its inputs outside the repository (RTCTL_TEST_CACHE, default
// /var/cache/rtctl-test/), and unpacked into a new directory per use.
import { execFileSync } from 'node:child_process';
import { DEB_DEPENDS } from '../../../install/systemd/build-deb.js';
import { REPO_ROOT } from '../../enforcer/support/enforcer-process.js';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const SUITE = 'bookworm';
const MIRROR = 'http://deb.debian.org/debian';
/** Fixed timestamps: the cache key does not follow the commit. */
const SOURCE_DATE_EPOCH = '1735689600';

/** The cache folder of test root file systems. */
export function testCacheDir(): string {
  return process.env['RTCTL_TEST_CACHE'] ?? '/var/cache/rtctl-test';
}

/** The cached tar of a minbase root file system with `packages`; built with mmdebstrap when missing. */
export function debianRootfsTar(packages: readonly string[]): string {
  const sorted = [...new Set(packages)].sort();
  const mmdebstrapVersion = execFileSync('mmdebstrap', ['--version'], { encoding: 'utf8' }).trim();
  const key = createHash('sha256')
    .update([SUITE, MIRROR, sorted.join(','), SOURCE_DATE_EPOCH, mmdebstrapVersion, 'v1'].join('\n'))
    .digest('hex')
    .slice(0, 16);
  const dir = testCacheDir();
  mkdirSync(dir, { recursive: true });
  const out = join(dir, `bookworm-minbase-${key}.tar`);
  if (!existsSync(out)) {
    const tmp = `${out}.${process.pid}.tmp`;
    execFileSync(
      'mmdebstrap',
      [
        '--quiet',
        '--variant=minbase',
        '--mode=root',
        '--format=tar',
        ...(sorted.length > 0 ? [`--include=${sorted.join(',')}`] : []),
        '--customize-hook=rm -rf "$1"/var/lib/apt/lists/* "$1"/var/cache/apt/*.bin',
        SUITE,
        tmp,
        MIRROR,
      ],
      { stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, SOURCE_DATE_EPOCH }, timeout: 900000 },
    );
    renameSync(tmp, out);
  }
  return out;
}

/** Unpacks the root file system into a new temp directory; returns it (remove it with removeRootfs). */
export function unpackRootfs(tar: string): string {
  const root = mkdtempSync(join(tmpdir(), 'rtctl-rootfs-'));
  execFileSync('tar', ['-xf', tar, '-C', root, '--numeric-owner', '--same-permissions']);
  return root;
}

/** Removes an unpacked root file system. */
export function removeRootfs(root: string): void {
  rmSync(root, { recursive: true, force: true });
}

/** The packages the root file system needs besides minbase: the package's dependencies. */
export const DEPENDENCY_PACKAGES = DEB_DEPENDS.map((d) => d.split(' ')[0] ?? d);

/** The package built by this test process, if any. */
let built: string | undefined;

/** The package under test: RTCTL_TEST_DEB, or `npm run build:deb` (once per test process). */
export function packageUnderTest(): string {
  const given = process.env['RTCTL_TEST_DEB'];
  if (given !== undefined && given !== '') return given;
  if (built !== undefined) return built;
  execFileSync('npm', ['run', '--silent', 'build:deb'], {
    cwd: REPO_ROOT,
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const version = (JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as { version: string })
    .version;
  built = join(REPO_ROOT, 'dist', 'deb', `rtctl_${version}_amd64.deb`);
  return built;
}
