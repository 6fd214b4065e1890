// The byte layout of the cgroup network plane's maps (enforcer/network/rtctl-net-maps.h): the same numbers
// as the C header, which test/enforcer/network/net-map-layout.test.ts compiles and compares. Encoders give
// the hex strings the loader writes with `update <map> <key> <value>`.

export const NetLimit = {
  workloads: 4096,
  prefixes: 16,
  candidates: 4,
  ports: 8,
  /** Distinct sources (fromSource paths and directories) of one workload's network rules. */
  sources: 31,
  /** A source's path, in bytes, with its terminating zero. */
  sourceBytes: 256,
} as const;

/** rtn_workload.flags (RTN_WL_*): the workload's rules name sources, a terminal. */
export const NetWorkloadFlag = { sources: 1, pts: 2 } as const;
/** The class bit of a process with a terminal (RTN_CLS_PTS); bit i is the workload's source i. */
export const NET_CLASS_PTS = 0x80000000;

/**
 * Socket codes of this plane (RTN_PROTO_*): one per set of socket names (docs/semantics.md "Socket names");
 * `rawIcmp` is a raw ICMP socket, named both `raw` and `icmp`. `never` is an address rule's protocol that no
 * socket of this plane is named by.
 */
export const NetProto = { tcp: 1, udp: 2, icmp: 3, raw: 4, rawIcmp: 5, never: 255 } as const;
/** The socket names each socket code stands for, the type's name first. */
export const NET_SOCKET_NAMES: Readonly<Record<number, readonly string[]>> = {
  [NetProto.tcp]: ['tcp'],
  [NetProto.udp]: ['udp'],
  [NetProto.icmp]: ['icmp'],
  [NetProto.raw]: ['raw'],
  [NetProto.rawIcmp]: ['raw', 'icmp'],
};

export const NetOp = { socket: 0, connect: 1, sendmsg: 2 } as const;
export const NetKind = { none: 0, rule: 1, posture: 2 } as const;

/** Sizes of the map records. */
export const NetSize = {
  workload: 44,
  protoKey: 12,
  verdict: 8,
  addrKey: 24,
  candidate: 28,
  addrValue: 116,
  srcKey: 260,
  srcValue: 12,
  eventExe: 328,
  event: 72,
  config: 40,
} as const;

function hex(bytes: Uint8Array): string {
  return Buffer.from(bytes).toString('hex');
}

/** Key of rtn_workloads: the cgroup id (u64). */
export function encodeWorkloadKey(cgroupId: bigint): string {
  const b = Buffer.alloc(8);
  b.writeBigUInt64LE(cgroupId);
  return hex(b);
}

/** struct rtn_workload. */
export function encodeWorkload(w: {
  wid: number;
  generation: number;
  prefix4: number[];
  prefix6: number[];
  flags?: number;
}): string {
  const b = Buffer.alloc(NetSize.workload);
  b.writeUInt32LE(w.wid, 0);
  b.writeUInt32LE(w.generation >>> 0, 4);
  b.writeUInt8(w.prefix4.length, 8);
  b.writeUInt8(w.prefix6.length, 9);
  b.writeUInt8(w.flags ?? 0, 10);
  w.prefix4.forEach((p, i) => b.writeUInt8(p, 12 + i));
  w.prefix6.forEach((p, i) => b.writeUInt8(p, 28 + i));
  return hex(b);
}

/**
 * struct rtn_config: the host cgroup, the host's pid namespace (nsfs device in the kernel's encoding, inode)
 * and the inode of its user namespace.
 */
export function encodeConfig(c: {
  hostCgroup: bigint;
  pidnsDev: bigint;
  pidnsIno: bigint;
  usernsIno: bigint;
  pidnsCheck: boolean;
}): string {
  const b = Buffer.alloc(NetSize.config);
  b.writeBigUInt64LE(c.hostCgroup, 0);
  b.writeBigUInt64LE(c.pidnsDev, 8);
  b.writeBigUInt64LE(c.pidnsIno, 16);
  b.writeBigUInt64LE(c.usernsIno, 24);
  b.writeUInt32LE(c.pidnsCheck ? 1 : 0, 32);
  return hex(b);
}

/** struct rtn_proto_key; `cls` the process's class (0 for a workload without sources or pts rules). */
export function encodeProtoKey(wid: number, proto: number, op: number, cls = 0): string {
  const b = Buffer.alloc(NetSize.protoKey);
  b.writeUInt32LE(wid, 0);
  b.writeUInt8(proto, 4);
  b.writeUInt8(op, 5);
  b.writeUInt32LE(cls >>> 0, 8);
  return hex(b);
}

