// Prerequisite gate for tests that need root, the kernel, containerd or other host tools.
// Locally a missing prerequisite skips the test with its reason; in CI (CI=true) it fails it,
// because CI must run these tests rather than skip them.
import { execFileSync } from 'node:child_process';

/** True when the named executable is on PATH. */
export function hasCommand(name: string): boolean {
  try {
    execFileSync('sh', ['-c', `command -v ${JSON.stringify(name)}`], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/** True when running as root. */
export function isRoot(): boolean {
  return typeof process.getuid === 'function' && process.getuid() === 0;
}

/**
 * Checks prerequisites inside a mocha hook or test. Each entry is [ok, reason].
 * Missing ones skip the test locally and throw under CI=true.
 */
export function requirePrereqs(ctx: Mocha.Context, checks: ReadonlyArray<readonly [boolean, string]>): void {
  const missing = checks.filter(([ok]) => !ok).map(([, reason]) => reason);
  if (missing.length === 0) return;
  const message = `missing prerequisite: ${missing.join('; ')}`;
  if (process.env['CI'] === 'true') throw new Error(`${message} (CI=true: prerequisites must be installed)`);
  ctx.skip();
}
