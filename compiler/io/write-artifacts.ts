// Writes compiled artifacts below an output directory, creating folders; removes nothing else.
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Artifact } from '../backends/backend.js';

/** Writes every artifact; paths are relative to `outDir` and must stay inside it. */
export async function writeArtifacts(outDir: string, artifacts: readonly Artifact[]): Promise<void> {
  const root = path.resolve(outDir);
  for (const a of artifacts) {
    const target = path.resolve(root, a.path);
    if (!target.startsWith(root + path.sep))
      throw new Error(`artifact path escapes the output directory: ${a.path}`);
    await mkdir(path.dirname(target), { recursive: true });
    await writeFile(target, a.content);
  }
}
