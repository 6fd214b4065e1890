// Path matching of the decision semantics: directories with and without recursion, glob patterns,
// base names. Paths are compared as UTF-8 bytes, as the kernel and the rule-table readers see them.

/**
 * An absolute path in the form the kernel reports it: `.` and `..` resolved, no repeated or trailing
 * `/` (except the root). Relative paths are returned as given (they never match a rule).
 */
export function normalizeAbsolutePath(path: string): string {
  if (!path.startsWith('/')) return path;
  const out: string[] = [];
  for (const seg of path.split('/')) {
    if (seg === '' || seg === '.') continue;
    if (seg === '..') out.pop();
    else out.push(seg);
  }
  return `/${out.join('/')}`;
}

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

/**
 * Glob match over the whole path, byte-wise: `**` any bytes including `/`, `*` any bytes but `/`,
 * `?` one byte other than `/`, everything else literal. Memoised recursion: O(pattern × path).
 */
export function matchesGlob(pattern: string, path: string): boolean {
  const p = Buffer.from(pattern, 'utf8');
  const s = Buffer.from(path, 'utf8');
  const SLASH = 0x2f;
  const STAR = 0x2a;
  const memo = new Map<number, boolean>();
  const match = (pi: number, si: number): boolean => {
    const key = pi * (s.length + 1) + si;
    const known = memo.get(key);
    if (known !== undefined) return known;
    let result: boolean;
    if (pi === p.length) result = si === s.length;
    else if (p[pi] === STAR) {
      let end = pi;
      while (p[end] === STAR) end++;
      const crossing = end - pi >= 2;
      // Either the star run matches nothing more, or it eats one byte and stays.
      result = match(end, si) || (si < s.length && (crossing || s[si] !== SLASH) && match(pi, si + 1));
    } else if (si === s.length) result = false;
    else if (p[pi] === 0x3f) result = s[si] !== SLASH && match(pi + 1, si + 1);
    else result = p[pi] === s[si] && match(pi + 1, si + 1);
    memo.set(key, result);
    return result;
  };
  return match(0, 0);
}

/** The literal directory a glob starts with: up to the last `/` before the first `*` or `?`. */
export function getGlobPrefixDirectory(pattern: string): string {
  const star = pattern.search(/[*?]/);
  const head = star === -1 ? pattern : pattern.slice(0, star);
  const slash = head.lastIndexOf('/');
  return slash === -1 ? '/' : head.slice(0, slash + 1);
}
