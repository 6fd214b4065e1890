// Encodes an EnforcementState for the cgroup network programs (rtctl-net.bpf.c). What depends only on the
// workload and the socket's names (one code per set of names, NET_SOCKET_NAMES) is decided here with the
// rule table's own walk (compiler/rule-table/), for the creation of sockets and for connects and sends no
// address rule matches; the address rules of each
// workload go to rtn_addr by (family, prefix, network), in precedence order.
//
// Rules with fromSource or pts make the decision depend on the process: its class, the set of the workload's
// sources its executable matches (one bit each, rtn_src) and whether it has a terminal (RTN_CLS_PTS). The
// programs work the class out (rtctl-net.bpf.c process_class) only for workloads with such rules (flags); the
// verdicts are decided here per class, with the rule table's own walk run on one executable path of each class
// (representativePaths), so the programs decide exactly as the oracle does. Workloads without such rules keep
// the one verdict per protocol (class 0) and never name the executable.
import { Operation } from '../../compiler/ir/rule-set.js';
import { WorkloadKind } from '../../compiler/decide/decision-input.js';
import { parseCidr } from '../../compiler/net/cidr.js';
import type { PolicySet, RuleTable } from '../../compiler/rule-table/read-rule-table.js';
import {
  ACTION_CODES,
  MatcherCode,
  RuleFlag,
  getIpProtocolName,
  CLASS_CODES,
  SourceCode,
} from '../../compiler/rule-table/rule-table-format.js';
import type { RuleTableRecords } from '../../compiler/rule-table/rule-table-records.js';
import type { WorkloadEnforcement } from '../data-plane.js';
import {
  NET_CLASS_PTS,
  NET_SOCKET_NAMES,
  NetKind,
  NetLimit,
  NetOp,
  NetProto,
  NetWorkloadFlag,
  encodeAddrKey,
  encodeAddrValue,
  encodeProtoKey,
  encodeSrcKey,
  encodeSrcValue,
  encodeVerdict,
  type NetCandidate,
  type NetVerdict,
} from './net-map-layout.js';

/** A map entry for the loader: `update <map> <key> <value>`. */
export type NetMapEntry = [map: string, key: string, value: string];

/** What one workload needs in the maps. */
export interface EncodedNetWorkload {
  prefix4: number[];
  prefix6: number[];
  /** rtn_workload.flags (NetWorkloadFlag). */
  flags: number;
  entries: NetMapEntry[];
}

/** A distinct fromSource entry of a workload's network rules: an executable path, or a directory (ends in `/`). */
export interface NetSource {
  dir: boolean;
  value: string;
  recursive: boolean;
}

const sourceId = (s: { dir: boolean; value: string; recursive: boolean }): string =>
  `${s.dir ? (s.recursive ? 'r' : 'd') : 'p'}:${s.value}`;

/**
 * The class bits of an executable path, as the programs compute them from rtn_src: source i when it is that
 * path, or the path lies in its directory (directly, or at any depth when recursive).
 */
export function classOfPath(sources: readonly NetSource[], path: string): number {
  let cls = 0;
  const last = path.lastIndexOf('/');
  sources.forEach((s, i) => {
    const hit = !s.dir
      ? s.value === path
      : path.length > s.value.length &&
        path.startsWith(s.value) &&
        (s.recursive || last === s.value.length - 1);
    if (hit) cls |= 1 << i;
  });
  return cls >>> 0;
}

/**
 * One executable path of each class the sources can give (every class an absolute path can have): each source
 * path; for each directory a file in it and a file one level below; and a file in no source directory. A fresh
 * name (no source contains it) stands for "any other name".
 */
export function representativePaths(sources: readonly NetSource[]): string[] {
  let fresh = 'rtctl-other';
  while (sources.some((s) => s.value.includes(fresh))) fresh += '-x';
  const out = new Set<string>([`/${fresh}/${fresh}`]);
  for (const s of sources) {
    if (!s.dir) out.add(s.value);
    else {
      out.add(`${s.value}${fresh}`);
      out.add(`${s.value}${fresh}/${fresh}`);
    }
  }
  return [...out];
}

