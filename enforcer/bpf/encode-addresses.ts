// Address rules (network.matchAddresses) for the BPF-LSM plane: the rt_addr LPM trie and the rt_addr_wl
// least-permissive sources (enforcer/bpf/rtctl-addr-maps.h, docs/bpf-lsm.md "Address rules"). Each CIDR
// block of the table's address rules becomes one trie entry listing every address rule whose block
// contains it, ascending by rule index (precedence order): the kernel's longest match then holds every
// rule that can match a destination. Blocks are parsed by the one CIDR module (compiler/net/cidr.ts) and
// sockets named with the cgroup network plane's codes (enforcer/network/net-map-layout.ts).
import { Action } from '../../compiler/ir/rule-set.js';
import { maskAddress, parseCidr, type IpFamily } from '../../compiler/net/cidr.js';
import {
  ACTION_CODES,
  CLASS_CODES,
  MatcherCode,
  getIpProtocolName,
} from '../../compiler/rule-table/rule-table-format.js';
import type { RuleTableRecords } from '../../compiler/rule-table/rule-table-records.js';
import { NetProto } from '../network/net-map-layout.js';
import { MapLimit, encodeArrayIndex, toHex } from './map-layout.js';

/** Limits and sizes of rtctl-addr-maps.h (test/enforcer/bpf/encode-addresses.test.ts compares them). */
export const AddrLimit = {
  blocks: 4096,
  refs: 64,
  ports: 8,
  keyBits: 32,
  resourceLength: 38,
} as const;
export const RT_ADDR_KEY_SIZE = 24;
export const RT_ADDR_REF_SIZE = 24;
export const RT_ADDR_VAL_SIZE = 8 + AddrLimit.refs * RT_ADDR_REF_SIZE;
export const RT_ADDR_WL_SIZE = 8 * MapLimit.sourceWords;

/** One address rule as the hooks check it. */
export interface AddrRef {
  rule: number;
  /** 0 any, else a NetProto code (NetProto.never for sctp and icmpv6: no socket is named so). */
  proto: number;
  ports: readonly number[];
}

/** rt_addr key of a block: prefix length after slot and family, network address zero padded. */
export function encodeAddrKey(
  slot: number,
  family: IpFamily,
  prefix: number,
  network: Uint8Array,
): Uint8Array {
  const b = new Uint8Array(RT_ADDR_KEY_SIZE);
  const v = new DataView(b.buffer);
  v.setUint32(0, AddrLimit.keyBits + prefix, true);
  v.setUint8(4, slot);
  v.setUint8(5, family);
  b.set(network, 8);
  return b;
}

/** rt_addr value: count, then the refs. */
export function encodeAddrValue(refs: readonly AddrRef[]): Uint8Array {
  const b = new Uint8Array(RT_ADDR_VAL_SIZE);
  const v = new DataView(b.buffer);
  v.setUint32(0, refs.length, true);
  refs.forEach((r, i) => {
    const at = 8 + i * RT_ADDR_REF_SIZE;
    v.setUint32(at, r.rule, true);
    v.setUint8(at + 4, r.proto);
    v.setUint8(at + 5, r.ports.length);
    r.ports.forEach((p, j) => v.setUint16(at + 6 + 2 * j, p, true));
  });
  return b;
}

/** rt_addr_wl value: the least-permissive source ids of connects and sends. */
export function encodeAddrWorkload(sourceIds: readonly number[]): Uint8Array {
  const b = new Uint8Array(RT_ADDR_WL_SIZE);
  for (const id of sourceIds) b[id >>> 3] = (b[id >>> 3] ?? 0) | (1 << (id & 7));
  return b;
}

/** The socket-name code an address rule's protocol asks for. */
export function getAddrProtoCode(ipProtocol: number): number {
  const name = getIpProtocolName(ipProtocol) ?? '';
  if (name === '') return 0;
  return (NetProto as Record<string, number>)[name] ?? NetProto.never;
}

interface Block {
  family: IpFamily;
  prefix: number;
  bytes: Uint8Array;
  rules: AddrRef[];
}

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}

