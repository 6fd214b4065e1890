// Turns one enforcement state (the rule table's records + the node's workloads) into the BPF map
// entries of one slot (docs/bpf-lsm.md "Maps"). Pure: the index nodes, rules and sources are the
// table's own records (docs/rule-table.md), so the programs walk the same lists as every reader.
// A table beyond the maps' limits is an error result naming the limit, never a silent drop.
import { Action, Operation } from '../../compiler/ir/rule-set.js';
import {
  ACTION_CODES,
  MatcherCode,
  NodeKind,
  SourceCode,
} from '../../compiler/rule-table/rule-table-format.js';
import type { RuleTableRecords } from '../../compiler/rule-table/rule-table-records.js';
import { getPosture, Posture } from '../../compiler/model/posture.js';
import type { Postures } from '../data-plane.js';
import { encodeAddressEntries } from './encode-addresses.js';
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
  toWireHex,
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
  code: 'BPF_LIMIT';
  message: string;
}

export type EncodeResult = { ok: true; state: EncodedState } | { ok: false; error: EncodeError };

const encoder = new TextEncoder();

class LimitError extends Error {}

function limit(message: string): never {
  throw new LimitError(message);
}

function checkKey(bytes: Uint8Array, what: string): Uint8Array {
  if (bytes.length >= MapLimit.pathMax)
    limit(`${what} is ${bytes.length} bytes; the BPF plane matches at most 255`);
  return bytes;
}