/** The plane cannot carry the state (a limit of its maps): said, never truncated. */
export class NetLimitError extends Error {
  readonly code = 'NETWORK_LIMIT';
}

/** The policy set of a workload from the indices the control plane computed. */
export function toPolicySet(records: RuleTableRecords, w: WorkloadEnforcement): PolicySet {
  const bits = new Uint8Array((records.policies.length + 7) >>> 3);
  let allowUnscoped = 0;
  for (const p of w.policies) {
    bits[p >>> 3] = (bits[p >>> 3] ?? 0) | (1 << (p & 7));
    allowUnscoped |= records.policies[p]?.allowUnscoped ?? 0;
  }
  return { bits, allowUnscoped, workloadKind: w.anchor.host ? WorkloadKind.Host : WorkloadKind.Container };
}

function toVerdict(
  table: RuleTable,
  set: PolicySet,
  w: WorkloadEnforcement,
  names: readonly string[],
  connect: boolean,
  process: { executable?: string; tty: boolean } = { tty: false },
): NetVerdict {
  // A socket with two names (a raw ICMP socket) gets the one decision over both, as the oracle takes it.
  const op = {
    operation: Operation.Network,
    resource: names[0] ?? '',
    socketNames: names,
    write: false,
    owner: false,
    tty: process.tty,
    ...(process.executable === undefined ? {} : { executable: process.executable }),
  };
  const rule = table.findDecidingRule(set, op);
  if (rule !== null) {
    const d = table.decide(set, op, w.postures);
    return { rule, action: d.alert === null ? 0 : ACTION_CODES[d.alert.Action], kind: NetKind.rule };
  }
  // A connect or send no address rule decides: the protocol rules, or least-permissive mode, where Allow
  // address rules count too (any address stands for "one no address rule matches").
  const lpOp = connect ? { ...op, address: '0.0.0.0', port: 0 } : op;
  if (!table.isLeastPermissive(set, lpOp)) return { rule: -1, action: 0, kind: NetKind.none };
  const block = w.postures.network === 'block';
  return { rule: -1, action: block ? ACTION_CODES.Block : ACTION_CODES.Audit, kind: NetKind.posture };
}

function protoCode(ipProtocol: number): number {
  const name = getIpProtocolName(ipProtocol) ?? '';
  if (name === '') return 0;
  return (NetProto as Record<string, number>)[name] ?? NetProto.never;
}

