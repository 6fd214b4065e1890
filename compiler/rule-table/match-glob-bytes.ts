// Byte-wise glob matching as the C readers do it (docs/rule-table.md "Glob match"): a dynamic
// programme over pattern tokens and path bytes, O(pattern × path), no backtracking.

const SLASH = 0x2f;
const STAR = 0x2a;
const QUESTION = 0x3f;

/** A glob token: a literal byte (0..255), or one of the wildcard codes below. */
const ANY_ONE = -1;
const ANY_IN_SEGMENT = -2;
const ANY = -3;

/** A tokenized glob and its longest literal run (every match contains it): a cheap prefilter. */
export interface CompiledGlob {
  tokens: Int16Array;
  longestLiteral: Uint8Array;
}

/** Tokenizes a glob and finds its longest literal run. */
export function compileGlob(pattern: Uint8Array): CompiledGlob {
  const tokens = tokenizeGlob(pattern);
  let best: [number, number] = [0, 0];
  let start = 0;
  for (let i = 0; i <= tokens.length; i++) {
    const t = i < tokens.length ? (tokens[i] ?? 0) : -1;
    if (t < 0) {
      if (i - start > best[1] - best[0]) best = [start, i];
      start = i + 1;
    }
  }
  return { tokens, longestLiteral: Uint8Array.from(tokens.subarray(best[0], best[1])) };
}

function containsBytes(haystack: Uint8Array, needle: Uint8Array): boolean {
  if (needle.length === 0) return true;
  const first = needle[0];
  const last = haystack.length - needle.length;
  outer: for (let i = 0; i <= last; i++) {
    if (haystack[i] !== first) continue;
    for (let j = 1; j < needle.length; j++) if (haystack[i + j] !== needle[j]) continue outer;
    return true;
  }
  return false;
}

/** True when the compiled glob matches the whole path (literal prefilter, then the DP). */
export function matchCompiledGlob(glob: CompiledGlob, path: Uint8Array): boolean {
  return containsBytes(path, glob.longestLiteral) && matchGlobBytes(glob.tokens, path);
}

/** Splits a glob into tokens; runs of two or more `*` become one `**`. */
export function tokenizeGlob(pattern: Uint8Array): Int16Array {
  const tokens: number[] = [];
  let i = 0;
  while (i < pattern.length) {
    const b = pattern[i] ?? 0;
    if (b === STAR) {
      let j = i;
      while (pattern[j] === STAR) j++;
      tokens.push(j - i >= 2 ? ANY : ANY_IN_SEGMENT);
      i = j;
      continue;
    }
    tokens.push(b === QUESTION ? ANY_ONE : b);
    i++;
  }
  return Int16Array.from(tokens);
}

/** True when the tokenized glob matches the whole path. */
export function matchGlobBytes(tokens: Int16Array, path: Uint8Array): boolean {
  const n = path.length;
  let prev = new Uint8Array(n + 1);
  let cur = new Uint8Array(n + 1);
  prev[0] = 1;
  for (const t of tokens) {
    cur.fill(0);
    if (t === ANY || t === ANY_IN_SEGMENT) {
      cur[0] = prev[0] ?? 0;
      for (let j = 1; j <= n; j++) {
        const extend = cur[j - 1] === 1 && (t === ANY || path[j - 1] !== SLASH);
        cur[j] = prev[j] === 1 || extend ? 1 : 0;
      }
    } else {
      for (let j = 1; j <= n; j++) {
        const b = path[j - 1] ?? 0;
        const ok = t === ANY_ONE ? b !== SLASH : b === t;
        cur[j] = ok && prev[j - 1] === 1 ? 1 : 0;
      }
    }
    [prev, cur] = [cur, prev];
  }
  return prev[n] === 1;
}
