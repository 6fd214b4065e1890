// Turns one enforcement state (the compiled rule table + the node's workloads) into the BPF map
// entries of one slot (docs/bpf-lsm.md "Maps"). Pure: the index nodes, rules and sources come from
// the table's own records (docs/rule-table.md), so the programs walk the same lists as every reader.
// A table beyond the maps' limits is an error result naming the limit, never a silent drop.
import { readRuleTable, type RuleTable } from '../../compiler/backends/rules/read-rule-table.js';
import {
  Header,
  NODE_RECORD_SIZE,
  NodeKind,
  POLICY_RECORD_SIZE,
  RULE_RECORD_SIZE,
  SOURCE_RECORD_SIZE,
  SourceCode,
  MatcherCode,
} from '../../compiler/backends/rules/rule-table-format.js';
import { Operation } from '../../compiler/ir/rule-set.js';
import { getPosture, Posture } from '../../compiler/model/posture.js';
import type { Postures } from '../data-plane.js';
import { buildGlobAutomaton } from './glob-automaton.js';
import {
  FLAG_SOURCES,
  Feature,
  MapLimit,
  encodeArrayIndex,
  encodeIndexKey,
  encodeIndexValue,
  encodePattern,
  encodeRule,
  encodeSourceKey,
  encodeSourceValue,
  encodeWorkload,
  encodeWorkloadKey,
  encodeWorkloadName,
  toHex,
  type MapRule,
  type SourceIds,
  type WorkloadKeyKind,
} from './map-layout.js';

/** A workload with the kernel identity the programs look it up by. */
export interface KeyedWorkload {
  /** The control plane's key (container id, `host`). */
  name: string;
  keyKind: WorkloadKeyKind;
  /** Cgroup id or mount namespace inode. */
  keyId: bigint;
  policies: readonly number[];
  postures: Postures;
}

/** One map entry in the loader's wire form. */
export type MapEntry = readonly [map: string, keyHex: string, valueHex: string];

/** The decoded rule record fields the event translation needs. */
export interface RuleInfo {
  policyName: string;
  severity: number;
  message: string;
  tags: string[];
}

/** The entries of one slot plus what event translation needs. */
export interface EncodedState {
  entries: MapEntry[];
  ruleCount: number;
  rules: RuleInfo[];
}

/** Why a state cannot be enforced by this plane. */
export interface EncodeError {
  code: 'BPF_TABLE_INVALID' | 'BPF_LIMIT';
  message: string;
}

export type EncodeResult = { ok: true; state: EncodedState } | { ok: false; error: EncodeError };

const decoder = new TextDecoder();

class LimitError extends Error {}

/** Raw access to the validated table's records (offsets were checked by readRuleTable). */
class TableRecords {
  readonly view: DataView;
  constructor(readonly bytes: Uint8Array) {
    this.view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  }
  u8(o: number): number {
    return this.view.getUint8(o);
  }
  u32(o: number): number {
    return this.view.getUint32(o, true);
  }
  header(field: keyof typeof Header): number {
    return this.u32(Header[field]);
  }
  stringBytes(ref: number): Uint8Array {
    const at = this.header('stringOffset') + ref;
    const len = this.u32(at);
    return this.bytes.subarray(at + 4, at + 4 + len);
  }
  string(ref: number): string {
    return decoder.decode(this.stringBytes(ref));
  }
  ref(i: number): number {
    return this.u32(this.header('refOffset') + 4 * i);
  }
}

function limit(message: string): never {
  throw new LimitError(message);
}

function checkKey(bytes: Uint8Array, what: string): Uint8Array {
  if (bytes.length >= MapLimit.pathMax)
    limit(`${what} is ${bytes.length} bytes; the BPF plane matches at most 255`);
  return bytes;
}

