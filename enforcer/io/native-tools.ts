// Locates and builds the native tools (enforcer/native/build.sh) from the source tree, whether rtctl runs
// from the sources (tsx) or from dist/.
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** The enforcer/native directory holding build.sh. */
export function findNativeDir(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 6; i++) {
    const candidate = join(dir, 'enforcer', 'native');
    if (existsSync(join(candidate, 'build.sh'))) return candidate;
    if (existsSync(join(dir, 'native', 'build.sh'))) return join(dir, 'native');
    dir = resolve(dir, '..');
  }
  throw new Error('enforcer/native/build.sh not found next to rtctl');
}

/** Builds the native tools if needed; returns the paths of the helper and of the BPF-LSM probe. */
export async function buildNativeTools(): Promise<{ fanotifyHelper: string; bpfLsmProbe: string }> {
  const dir = findNativeDir();
  const { stdout } = await run('sh', [join(dir, 'build.sh')]);
  const helper = stdout.trim().split('\n').pop() ?? '';
  return { fanotifyHelper: helper, bpfLsmProbe: join(dirname(helper), 'rtctl-probe-bpf-lsm') };
}