/** The table's address rules grouped by block (in first-seen order; each block's rules ascending). */
export function collectAddressBlocks(
  table: RuleTableRecords,
  limit: (message: string) => never,
): Map<string, Block> {
  const blocks = new Map<string, Block>();
  table.rules.forEach((r, index) => {
    if (r.matcher !== MatcherCode.address || r.cls !== CLASS_CODES.Network) return;
    const cidr = parseCidr(r.value);
    if (!cidr.ok) limit(`rule ${index}: address ${JSON.stringify(r.value)} is not a CIDR block`);
    if (r.ports.length > AddrLimit.ports)
      limit(`rule ${index}: ${r.ports.length} ports on ${r.value}; the BPF plane checks ${AddrLimit.ports}`);
    let block = blocks.get(cidr.value.canonical);
    if (block === undefined) {
      block = { family: cidr.value.family, prefix: cidr.value.prefix, bytes: cidr.value.bytes, rules: [] };
      blocks.set(cidr.value.canonical, block);
    }
    block.rules.push({ rule: index, proto: getAddrProtoCode(r.protocol), ports: [...r.ports] });
  });
  if (blocks.size > AddrLimit.blocks)
    limit(`${blocks.size} distinct address blocks; the BPF plane holds ${AddrLimit.blocks}`);
  return blocks;
}

/** Every address rule whose block contains `inner` (its own included), ascending by rule index. */
export function listContainingRules(blocks: Iterable<Block>, inner: Block): AddrRef[] {
  const out: AddrRef[] = [];
  for (const b of blocks) {
    if (b.family !== inner.family || b.prefix > inner.prefix) continue;
    if (!sameBytes(maskAddress(inner.bytes, b.prefix), b.bytes)) continue;
    out.push(...b.rules);
  }
  return out.sort((x, y) => x.rule - y.rule);
}

/** A workload as the address maps need it. */
export interface AddrWorkload {
  name: string;
  policies: readonly number[];
}

/**
 * The rt_addr and rt_addr_wl entries of one slot. `ruleSources` holds each rule's source ids as the
 * slot's rt_rules records carry them; `limit` throws the encoder's limit error.
 */
export function encodeAddressEntries(
  table: RuleTableRecords,
  slot: number,
  ruleSources: readonly (readonly number[])[],
  workloads: readonly AddrWorkload[],
  limit: (message: string) => never,
): [map: string, keyHex: string, valueHex: string][] {
  const entries: [string, string, string][] = [];
  const blocks = collectAddressBlocks(table, limit);
  for (const [canonical, block] of blocks) {
    const refs = listContainingRules(blocks.values(), block);
    if (refs.length > AddrLimit.refs)
      limit(
        `${refs.length} address rules apply to destinations in ${canonical}; the BPF plane lists ${AddrLimit.refs}`,
      );
    const network = new Uint8Array(16);
    network.set(block.bytes);
    entries.push([
      'rt_addr',
      toHex(encodeAddrKey(slot, block.family, block.prefix, network)),
      toHex(encodeAddrValue(refs)),
    ]);
  }
  workloads.forEach((w, wid) => {
    const selected = new Set(w.policies);
    const ids: number[] = [];
    table.rules.forEach((r, index) => {
      if (r.matcher !== MatcherCode.address || r.action !== ACTION_CODES[Action.Allow]) return;
      if (selected.has(r.policy)) ids.push(...(ruleSources[index] ?? []));
    });
    entries.push([
      'rt_addr_wl',
      toHex(encodeArrayIndex(slot, MapLimit.maxWorkloads, wid)),
      toHex(encodeAddrWorkload(ids)),
    ]);
  });
  return entries;
}

/** A decoded event resource of a connect or send (RT_ADDR_RESOURCE_LEN in rtctl-addr-maps.h). */
export interface Destination {
  family: IpFamily;
  bytes: Uint8Array;
  port: number;
  /** The socket's name: tcp, udp, icmp, raw. */
  protocol: string;
}

const RESOURCE = /^@([46])([0-9a-f]{32})([0-9a-f]{4})([a-z]{1,4})$/;

/** Decodes the resource the socket_connect and socket_sendmsg hooks write; undefined for any other. */
export function decodeDestination(resource: string): Destination | undefined {
  const m = RESOURCE.exec(resource);
  if (m === null) return undefined;
  const family = m[1] === '6' ? 6 : 4;
  const all = Buffer.from(m[2] ?? '', 'hex');
  return {
    family,
    bytes: Uint8Array.from(all.subarray(0, family === 4 ? 4 : 16)),
    port: parseInt(m[3] ?? '0', 16),
    protocol: m[4] ?? '',
  };
}
