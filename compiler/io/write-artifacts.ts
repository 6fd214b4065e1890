// Writes compiled artifacts below an output directory so that a failed write leaves it as it was: every
// artifact is first written to a fresh folder beside it, and moved into place only when all are written
// (index.json last). The output tree is never entered through a symbolic link: a link on the way to any file
// the write creates, replaces or removes (a committed build/ with `policies -> /etc`) stops the write before
// anything changes, and says where.
import { lstat, mkdir, mkdtemp, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Artifact } from '../backends/backend.js';

/** Longest file name (one path segment) most file systems take, in bytes. */
export const MAX_FILE_NAME_BYTES = 255;

/** A write refused before anything was changed; the message says why. */
export class OutputRefusedError extends Error {}

function isMissing(err: unknown): boolean {
  return (err as NodeJS.ErrnoException).code === 'ENOENT';
}

/**
 * The first symbolic link on the way to any of `relPaths` below `root` (root itself not counted): a folder the
 * write would enter or a file it would replace or remove. Other parts of the output folder (an image build's
 * tree beside the artifacts, say) are not the compiler's and are not looked at.
 */
async function findSymlinkOnPaths(root: string, relPaths: readonly string[]): Promise<string | undefined> {
  const checked = new Set<string>();
  for (const rel of relPaths) {
    let p = root;
    for (const segment of rel.split('/')) {
      p = path.join(p, segment);
      if (checked.has(p)) continue;
      checked.add(p);
      try {
        if ((await lstat(p)).isSymbolicLink()) return p;
      } catch (err) {
        if (isMissing(err)) break;
        throw err;
      }
    }
  }
  return undefined;
}

/** Checks every artifact path: relative, inside the output, each segment within file-name limits. */
function checkArtifactPath(root: string, a: Artifact): string {
  const target = path.resolve(root, a.path);
  if (!target.startsWith(root + path.sep))
    throw new OutputRefusedError(`artifact path escapes the output directory: ${JSON.stringify(a.path)}`);
  for (const segment of a.path.split('/')) {
    if (Buffer.byteLength(segment) > MAX_FILE_NAME_BYTES)
      throw new OutputRefusedError(
        `artifact file name longer than ${MAX_FILE_NAME_BYTES} bytes: ${JSON.stringify(a.path.slice(0, 300))}`,
      );
  }
  return target;
}

/**
 * Writes `artifacts` below `outDir` (paths relative to it) and removes the files `stale` lists (artifacts of the
 * previous build no longer produced). Throws OutputRefusedError, with nothing changed, when the output tree
 * holds a symbolic link or an artifact path is unusable.
 */
export async function writeArtifacts(
  outDir: string,
  artifacts: readonly Artifact[],
  stale: readonly string[] = [],
): Promise<void> {
  const root = path.resolve(outDir);
  const targets = artifacts.map((a) => checkArtifactPath(root, a));
  let exists = true;
  try {
    const s = await lstat(root);
    if (!s.isDirectory() && !s.isSymbolicLink())
      throw new OutputRefusedError(`output ${outDir} exists and is not a directory`);
  } catch (err) {
    if (!isMissing(err)) throw err;
    exists = false;
  }
  if (exists) {
    const link = await findSymlinkOnPaths(root, [...artifacts.map((a) => a.path), ...stale]);
    if (link !== undefined)
      throw new OutputRefusedError(
        `${link} is a symbolic link; rtctl compile does not write or remove through links in its output directory (remove the link, or choose another output)`,
      );
  }
  // The temporary folder sits beside the output, on the same file system, so moving a file is a rename.
  await mkdir(path.dirname(root), { recursive: true });
  const staging = await mkdtemp(path.join(path.dirname(root), `.${path.basename(root)}.rtctl-`));
  try {
    for (const a of artifacts) {
      const file = path.join(staging, a.path);
      await mkdir(path.dirname(file), { recursive: true });
      await writeFile(file, a.content, { flag: 'wx' });
    }
    await mkdir(root, { recursive: true });
    // index.json last: a reader that sees the new index sees every file it lists.
    const order = artifacts
      .map((a, i) => ({ a, target: targets[i] ?? '' }))
      .sort((x, y) => Number(x.a.path === 'index.json') - Number(y.a.path === 'index.json'));
    for (const { a, target } of order) {
      await mkdir(path.dirname(target), { recursive: true });
      await rename(path.join(staging, a.path), target);
    }
    for (const p of stale) {
      const target = path.resolve(root, p);
      if (target.startsWith(root + path.sep)) await rm(target, { force: true });
    }
  } finally {
    await rm(staging, { recursive: true, force: true });
  }
}
