// Keeps an output directory equal to the latest build: files listed in the previous index.json that the new
// build no longer produces are stale (a deleted policy must not linger for Argo CD or Flux to sync). Only
// lists them; write-artifacts.ts removes them once the new build is in place.
import { readFile } from 'node:fs/promises';
import path from 'node:path';

/** Paths of the previous build's artifacts that `keep` does not hold, inside `outDir`. */
export async function listStaleArtifacts(outDir: string, keep: ReadonlySet<string>): Promise<string[]> {
  let previous: unknown;
  try {
    previous = JSON.parse(await readFile(path.join(outDir, 'index.json'), 'utf8'));
  } catch {
    return [];
  }
  const listed = (previous as { artifacts?: Array<{ path?: unknown }> }).artifacts;
  if (!Array.isArray(listed)) return [];
  const root = path.resolve(outDir);
  const stale: string[] = [];
  for (const a of listed as Array<{ path?: unknown }>) {
    if (typeof a.path !== 'string' || keep.has(a.path)) continue;
    if (!path.resolve(root, a.path).startsWith(root + path.sep)) continue;
    stale.push(a.path);
  }
  return stale;
}
