// Byte-wise glob matching as the C readers do it (docs/rule-table.md "Glob match"): a dynamic
// programme over pattern tokens and path bytes, O(pattern × path), no backtracking.

const SLASH = 0x2f;
const STAR = 0x2a;
const QUESTION = 0x3f;

/** A glob token: a literal byte (0..255), or one of the wildcard codes below. */
const ANY_ONE = -1;
const ANY_IN_SEGMENT = -2;
const ANY = -3;

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
