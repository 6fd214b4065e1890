// Path matching of the decision semantics: directories with and without recursion, glob patterns,
// base names. Paths are compared as UTF-8 bytes, as the kernel and the rule-table readers see them.

/** The directory `dir` with its trailing `/` (directories in the IR end in `/`; be forgiving). */
export function normalizeDirectory(dir: string): string {
  return dir.endsWith('/') ? dir : `${dir}/`;
}

/**
 * True when `path` is directly in `dir`, or at any depth below it when `recursive`.
 * `dir` ends in `/`; a path equal to the directory itself is not "in" it.
 */
export function isInDirectory(path: string, dir: string, recursive: boolean): boolean {
  const d = normalizeDirectory(dir);
  if (path.length <= d.length || !path.startsWith(d)) return false;
  if (recursive) return true;
  // Direct child: no `/` in the remainder except possibly a trailing one.
  return !path.slice(d.length, -1).includes('/');
}

/** The part of a path after its last `/`. */
export function getBaseName(path: string): string {
  return path.slice(path.lastIndexOf('/') + 1);
}

/** Number of segments of a directory ending in `/`: `/` is 0, `/etc/` is 1. */
export function getDirectoryDepth(dir: string): number {
  let n = 0;
  for (const ch of normalizeDirectory(dir)) if (ch === '/') n++;
  return n - 1;
}

const compiledGlobs = new Map<string, RegExp>();

function compileGlob(pattern: string): RegExp {
  const bytes = Buffer.from(pattern, 'utf8').toString('latin1');
  let source = '^';
  let i = 0;
  while (i < bytes.length) {
    const ch = bytes[i] ?? '';
    if (ch === '*') {
      let j = i;
      while (bytes[j] === '*') j++;
      source += j - i >= 2 ? '[\\s\\S]*' : '[^/]*';
      i = j;
      continue;
    }
    if (ch === '?') source += '[^/]';
    else source += `\\x${ch.charCodeAt(0).toString(16).padStart(2, '0')}`;
    i++;
  }
  return new RegExp(`${source}$`);
}

/**
 * Glob match over the whole path, byte-wise: `**` any bytes including `/`, `*` any bytes but `/`,
 * `?` one byte other than `/`, everything else literal.
 */
export function matchesGlob(pattern: string, path: string): boolean {
  let re = compiledGlobs.get(pattern);
  if (re === undefined) {
    re = compileGlob(pattern);
    if (compiledGlobs.size > 10_000) compiledGlobs.clear();
    compiledGlobs.set(pattern, re);
  }
  return re.test(Buffer.from(path, 'utf8').toString('latin1'));
}

/** The literal directory a glob starts with: up to the last `/` before the first `*` or `?`. */
export function getGlobPrefixDirectory(pattern: string): string {
  const star = pattern.search(/[*?]/);
  const head = star === -1 ? pattern : pattern.slice(0, star);
  const slash = head.lastIndexOf('/');
  return slash === -1 ? '/' : head.slice(0, slash + 1);
}
