// Globs of pattern rules as bit-parallel automata the BPF programs run one path byte at a time
// (glob_step in rtctl-lsm.bpf.c): state bit i = "token i is next to match"; the glob matches when
// bit `tokens` is set after the last byte. Same language as matchGlobBytes (docs/rule-table.md).
import { tokenizeGlob } from '../../compiler/rule-table/match-glob-bytes.js';
import { MapLimit, type GlobAutomaton } from './map-layout.js';

const SLASH = 0x2f;
const ANY_ONE = -1;
const ANY_IN_SEGMENT = -2;
const ANY = -3;

/** Builds the automaton of a glob, or null when it has more tokens than a 64-bit state holds. */
export function buildGlobAutomaton(pattern: Uint8Array): GlobAutomaton | null {
  const tokens = tokenizeGlob(pattern);
  if (tokens.length > MapLimit.maxPatternTokens) return null;
  let star = 0n;
  let dstar = 0n;
  const accept: bigint[] = new Array<bigint>(256).fill(0n);
  tokens.forEach((t, i) => {
    const bit = 1n << BigInt(i);
    if (t === ANY_IN_SEGMENT) star |= bit;
    else if (t === ANY) dstar |= bit;
    else if (t === ANY_ONE) {
      for (let b = 0; b < 256; b++) if (b !== SLASH) accept[b] = (accept[b] ?? 0n) | bit;
    } else accept[t] = (accept[t] ?? 0n) | bit;
  });
  return { tokens: tokens.length, star, dstar, accept };
}

const MASK64 = (1n << 64n) - 1n;

/** Runs the automaton over a path exactly as the BPF program does (used by tests). */
export function runGlobAutomaton(a: GlobAutomaton, path: Uint8Array): boolean {
  const stars = a.star | a.dstar;
  let st = 1n;
  st |= ((st & stars) << 1n) & MASK64;
  st |= ((st & stars) << 1n) & MASK64;
  for (const b of path) {
    let next = (((st & (a.accept[b] ?? 0n)) << 1n) | (st & a.dstar)) & MASK64;
    if (b !== SLASH) next |= st & a.star;
    next |= ((next & stars) << 1n) & MASK64;
    next |= ((next & stars) << 1n) & MASK64;
    st = next;
    if (st === 0n) return false;
  }
  return ((st >> BigInt(a.tokens)) & 1n) === 1n;
}
