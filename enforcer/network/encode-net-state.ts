// Encodes an EnforcementState for the cgroup network programs (rtctl-net.bpf.c). What depends only on the
// workload and the socket's names (one code per set of names, NET_SOCKET_NAMES) is decided here with the
// rule table's own walk (compiler/rule-table/), for the creation of sockets and for connects and sends no
// address rule matches; the address rules of each
// workload go to rtn_addr by (family, prefix, network), in precedence order. Rules with fromSource or pts are
// left out: the cgroup programs do not see the acting executable or its terminal, and the capability table
// (compiler/enforcement/) says those network rules are not enforced on this plane.
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
} from '../../compiler/rule-table/rule-table-format.js';
import type { RuleTableRecords } from '../../compiler/rule-table/rule-table-records.js';
import type { WorkloadEnforcement } from '../data-plane.js';
import {
  NET_SOCKET_NAMES,
  NetKind,
  NetLimit,
  NetOp,
  NetProto,
  encodeAddrKey,
  encodeAddrValue,
  encodeProtoKey,
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
  entries: NetMapEntry[];
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
): NetVerdict {
  // A socket with two names (a raw ICMP socket) gets the one decision over both, as the oracle takes it.
  const op = {
    operation: Operation.Network,
    resource: names[0] ?? '',
    socketNames: names,
    write: false,
    owner: false,
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
  for (const [code, names] of Object.entries(NET_SOCKET_NAMES)) {
    for (const [op, connect] of [
      [NetOp.socket, false],
      [NetOp.connect, true],
    ] as const) {
      const v = toVerdict(table, set, w, names, connect);
      if (v.kind !== NetKind.none)
        entries.push(['rtn_proto', encodeProtoKey(wid, Number(code), op), encodeVerdict(v)]);
    }
  }
  const blocks = new Map<
    string,
    { family: 4 | 6; prefix: number; bytes: Uint8Array; list: NetCandidate[] }
  >();
  records.rules.forEach((r, index) => {
    if (r.matcher !== MatcherCode.address || r.cls !== CLASS_CODES.Network) return;
    if (!w.policies.includes(r.policy) || r.sources.length > 0 || (r.flags & RuleFlag.pts) !== 0) return;
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
    block.list.push({ rule: index, action: r.action, proto: protoCode(r.protocol), ports: [...r.ports] });
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
  return { prefix4, prefix6, entries };
}
