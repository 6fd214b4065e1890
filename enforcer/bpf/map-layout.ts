// Byte layouts of the BPF maps, mirroring enforcer/bpf/rtctl-maps.h field for field (x86-64 and BPF
// agree: every struct there has explicit padding). Pure encoders: values in, bytes out.

/** Limits of the maps (the same numbers as rtctl-maps.h). */
export const MapLimit = {
  pathMax: 256,
  maxRefs: 32,
  sourceWords: 4,
  policyWords: 16,
  maxRules: 8192,
  maxIndex: 16384,
  maxPatterns: 256,
  maxPatternTokens: 63,
  maxSourceKeys: 1024,
  maxWorkloads: 1024,
  wnameMax: 128,
} as const;

/** Workload key kinds (RT_WKEY_*). */
export const WorkloadKeyKind = { Cgroup: 1, MountNamespace: 2 } as const;
export type WorkloadKeyKind = (typeof WorkloadKeyKind)[keyof typeof WorkloadKeyKind];

/** rt_workload.features bits (RT_FEATURE_*). */
export const Feature = { Execname: 1, Patterns: 2 } as const;

/** Rule flag set by the encoder: the rule has fromSource records (RT_FLAG_SOURCES). */
export const FLAG_SOURCES = 128;

export const RT_INDEX_KEY_SIZE = 264;
export const RT_INDEX_VAL_SIZE = 132;
export const RT_RULE_SIZE = 48;
export const RT_PATTERN_SIZE = 2072;
export const RT_SOURCE_KEY_SIZE = 264;
export const RT_SOURCE_VAL_SIZE = 16;
export const RT_WORKLOAD_KEY_SIZE = 16;
export const RT_WORKLOAD_SIZE = 272;
export const RT_WNAME_SIZE = 128;
/** Size of one ring buffer record (struct rt_event). */
export const RT_EVENT_SIZE = 72 + 3 * 256;

function u32Key(value: number): Uint8Array {
  const b = new Uint8Array(4);
  new DataView(b.buffer).setUint32(0, value, true);
  return b;
}

/** rt_index key: slot, class, node kind, zero-padded key bytes (at most 255). */
export function encodeIndexKey(slot: number, cls: number, kind: number, key: Uint8Array): Uint8Array {
  const b = new Uint8Array(RT_INDEX_KEY_SIZE);
  const v = new DataView(b.buffer);
  v.setUint32(0, slot, true);
  v.setUint8(4, cls);
  v.setUint8(5, kind);
  b.set(key, 8);
  return b;
}

/** rt_index value: count, then rule indices ascending. */
export function encodeIndexValue(rules: readonly number[]): Uint8Array {
  const b = new Uint8Array(RT_INDEX_VAL_SIZE);
  const v = new DataView(b.buffer);
  v.setUint32(0, rules.length, true);
  rules.forEach((r, i) => v.setUint32(4 + 4 * i, r, true));
  return b;
}

/** One rule as the programs see it. */
export interface MapRule {
  policy: number;
  cls: number;
  matcher: number;
  action: number;
  flags: number;
  pattern: number;
  /** Source ids (bit numbers) of its fromSource records. */
  sources: readonly number[];
}

/** Sets bit `id` of a little-endian array of u64 words held in `b` at `offset`. */
function setBit(b: Uint8Array, offset: number, id: number): void {
  const byte = offset + (id >>> 3);
  b[byte] = (b[byte] ?? 0) | (1 << (id & 7));
}

export function encodeRule(rule: MapRule): Uint8Array {
  const b = new Uint8Array(RT_RULE_SIZE);
  const v = new DataView(b.buffer);
  v.setUint32(0, rule.policy, true);
  v.setUint8(4, rule.cls);
  v.setUint8(5, rule.matcher);
  v.setUint8(6, rule.action);
  v.setUint8(7, rule.flags);
  v.setUint32(8, rule.pattern, true);
  v.setUint32(12, 1, true);
  for (const id of rule.sources) setBit(b, 16, id);
  return b;
}

/** rt_rules / rt_patterns / rt_wnames index of entry `i` in `slot`. */
export function encodeArrayIndex(slot: number, perSlot: number, i: number): Uint8Array {
  return u32Key(slot * perSlot + i);
}

