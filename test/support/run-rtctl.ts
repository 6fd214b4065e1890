// rtctl as a user runs it, in a child process (bin/rtctl.ts under tsx): exit code, stdout, stderr.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { REPO_ROOT } from './paths.js';
import { RTCTL_ENTRY, TSX_LOADER_URL } from './rtctl-on-path.js';

const run = promisify(execFile);

/** The result of one rtctl run. */
export interface RtctlRun {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs `rtctl …args` in `cwd` (default: the repository root). */
export async function runRtctl(args: readonly string[], cwd: string = REPO_ROOT): Promise<RtctlRun> {
  try {
    const r = await run(process.execPath, ['--import', TSX_LOADER_URL, RTCTL_ENTRY, ...args], {
      cwd,
      maxBuffer: 64 * 1024 * 1024,
    });
    return { code: 0, stdout: r.stdout, stderr: r.stderr };
  } catch (err) {
    const e = err as { code?: number; stdout?: string; stderr?: string };
    return { code: typeof e.code === 'number' ? e.code : -1, stdout: e.stdout ?? '', stderr: e.stderr ?? '' };
  }
}