function encodeWith(
  table: RuleTable,
  t: TableRecords,
  slot: number,
  workloads: readonly KeyedWorkload[],
): EncodedState {
  const entries: MapEntry[] = [];
  const ruleCount = t.header('ruleCount');
  if (ruleCount > MapLimit.maxRules) limit(`${ruleCount} rules; the BPF plane holds ${MapLimit.maxRules}`);
  if (t.header('policyCount') > MapLimit.policyWords * 64)
    limit(`${t.header('policyCount')} policies; the BPF plane holds ${MapLimit.policyWords * 64}`);
  if (workloads.length > MapLimit.maxWorkloads)
    limit(`${workloads.length} workloads; the BPF plane holds ${MapLimit.maxWorkloads}`);

  // Sources: one id per distinct (kind, value, recursive) record.
  const sourceIdByRecord = new Map<string, number>();
  const idsByString = new Map<string, SourceIds>();
  const sourceIdsOfRule = (r: number): number[] => {
    const at = t.header('ruleOffset') + r * RULE_RECORD_SIZE;
    const start = t.u32(at + 16);
    const count = t.u32(at + 20);
    const ids: number[] = [];
    for (let i = start; i < start + count; i++) {
      const sat = t.header('sourceOffset') + i * SOURCE_RECORD_SIZE;
      const value = t.string(t.u32(sat));
      const kind = t.u8(sat + 4);
      const recursive = t.u8(sat + 5) === 1;
      const recordKey = `${kind}:${recursive ? 1 : 0}:${value}`;
      let id = sourceIdByRecord.get(recordKey);
      if (id === undefined) {
        id = sourceIdByRecord.size;
        if (id >= MapLimit.sourceWords * 64)
          limit(`more than ${MapLimit.sourceWords * 64} distinct fromSource entries`);
        sourceIdByRecord.set(recordKey, id);
        checkKey(new TextEncoder().encode(value), `fromSource ${JSON.stringify(value)}`);
        const ids = idsByString.get(value) ?? { pathId: -1, dirId: -1, dirRecursiveId: -1 };
        if (kind === SourceCode.path) ids.pathId = id;
        else if (recursive) ids.dirRecursiveId = id;
        else ids.dirId = id;
        idsByString.set(value, ids);
      }
      ids.push(id);
    }
    return ids;
  };

  // Rules.
  const rules: RuleInfo[] = [];
  const ruleSources: number[][] = [];
  let patterns = 0;
  for (let r = 0; r < ruleCount; r++) {
    const at = t.header('ruleOffset') + r * RULE_RECORD_SIZE;
    const policy = t.u32(at);
    const matcher = t.u8(at + 5);
    const sources = sourceIdsOfRule(r);
    ruleSources.push(sources);
    let pattern = 0;
    if (matcher === MatcherCode.pattern) {
      const glob = t.stringBytes(t.u32(at + 8));
      const automaton = buildGlobAutomaton(glob);
      if (automaton === null)
        limit(
          `rule ${r}: pattern ${JSON.stringify(decoder.decode(glob))} has more than ${MapLimit.maxPatternTokens} tokens`,
        );
      if (patterns >= MapLimit.maxPatterns) limit(`more than ${MapLimit.maxPatterns} pattern rules`);
      pattern = patterns++;
      entries.push([
        'rt_patterns',
        toHex(encodeArrayIndex(slot, MapLimit.maxPatterns, pattern)),
        toHex(encodePattern(automaton)),
      ]);
    }
    const rule: MapRule = {
      policy,
      cls: t.u8(at + 4),
      matcher,
      action: t.u8(at + 6),
      flags: (t.u8(at + 7) & 0x7f) | (sources.length > 0 ? FLAG_SOURCES : 0),
      pattern,
      sources,
    };
    entries.push(['rt_rules', toHex(encodeArrayIndex(slot, MapLimit.maxRules, r)), toHex(encodeRule(rule))]);
    const tags: string[] = [];
    for (let i = 0; i < t.u32(at + 36); i++) tags.push(t.string(t.ref(t.u32(at + 32) + i)));
    rules.push({
      policyName: table.getPolicy(policy).name,
      severity: t.u32(at + 24),
      message: t.string(t.u32(at + 28)),
      tags,
    });
  }

  // Index nodes (kinds 1..6; the allow-source kinds are replaced by source bit sets).
  const nodeCount = t.header('nodeCount');
  let indexEntries = 0;
  let features = 0;
  for (let n = 0; n < nodeCount; n++) {
    const at = t.header('nodeOffset') + n * NODE_RECORD_SIZE;
    const kind = t.u8(at + 13);
    if (kind < NodeKind.path || kind > NodeKind.capability) continue;
    if (kind === NodeKind.execname) features |= Feature.Execname;
    if (kind === NodeKind.patternDirectory) features |= Feature.Patterns;
    const key = checkKey(t.stringBytes(t.u32(at + 8)), `key ${JSON.stringify(t.string(t.u32(at + 8)))}`);
    const start = t.u32(at + 16);
    const count = t.u32(at + 20);
    if (count > MapLimit.maxRefs)
      limit(
        `${count} rules share the key ${JSON.stringify(decoder.decode(key))}; the BPF plane lists ${MapLimit.maxRefs}`,
      );
    const list: number[] = [];
    for (let i = start; i < start + count; i++) list.push(t.ref(i));
    if (++indexEntries > MapLimit.maxIndex) limit(`more than ${MapLimit.maxIndex} index nodes`);
    entries.push([
      'rt_index',
      toHex(encodeIndexKey(slot, t.u8(at + 12), kind, key)),
      toHex(encodeIndexValue(list)),
    ]);
  }

  for (const [value, ids] of idsByString) {
    entries.push([
      'rt_sources',
      toHex(encodeSourceKey(slot, new TextEncoder().encode(value))),
      toHex(encodeSourceValue(ids)),
    ]);
  }

  // Workloads.
  workloads.forEach((w, wid) => {
    const selected = new Set(w.policies);
    let lpUnscoped = 0;
    for (const p of selected) {
      if (p >= t.header('policyCount')) limit(`workload ${w.name}: policy index ${p} is not in the table`);
      lpUnscoped |= t.u8(t.header('policyOffset') + p * POLICY_RECORD_SIZE + 9);
    }
    const lpSources: [number[], number[], number[], number[]] = [[], [], [], []];
    let hasSources = false;
    for (let r = 0; r < ruleCount; r++) {
      const at = t.header('ruleOffset') + r * RULE_RECORD_SIZE;
      const sources = ruleSources[r] ?? [];
      if (!selected.has(t.u32(at)) || sources.length === 0) continue;
      hasSources = true;
      const cls = t.u8(at + 4) & 3;
      if (t.u8(at + 6) === 0) lpSources[cls as 0 | 1 | 2 | 3].push(...sources);
    }
    const block = (p: Posture): boolean => p === Posture.Block;
    entries.push([
      'rt_workloads',
      toHex(encodeWorkloadKey(slot, w.keyKind, w.keyId)),
      toHex(
        encodeWorkload({
          wid,
          blockPosture: [
            block(getPosture(w.postures, Operation.Process)),
            block(getPosture(w.postures, Operation.File)),
            block(getPosture(w.postures, Operation.Network)),
            block(getPosture(w.postures, Operation.Capabilities)),
          ],
          lpUnscoped,
          hasSources,
          features,
          policies: [...selected],
          lpSources,
        }),
      ),
    ]);
    entries.push([
      'rt_wnames',
      toHex(encodeArrayIndex(slot, MapLimit.maxWorkloads, wid)),
      toHex(encodeWorkloadName(w.name)),
    ]);
  });
  return { entries, ruleCount, rules };
}

/** Encodes a state into the entries of `slot`. */
export function encodeState(
  table: Uint8Array,
  slot: number,
  workloads: readonly KeyedWorkload[],
): EncodeResult {
  const read = readRuleTable(table);
  if (!read.ok) return { ok: false, error: { code: 'BPF_TABLE_INVALID', message: read.error } };
  try {
    return { ok: true, state: encodeWith(read.table, new TableRecords(table), slot, workloads) };
  } catch (e) {
    if (e instanceof LimitError) return { ok: false, error: { code: 'BPF_LIMIT', message: e.message } };
    throw e;
  }
}
