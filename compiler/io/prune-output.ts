// Keeps an output directory equal to the latest build: files listed in the previous index.json that the new
// build no longer produces are removed (a deleted policy must not linger for Argo CD or Flux to sync).
import { readFile, rm } from 'node:fs/promises';
import path from 'node:path';

/** Removes stale artifacts of the previous build; returns the paths removed. */
export async function pruneStaleArtifacts(outDir: string, keep: ReadonlySet<string>): Promise<string[]> {
  let previous: unknown;
  try {
    previous = JSON.parse(await readFile(path.join(outDir, 'index.json'), 'utf8'));
  } catch {
    return [];
  }
  const listed = (previous as { artifacts?: Array<{ path?: unknown }> }).artifacts ?? [];
  const root = path.resolve(outDir);
  const removed: string[] = [];
  for (const a of listed) {
    if (typeof a.path !== 'string' || keep.has(a.path)) continue;
    const target = path.resolve(root, a.path);
    if (!target.startsWith(root + path.sep)) continue;
    await rm(target, { force: true });
    removed.push(a.path);
  }
  return removed;
}
