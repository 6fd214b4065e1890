// An `rtctl` command on PATH for tests that run real clients (git hooks, pre-commit, kubectl) which find rtctl
// by name: a shell script that runs bin/rtctl.ts from this checkout under tsx, whatever the working directory.
import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { REPO_ROOT } from './paths.js';

/** The tsx loader as an absolute URL, for `node --import` from any directory. */
export const TSX_LOADER_URL = pathToFileURL(
  path.join(REPO_ROOT, 'node_modules', 'tsx', 'dist', 'loader.mjs'),
).href;

/** The rtctl entry point of this checkout. */
export const RTCTL_ENTRY = path.join(REPO_ROOT, 'bin', 'rtctl.ts');

/**
 * Writes `<dir>/<name>` (default `rtctl`) running this checkout's CLI and returns `dir`, to put first on PATH.
 */
export function writeRtctlCommand(dir: string, name = 'rtctl'): string {
  mkdirSync(dir, { recursive: true });
  const file = path.join(dir, name);
  writeFileSync(
    file,
    `#!/bin/sh\nexec ${JSON.stringify(process.execPath)} --import ${JSON.stringify(TSX_LOADER_URL)} ${JSON.stringify(RTCTL_ENTRY)} "$@"\n`,
  );
  chmodSync(file, 0o755);
  return dir;
}