/** A glob as a bit-parallel automaton: bit i of each mask is token i. */
export interface GlobAutomaton {
  tokens: number;
  star: bigint;
  dstar: bigint;
  /** 256 masks: tokens that consume byte b and advance. */
  accept: readonly bigint[];
}

export function encodePattern(a: GlobAutomaton): Uint8Array {
  const b = new Uint8Array(RT_PATTERN_SIZE);
  const v = new DataView(b.buffer);
  v.setUint32(0, a.tokens, true);
  v.setBigUint64(8, a.star, true);
  v.setBigUint64(16, a.dstar, true);
  a.accept.forEach((m, i) => v.setBigUint64(24 + 8 * i, m, true));
  return b;
}

export function encodeSourceKey(slot: number, key: Uint8Array): Uint8Array {
  const b = new Uint8Array(RT_SOURCE_KEY_SIZE);
  new DataView(b.buffer).setUint32(0, slot, true);
  b.set(key, 8);
  return b;
}

/** Source ids carried by one path or directory string (-1: none). */
export interface SourceIds {
  pathId: number;
  dirId: number;
  dirRecursiveId: number;
}

export function encodeSourceValue(ids: SourceIds): Uint8Array {
  const b = new Uint8Array(RT_SOURCE_VAL_SIZE);
  const v = new DataView(b.buffer);
  v.setInt32(0, ids.pathId, true);
  v.setInt32(4, ids.dirId, true);
  v.setInt32(8, ids.dirRecursiveId, true);
  return b;
}

export function encodeWorkloadKey(slot: number, kind: WorkloadKeyKind, id: bigint): Uint8Array {
  const b = new Uint8Array(RT_WORKLOAD_KEY_SIZE);
  const v = new DataView(b.buffer);
  v.setUint32(0, slot, true);
  v.setUint32(4, kind, true);
  v.setBigUint64(8, id, true);
  return b;
}

/** One workload as the programs see it. */
export interface MapWorkload {
  wid: number;
  /** Per class code 0..3: true when the posture is block. */
  blockPosture: readonly [boolean, boolean, boolean, boolean];
  lpUnscoped: number;
  hasSources: boolean;
  /** FEATURE_* bits: node kinds present in the table (the programs skip lookups of absent kinds). */
  features: number;
  policies: readonly number[];
  /** Per class code: source ids that make the workload least-permissive. */
  lpSources: readonly [readonly number[], readonly number[], readonly number[], readonly number[]];
}

export function encodeWorkload(w: MapWorkload): Uint8Array {
  const b = new Uint8Array(RT_WORKLOAD_SIZE);
  const v = new DataView(b.buffer);
  v.setUint32(0, w.wid, true);
  w.blockPosture.forEach((block, c) => v.setUint8(4 + c, block ? 1 : 0));
  v.setUint8(8, w.lpUnscoped);
  v.setUint8(9, w.hasSources ? 1 : 0);
  v.setUint8(10, w.features);
  for (const p of w.policies) setBit(b, 16, p);
  w.lpSources.forEach((ids, c) => {
    for (const id of ids) setBit(b, 144 + 32 * c, id);
  });
  return b;
}

export function encodeWorkloadName(name: string): Uint8Array {
  const b = new Uint8Array(RT_WNAME_SIZE);
  const bytes = new TextEncoder().encode(name);
  b.set(bytes.subarray(0, RT_WNAME_SIZE - 1));
  return b;
}

/** Lower-case hex of bytes (the loader's wire form for keys and values). */
export function toHex(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('hex');
}

/**
 * The loader's wire form of a key or value: hex without the trailing zero bytes (the loader fills the rest
 * of the map's key or value size with zeros). Most keys and values are mostly padding (a 264-byte index key
 * holding a 20-byte path), so this is a fraction of the full hex.
 */
export function toWireHex(bytes: Uint8Array): string {
  let end = bytes.byteLength;
  while (end > 0 && bytes[end - 1] === 0) end--;
  return Buffer.from(bytes.buffer, bytes.byteOffset, end).toString('hex');
}
