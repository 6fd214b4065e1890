// The image tests' one build per run: `image/build.sh` (rootfs from the cache, rtctl built, the app tree staged
// under build/image/app) runs at most once per mocha process, whichever image test asks first; the IMDS image
// is then assembled from the same rootfs and app tree (only its config differs), without building again.
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { REPO_ROOT } from '../../support/paths.js';

/** Where build.sh writes the archives, the digests and the staged app tree. */
export const IMAGE_OUT = path.join(REPO_ROOT, 'build/image');
/** The image tests' SOURCE_DATE_EPOCH: 2026-01-01. */
export const IMAGE_EPOCH = 1767225600;
/** The name the rtctl image is built under in the tests. */
export const TEST_IMAGE = 'rtctl.test/rtctl:ci';

let built = false;

/** Runs `image/build.sh` once per process (RTCTL_TEST_IMAGE_PREBUILT=1 reuses build/image, outside CI). */
export function buildImageOnce(): void {
  if (built) return;
  if (process.env['RTCTL_TEST_IMAGE_PREBUILT'] !== '1' || process.env['CI'] === 'true')
    execFileSync('sh', ['image/build.sh'], {
      cwd: REPO_ROOT,
      stdio: ['ignore', 'ignore', 'inherit'],
      env: { ...process.env, SOURCE_DATE_EPOCH: String(IMAGE_EPOCH), RTCTL_IMAGE_NAME: TEST_IMAGE },
    });
  built = true;
}

/** The cached Debian root file system tar (image/rootfs.sh prints its path; built only when absent). */
export function rootfsTar(): string {
  return execFileSync(
    'sh',
    [
      'image/rootfs.sh',
      process.env['RTCTL_IMAGE_CACHE'] ?? path.join(process.env['HOME'] ?? '/root', '.cache/rtctl/image'),
    ],
    { cwd: REPO_ROOT, encoding: 'utf8' },
  ).trim();
}
