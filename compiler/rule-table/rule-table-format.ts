// Constants of the binary rule table (docs/rule-table.md): magic, version, record sizes and field offsets,
// codes, and the FNV-1a 64 hash the index uses. Shared by the builder and the readers. The C readers take
// the same numbers from rule-table-layout.h (this folder); a test compiles that header and compares.
import { Action, Operation } from '../ir/rule-set.js';

/** `"RTRULES\0"`. */
export const MAGIC = Uint8Array.from([0x52, 0x54, 0x52, 0x55, 0x4c, 0x45, 0x53, 0x00]);
export const VERSION_MAJOR = 2;
export const VERSION_MINOR = 0;

export const HEADER_SIZE = 128;
export const POLICY_RECORD_SIZE = 40;
export const LABEL_RECORD_SIZE = 12;
export const RULE_RECORD_SIZE = 64;
export const SOURCE_RECORD_SIZE = 8;
export const NODE_RECORD_SIZE = 24;
export const MIN_BUCKETS = 16;
/** Every section starts at a multiple of this from the start of the table. */
export const SECTION_ALIGN = 8;

/** Header field offsets. */
export const Header = {
  versionMajor: 8,
  versionMinor: 10,
  headerSize: 12,
  fileSize: 16,
  flags: 20,
  stringOffset: 24,
  stringSize: 28,
  policyOffset: 32,
  policyCount: 36,
  labelOffset: 40,
  labelCount: 44,
  ruleOffset: 48,
  ruleCount: 52,
  sourceOffset: 56,
  sourceCount: 60,
  refOffset: 64,
  refCount: 68,
  nodeOffset: 72,
  nodeCount: 76,
  bucketOffset: 80,
  bucketCount: 84,
  defaultPosture: 88,
} as const;

/** Policy record field offsets. */
export const PolicyField = {
  name: 0,
  namespace: 4,
  kind: 8,
  allowUnscoped: 9,
  allowScoped: 10,
  labelStart: 12,
  labelCount: 16,
  file: 20,
  line: 24,
  expressionGroups: 28,
} as const;

/** Label record field offsets. */
export const LabelField = { key: 0, value: 4, op: 8, group: 10 } as const;

/** Rule record field offsets. */
export const RuleField = {
  policy: 0,
  cls: 4,
  matcher: 5,
  action: 6,
  flags: 7,
  value: 8,
  depth: 12,
  protocol: 14,
  sourceStart: 16,
  sourceCount: 20,
  severity: 24,
  message: 28,
  tagsStart: 32,
  tagsCount: 36,
  argsStart: 40,
  argsCount: 44,
  file: 48,
  line: 52,
  column: 56,
  pointer: 60,
} as const;

/** Source record field offsets. */
export const SourceField = { value: 0, kind: 4, recursive: 5 } as const;

/** Index node field offsets (`hash` is a u64: `hashLo` then `hashHi`). */
export const NodeField = {
  hashLo: 0,
  hashHi: 4,
  key: 8,
  cls: 12,
  kind: 13,
  refsStart: 16,
  refsCount: 20,
} as const;

/** Operation class codes. */
export const CLASS_CODES: Record<Operation, number> = {
  [Operation.Process]: 0,
  [Operation.File]: 1,
  [Operation.Network]: 2,
  [Operation.Capabilities]: 3,
};
export const CLASS_BY_CODE: readonly Operation[] = [
  Operation.Process,
  Operation.File,
  Operation.Network,
  Operation.Capabilities,
];

/** Action codes. */
export const ACTION_CODES: Record<Action, number> = {
  [Action.Allow]: 0,
  [Action.Audit]: 1,
  [Action.Block]: 2,
};
export const ACTION_BY_CODE: readonly Action[] = [Action.Allow, Action.Audit, Action.Block];

/** Matcher kind codes of rule records. */
export const MatcherCode = {
  path: 1,
  execname: 2,
  directory: 3,
  pattern: 4,
  protocol: 5,
  capability: 6,
  address: 7,
} as const;
export type MatcherCode = (typeof MatcherCode)[keyof typeof MatcherCode];

/** Rule flag bits. */
export const RuleFlag = { recursive: 1, readOnly: 2, ownerOnly: 4, pts: 8, hasArgs: 16 } as const;

/** Label record operators. */
export const LabelOp = { equals: 0, in: 1, notIn: 2 } as const;

/** Source record kinds. */
export const SourceCode = { path: 1, directory: 3 } as const;

/** Index node kinds. */
export const NodeKind = {
  path: 1,
  execname: 2,
  directory: 3,
  patternDirectory: 4,
  protocol: 5,
  capability: 6,
  allowSourcePath: 7,
  allowSourceDirectory: 8,
  address: 9,
  allowAddressSourcePath: 10,
  allowAddressSourceDirectory: 11,
} as const;
export type NodeKind = (typeof NodeKind)[keyof typeof NodeKind];

/**
 * Bit of a policy's `allow_unscoped`/`allow_scoped` set when it has an Allow address rule: connects and sends
 * are then least-permissive (the Network class bit says the same for the creation of sockets).
 */
export const ALLOW_ADDRESS_BIT = 1 << 4;

/** IP protocol numbers of address rules (`protocol` field of an address rule record; 0: any). */
export const IP_PROTOCOL_NUMBERS: Readonly<Record<string, number>> = {
  icmp: 1,
  tcp: 6,
  udp: 17,
  icmpv6: 58,
  sctp: 132,
};
/** The protocol name of an IP protocol number of an address rule ('' for 0). */
export function getIpProtocolName(n: number): string | undefined {
  if (n === 0) return '';
  return Object.keys(IP_PROTOCOL_NUMBERS).find((k) => IP_PROTOCOL_NUMBERS[k] === n);
}

/** Policy kind codes. */
export const POLICY_KIND_CODES = { RuntimePolicy: 0, RuntimeHostPolicy: 1 } as const;

/** A 64-bit hash as two unsigned 32-bit halves. */
export interface Hash64 {
  lo: number;
  hi: number;
}

/** FNV-1a 64 offset basis and prime (as in rule-table-layout.h). */
export const FNV_OFFSET = 0xcbf29ce484222325n;
export const FNV_PRIME = 0x100000001b3n;
const FNV_OFFSET_LO = 0x84222325;
const FNV_OFFSET_HI = 0xcbf29ce4;
const TWO_32 = 0x1_0000_0000;

function mixByte(h: Hash64, byte: number): void {
  const lo = (h.lo ^ byte) >>> 0;
  // h * 0x100000001b3 = h * 0x1b3 + (h << 40), modulo 2^64, in 32-bit halves.
  const loProduct = lo * 0x1b3;
  const carry = Math.floor(loProduct / TWO_32);
  h.hi = (h.hi * 0x1b3 + carry + ((lo << 8) >>> 0)) >>> 0;
  h.lo = loProduct >>> 0;
}

/** FNV-1a 64 of a byte string. */
export function hashFnv1a64(bytes: Uint8Array): Hash64 {
  const h: Hash64 = { lo: FNV_OFFSET_LO, hi: FNV_OFFSET_HI };
  for (const b of bytes) mixByte(h, b);
  return h;
}

/** FNV-1a 64 over `[classCode, kind, ...key]`. */
export function hashNodeKey(classCode: number, kind: number, key: Uint8Array): Hash64 {
  const h: Hash64 = { lo: FNV_OFFSET_LO, hi: FNV_OFFSET_HI };
  mixByte(h, classCode);
  mixByte(h, kind);
  for (const b of key) mixByte(h, b);
  return h;
}