/** A precomputed verdict: the deciding rule (-1: the posture), its action and kind. */
export interface NetVerdict {
  rule: number;
  action: number;
  kind: number;
}

/** struct rtn_verdict. */
export function encodeVerdict(v: NetVerdict): string {
  const b = Buffer.alloc(NetSize.verdict);
  b.writeInt32LE(v.rule, 0);
  b.writeUInt8(v.action, 4);
  b.writeUInt8(v.kind, 5);
  return hex(b);
}

/** struct rtn_addr_key. */
export function encodeAddrKey(wid: number, family: 4 | 6, prefix: number, network: Uint8Array): string {
  const b = Buffer.alloc(NetSize.addrKey);
  b.writeUInt32LE(wid, 0);
  b.writeUInt8(family, 4);
  b.writeUInt8(prefix, 5);
  Buffer.from(network).copy(b, 8);
  return hex(b);
}

/** One address rule of a block: struct rtn_candidate. */
export interface NetCandidate {
  rule: number;
  action: number;
  proto: number;
  ports: number[];
  /** Matches only a process with a terminal. */
  pts?: boolean;
  /** The source bits of the rule's fromSource (0 or absent: any executable). */
  sources?: number;
}

/** struct rtn_addr_value. */
export function encodeAddrValue(candidates: readonly NetCandidate[]): string {
  const b = Buffer.alloc(NetSize.addrValue);
  b.writeUInt32LE(candidates.length, 0);
  candidates.forEach((c, i) => {
    const at = 4 + i * NetSize.candidate;
    b.writeInt32LE(c.rule, at);
    b.writeUInt8(c.action, at + 4);
    b.writeUInt8(c.proto, at + 5);
    b.writeUInt8(c.ports.length, at + 6);
    b.writeUInt8(c.pts === true ? 1 : 0, at + 7);
    c.ports.forEach((p, j) => b.writeUInt16LE(p, at + 8 + 2 * j));
    b.writeUInt32LE((c.sources ?? 0) >>> 0, at + 24);
  });
  return hex(b);
}

/** struct rtn_src_key: a source's path (without its zero: at most NetLimit.sourceBytes - 1 bytes). */
export function encodeSrcKey(wid: number, path: string): string {
  const b = Buffer.alloc(NetSize.srcKey);
  b.writeUInt32LE(wid, 0);
  Buffer.from(path, 'utf8').copy(b, 4);
  return hex(b);
}

/** struct rtn_src_value: the source bits an executable gets from a path (see rtctl-net-maps.h). */
export function encodeSrcValue(v: { exact: number; parent: number; ancestor: number }): string {
  const b = Buffer.alloc(NetSize.srcValue);
  b.writeUInt32LE(v.exact >>> 0, 0);
  b.writeUInt32LE(v.parent >>> 0, 4);
  b.writeUInt32LE(v.ancestor >>> 0, 8);
  return hex(b);
}

/** struct rtn_event, decoded. */
export interface NetEvent {
  cgroup: bigint;
  wid: number;
  rule: number;
  generation: number;
  pid: number;
  tgid: number;
  uid: number;
  action: number;
  kind: number;
  op: number;
  family: number;
  proto: number;
  port: number;
  addr: Uint8Array;
  comm: string;
  /** struct rtn_event_exe: the executable the programs named (a workload with sources), as its root names it. */
  exe?: string;
}

function readExe(b: Buffer): string {
  const end = b.indexOf(0);
  return b.subarray(0, end === -1 ? b.length : end).toString('utf8');
}

/** Decodes an event line's bytes (struct rtn_event, or struct rtn_event_exe). */
export function decodeEvent(b: Buffer): NetEvent {
  const comm = b.subarray(56, 72);
  const end = comm.indexOf(0);
  return {
    cgroup: b.readBigUInt64LE(0),
    wid: b.readUInt32LE(8),
    rule: b.readInt32LE(12),
    generation: b.readUInt32LE(16),
    pid: b.readUInt32LE(20),
    tgid: b.readUInt32LE(24),
    uid: b.readUInt32LE(28),
    action: b.readUInt8(32),
    kind: b.readUInt8(33),
    op: b.readUInt8(34),
    family: b.readUInt8(35),
    proto: b.readUInt8(36),
    port: b.readUInt16LE(38),
    addr: Uint8Array.from(b.subarray(40, 56)),
    comm: comm.subarray(0, end === -1 ? 16 : end).toString('utf8'),
    ...(b.length > NetSize.event ? { exe: readExe(b.subarray(NetSize.event)) } : {}),
  };
}