/** The entries of one workload, under the id `wid`. */
export function encodeNetWorkload(
  table: RuleTable,
  records: RuleTableRecords,
  w: WorkloadEnforcement,
  wid: number,
): EncodedNetWorkload {
  const set = toPolicySet(records, w);
  const entries: NetMapEntry[] = [];
  // The sources and terminals of the workload's network rules.
  const sources: NetSource[] = [];
  const bitOf = new Map<string, number>();
  let pts = false;
  for (const r of records.rules) {
    if (r.cls !== CLASS_CODES.Network || !w.policies.includes(r.policy)) continue;
    if ((r.flags & RuleFlag.pts) !== 0) pts = true;
    for (const src of r.sources) {
      const s = { dir: src.kind === SourceCode.directory, value: src.value, recursive: src.recursive };
      if (bitOf.has(sourceId(s))) continue;
      if (Buffer.byteLength(s.value) >= NetLimit.sourceBytes)
        throw new NetLimitError(
          `a network rule's fromSource ${s.value} is longer than ${NetLimit.sourceBytes - 1} bytes`,
        );
      if (sources.length >= NetLimit.sources)
        throw new NetLimitError(`a workload's network rules name more than ${NetLimit.sources} sources`);
      bitOf.set(sourceId(s), sources.length);
      sources.push(s);
    }
  }
  const flags = (sources.length > 0 ? NetWorkloadFlag.sources : 0) | (pts ? NetWorkloadFlag.pts : 0);
  // The classes and one executable path of each (undefined: a workload without sources).
  const classes = new Map<number, string | undefined>();
  for (const tty of pts ? [false, true] : [false]) {
    const paths: (string | undefined)[] = sources.length > 0 ? representativePaths(sources) : [undefined];
    for (const path of paths) {
      const cls = ((path === undefined ? 0 : classOfPath(sources, path)) | (tty ? NET_CLASS_PTS : 0)) >>> 0;
      if (!classes.has(cls)) classes.set(cls, path);
    }
    // A process whose executable the programs cannot name (rtn_counters: unnamed) matches no source.
    const none = tty ? NET_CLASS_PTS : 0;
    if (!classes.has(none)) classes.set(none, undefined);
  }
  for (const [cls, path] of classes) {
    const tty = (cls & NET_CLASS_PTS) !== 0;
    const process = path === undefined ? { tty } : { executable: path, tty };
    for (const [code, names] of Object.entries(NET_SOCKET_NAMES)) {
      for (const [op, connect] of [
        [NetOp.socket, false],
        [NetOp.connect, true],
      ] as const) {
        const v = toVerdict(table, set, w, names, connect, process);
        if (v.kind !== NetKind.none)
          entries.push(['rtn_proto', encodeProtoKey(wid, Number(code), op, cls), encodeVerdict(v)]);
      }
    }
  }
  const srcEntries = new Map<string, { exact: number; parent: number; ancestor: number }>();
  sources.forEach((s, i) => {
    let e = srcEntries.get(s.value);
    if (e === undefined) srcEntries.set(s.value, (e = { exact: 0, parent: 0, ancestor: 0 }));
    const bit = (1 << i) >>> 0;
    if (!s.dir) e.exact = (e.exact | bit) >>> 0;
    else {
      e.parent = (e.parent | bit) >>> 0;
      if (s.recursive) e.ancestor = (e.ancestor | bit) >>> 0;
    }
  });
  for (const [path, v] of srcEntries) entries.push(['rtn_src', encodeSrcKey(wid, path), encodeSrcValue(v)]);
  const blocks = new Map<
    string,
    { family: 4 | 6; prefix: number; bytes: Uint8Array; list: NetCandidate[] }
  >();
  records.rules.forEach((r, index) => {
    if (r.matcher !== MatcherCode.address || r.cls !== CLASS_CODES.Network) return;
    if (!w.policies.includes(r.policy)) return;
    const cidr = parseCidr(r.value);
    if (!cidr.ok) return;
    let block = blocks.get(r.value);
    if (block === undefined) {
      block = { family: cidr.value.family, prefix: cidr.value.prefix, bytes: cidr.value.bytes, list: [] };
      blocks.set(r.value, block);
    }
    if (block.list.length >= NetLimit.candidates)
      throw new NetLimitError(
        `more than ${NetLimit.candidates} address rules on ${r.value} for one workload`,
      );
    if (r.ports.length > NetLimit.ports)
      throw new NetLimitError(`an address rule on ${r.value} lists more than ${NetLimit.ports} ports`);
    let bits = 0;
    for (const src of r.sources)
      bits |=
        1 <<
        (bitOf.get(
          sourceId({ dir: src.kind === SourceCode.directory, value: src.value, recursive: src.recursive }),
        ) ?? 0);
    block.list.push({
      rule: index,
      action: r.action,
      proto: protoCode(r.protocol),
      ports: [...r.ports],
      pts: (r.flags & RuleFlag.pts) !== 0,
      sources: bits >>> 0,
    });
  });
  const prefixes = { 4: new Set<number>(), 6: new Set<number>() };
  for (const b of blocks.values()) {
    prefixes[b.family].add(b.prefix);
    const network = new Uint8Array(16);
    network.set(b.bytes);
    entries.push(['rtn_addr', encodeAddrKey(wid, b.family, b.prefix, network), encodeAddrValue(b.list)]);
  }
  const sorted = (s: Set<number>): number[] => [...s].sort((a, b) => b - a);
  const prefix4 = sorted(prefixes[4]);
  const prefix6 = sorted(prefixes[6]);
  if (prefix4.length > NetLimit.prefixes || prefix6.length > NetLimit.prefixes)
    throw new NetLimitError(`a workload's address rules use more than ${NetLimit.prefixes} prefix lengths`);
  return { prefix4, prefix6, flags, entries };
}
