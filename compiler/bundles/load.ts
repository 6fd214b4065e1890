// Reads the bundle folders: every .yaml/.yml file below the root, named relative to it (so its first path
// segment names the bundle), in sorted order. Folders added later (imds/, allow/) are picked up as they are.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import type { SourceText } from '../lint.js';

/** The bundles' root in a checkout. */
export const DEFAULT_BUNDLES_ROOT = path.join('policies', 'hardening');

/** Every YAML file below root as a source text named relative to root (with `/`). */
export function readBundleSources(root: string): SourceText[] {
  const out: SourceText[] = [];
  const walk = (dir: string, rel: string, depth: number): void => {
    if (depth > 8) return;
    for (const name of readdirSync(dir).sort()) {
      const full = path.join(dir, name);
      const relName = rel === '' ? name : `${rel}/${name}`;
      const s = statSync(full);
      if (s.isDirectory()) walk(full, relName, depth + 1);
      else if (s.isFile() && /\.ya?ml$/.test(name))
        out.push({ file: relName, text: readFileSync(full, 'utf8') });
    }
  };
  walk(root, '', 0);
  return out;
}