function encodeWith(
  table: RuleTableRecords,
  slot: number,
  workloads: readonly KeyedWorkload[],
): EncodedState {
  const entries: MapEntry[] = [];
  const ruleCount = table.rules.length;
  const policyCount = table.policies.length;
  if (ruleCount > MapLimit.maxRules) limit(`${ruleCount} rules; the BPF plane holds ${MapLimit.maxRules}`);
  if (policyCount > MapLimit.policyWords * 64)
    limit(`${policyCount} policies; the BPF plane holds ${MapLimit.policyWords * 64}`);
  if (workloads.length > MapLimit.maxWorkloads)
    limit(`${workloads.length} workloads; the BPF plane holds ${MapLimit.maxWorkloads}`);

  // Sources: one id per distinct (kind, value, recursive) record.
  const sourceIdByRecord = new Map<string, number>();
  const idsByString = new Map<string, SourceIds>();
  const sourceIdsOfRule = (rule: RuleTableRecords['rules'][number]): number[] => {
    const ids: number[] = [];
    for (const { value, kind, recursive } of rule.sources) {
      const recordKey = `${kind}:${recursive ? 1 : 0}:${value}`;
      let id = sourceIdByRecord.get(recordKey);
      if (id === undefined) {
        id = sourceIdByRecord.size;
        if (id >= MapLimit.sourceWords * 64)
          limit(`more than ${MapLimit.sourceWords * 64} distinct fromSource entries`);
        sourceIdByRecord.set(recordKey, id);
        checkKey(encoder.encode(value), `fromSource ${JSON.stringify(value)}`);
        const known = idsByString.get(value) ?? { pathId: -1, dirId: -1, dirRecursiveId: -1 };
        if (kind === SourceCode.path) known.pathId = id;
        else if (recursive) known.dirRecursiveId = id;
        else known.dirId = id;
        idsByString.set(value, known);
      }
      ids.push(id);
    }
    return ids;
  };

  // Rules.
  const rules: RuleInfo[] = [];
  const ruleSources: number[][] = [];
  let patterns = 0;
  table.rules.forEach((record, r) => {
    const sources = sourceIdsOfRule(record);
    ruleSources.push(sources);
    let pattern = 0;
    if (record.matcher === MatcherCode.pattern) {
      const automaton = buildGlobAutomaton(encoder.encode(record.value));
      if (automaton === null)
        limit(
          `rule ${r}: pattern ${JSON.stringify(record.value)} has more than ${MapLimit.maxPatternTokens} tokens`,
        );
      if (patterns >= MapLimit.maxPatterns) limit(`more than ${MapLimit.maxPatterns} pattern rules`);
      pattern = patterns++;
      entries.push([
        'rt_patterns',
        toWireHex(encodeArrayIndex(slot, MapLimit.maxPatterns, pattern)),
        toWireHex(encodePattern(automaton)),
      ]);
    }
    const rule: MapRule = {
      policy: record.policy,
      cls: record.cls,
      matcher: record.matcher,
      action: record.action,
      flags: (record.flags & 0x7f) | (sources.length > 0 ? FLAG_SOURCES : 0),
      pattern,
      sources,
    };
    entries.push([
      'rt_rules',
      toWireHex(encodeArrayIndex(slot, MapLimit.maxRules, r)),
      toWireHex(encodeRule(rule)),
    ]);
    rules.push({
      policyName: table.policies[record.policy]?.name ?? '',
      severity: record.severity,
      message: record.message,
      tags: [...record.tags],
    });
  });

  // Index nodes (kinds 1..6; the allow-source kinds are replaced by source bit sets).
  let indexEntries = 0;
  let features = 0;
  for (const node of table.nodes) {
    const kind = node.kind;
    if (kind < NodeKind.path || kind > NodeKind.capability) continue;
    if (kind === NodeKind.execname) features |= Feature.Execname;
    if (kind === NodeKind.patternDirectory) features |= Feature.Patterns;
    const key = checkKey(encoder.encode(node.key), `key ${JSON.stringify(node.key)}`);
    if (node.rules.length > MapLimit.maxRefs)
      limit(
        `${node.rules.length} rules share the key ${JSON.stringify(node.key)}; the BPF plane lists ${MapLimit.maxRefs}`,
      );
    if (++indexEntries > MapLimit.maxIndex) limit(`more than ${MapLimit.maxIndex} index nodes`);
    entries.push([
      'rt_index',
      toWireHex(encodeIndexKey(slot, node.cls, kind, key)),
      toWireHex(encodeIndexValue(node.rules)),
    ]);
  }

  for (const [value, ids] of idsByString) {
    entries.push([
      'rt_sources',
      toWireHex(encodeSourceKey(slot, encoder.encode(value))),
      toWireHex(encodeSourceValue(ids)),
    ]);
  }

  // Workloads.
  workloads.forEach((w, wid) => {
    const selected = new Set(w.policies);
    let lpUnscoped = 0;
    for (const p of selected) {
      const policy = table.policies[p];
      if (policy === undefined) limit(`workload ${w.name}: policy index ${p} is not in the table`);
      lpUnscoped |= policy.allowUnscoped;
    }
    const lpSources: [number[], number[], number[], number[]] = [[], [], [], []];
    let hasSources = false;
    table.rules.forEach((record, r) => {
      const sources = ruleSources[r] ?? [];
      if (!selected.has(record.policy) || sources.length === 0) return;
      hasSources = true;
      const cls = record.cls & 3;
      // Allow address rules put only connects and sends in least-permissive mode (rt_addr_wl).
      if (record.action === ACTION_CODES[Action.Allow] && record.matcher !== MatcherCode.address)
        lpSources[cls as 0 | 1 | 2 | 3].push(...sources);
    });
    const block = (p: Posture): boolean => p === Posture.Block;
    entries.push([
      'rt_workloads',
      toWireHex(encodeWorkloadKey(slot, w.keyKind, w.keyId)),
      toWireHex(
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
      toWireHex(encodeArrayIndex(slot, MapLimit.maxWorkloads, wid)),
      toWireHex(encodeWorkloadName(w.name)),
    ]);
  });
  entries.push(...encodeAddressEntries(table, slot, ruleSources, workloads, limit));
  return { entries, ruleCount, rules };
}

/** Encodes a state into the entries of `slot`, from the table's records (never from its bytes). */
export function encodeState(
  table: RuleTableRecords,
  slot: number,
  workloads: readonly KeyedWorkload[],
): EncodeResult {
  try {
    return { ok: true, state: encodeWith(table, slot, workloads) };
  } catch (e) {
    if (e instanceof LimitError) return { ok: false, error: { code: 'BPF_LIMIT', message: e.message } };
    throw e;
  }
}
