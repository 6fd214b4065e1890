// The byte layout of the system call plane's maps (enforcer/syscalls/rtctl-sys-maps.h): the same numbers as the
// C header, which test/enforcer/syscalls/syscall-plane.test.ts compiles and compares. Encoders give the hex
// strings the loader writes with `update <map> <key> <value>`.

export const SysLimit = {
  workloads: 4096,
  /** Call numbers 0 .. nrMax - 1 are watched. */
  nrMax: 512,
  path: 256,
  name: 64,
} as const;

export const SysEventKind = { syscall: 1, fileless: 2 } as const;
export const SysAction = { none: 0, audit: 1, block: 2 } as const;
/** What the kernel decided at sys_enter (rts_event.verdict, RTS_VERDICT_*). */
export const SysVerdict = { none: 0, allow: 1, deny: 2, undecided: 3 } as const;
/**
 * RTS_VERDICT_UNREACHED: a call whose path rules are decided on the object in its LSM hook (where the hooks are
 * attached) reached none of its hooks: it failed before it acted on anything, and was not denied. Only where the
 * LSM hooks are attached (not one of the SysVerdict values a plane without them gives).
 */
export const SYS_VERDICT_UNREACHED = 4;
/** rts_kpath_key.kind: a rule's path, or a source. */
export const SysKpathKind = { call: 0, source: 1 } as const;
/** Rules of one (workload, call) the kernel decides (RTS_DECIDE_RULES); more: RTS_DECIDE_OVERFLOW. */
export const SYS_DECIDE_RULES = 64;
export const SYS_DECIDE_OVERFLOW = 1;

/** Sizes of the map records. */
export const SysSize = {
  workload: 12,
  watchKey: 8,
  watch: 4,
  event: 704,
  decide: 304,
  kpathKey: 264,
  kpathValue: 24,
  deny: 736,
  config: 8,
} as const;

function hex(bytes: Uint8Array): string {
  return Buffer.from(bytes).toString('hex');
}

function u32(n: number): string {
  const b = Buffer.alloc(4);
  b.writeUInt32LE(n >>> 0);
  return hex(b);
}

/** Key of rts_workloads: the cgroup id (u64). */
export function encodeSysWorkloadKey(cgroupId: bigint): string {
  const b = Buffer.alloc(8);
  b.writeBigUInt64LE(cgroupId);
  return hex(b);
}

/** struct rts_workload. */
export function encodeSysWorkload(w: {
  wid: number;
  generation: number;
  fileless: number;
  host: boolean;
}): string {
  const b = Buffer.alloc(SysSize.workload);
  b.writeUInt32LE(w.wid, 0);
  b.writeUInt32LE(w.generation >>> 0, 4);
  b.writeUInt8(w.fileless, 8);
  b.writeUInt8(w.host ? 1 : 0, 9);
  return hex(b);
}

/** struct rts_watch_key. */
export function encodeWatchKey(wid: number, nr: number): string {
  return u32(wid) + u32(nr);
}

/** struct rts_watch: the argument holding the path and the one holding its directory fd (-1: none). */
export function encodeWatch(pathArg: number, dirfdArg: number): string {
  const b = Buffer.alloc(SysSize.watch);
  b.writeInt8(pathArg, 0);
  b.writeInt8(dirfdArg, 1);
  return hex(b);
}

/** Key and value of rts_nrs (u32 each). */
export function encodeNr(nr: number): string {
  return u32(nr);
}
export function encodeNrValue(watched: boolean): string {
  return u32(watched ? 1 : 0);
}

function u64(n: bigint): Buffer {
  const b = Buffer.alloc(8);
  b.writeBigUInt64LE(BigInt.asUintN(64, n));
  return b;
}

/** struct rts_decide: the masks of a (workload, call)'s rules, bit i rule i (precedence order). */
export function encodeDecide(d: {
  nopath: bigint;
  nosource: bigint;
  block: bigint;
  valid: bigint;
  hooks: number;
  flags: number;
  index: readonly number[];
}): string {
  const b = Buffer.alloc(SysSize.decide);
  [d.nopath, d.nosource, d.block, d.valid, BigInt(d.hooks)].forEach((v, i) => u64(v).copy(b, 8 * i));
  b.writeUInt32LE(d.flags, 40);
  d.index.slice(0, SYS_DECIDE_RULES).forEach((v, i) => b.writeUInt32LE(v >>> 0, 48 + 4 * i));
  return hex(b);
}

/** struct rts_kpath_key; undefined when the string does not fit (it can never equal a path the kernel reads). */
export function encodeKpathKey(wid: number, nr: number, kind: number, path: string): string | undefined {
  const bytes = Buffer.from(path, 'utf8');
  if (bytes.length >= SysLimit.path || bytes.includes(0)) return undefined;
  const b = Buffer.alloc(SysSize.kpathKey);
  b.writeUInt32LE(wid, 0);
  b.writeUInt16LE(nr, 4);
  b.writeUInt8(kind, 6);
  bytes.copy(b, 8);
  return hex(b);
}

/** struct rts_kpath_val: the rules whose file path, directory or recursive directory the string is. */
export function encodeKpathValue(v: { exact: bigint; dir: bigint; recursive: bigint }): string {
  return hex(Buffer.concat([u64(v.exact), u64(v.dir), u64(v.recursive)]));
}

/** Key and value of rts_config (one entry). */
export function encodeConfigKey(): string {
  return u32(0);
}
/** `objects`: path rules are decided on the object in the LSM hooks (where they are attached). */
export function encodeConfig(epoch: number, objects = false): string {
  return u32(epoch) + u32(objects ? 1 : 0);
}

/** struct rts_event, decoded. */
export interface SysEvent {
  cgroup: bigint;
  args: bigint[];
  kind: number;
  wid: number;
  generation: number;
  nr: number;
  pid: number;
  tgid: number;
  ppid: number;
  uid: number;
  nlink: number;
  action: number;
  pathArg: number;
  dirfdArg: number;
  comm: string;
  exe: string;
  path: string;
  name: string;
  /** Pids in the caller's pid namespace (0 for a parent outside it). */
  nsPid: number;
  nsPpid: number;
  /** SysVerdict: what the kernel decided at sys_enter. */
  verdict: number;
  /** The record index of the rule the kernel found (allow or deny), else 0xffffffff. */
  rule: number;
}

function cString(b: Buffer, start: number, size: number): string {
  const s = b.subarray(start, start + size);
  const end = s.indexOf(0);
  return s.subarray(0, end === -1 ? size : end).toString('utf8');
}

export function decodeSysEvent(b: Buffer): SysEvent {
  if (b.length < SysSize.event)
    throw new Error(`syscall event of ${b.length} bytes, expected ${SysSize.event}`);
  return {
    cgroup: b.readBigUInt64LE(0),
    args: [0, 1, 2, 3, 4, 5].map((i) => b.readBigUInt64LE(8 + 8 * i)),
    kind: b.readUInt32LE(56),
    wid: b.readUInt32LE(60),
    generation: b.readUInt32LE(64),
    nr: b.readUInt32LE(68),
    pid: b.readUInt32LE(72),
    tgid: b.readUInt32LE(76),
    ppid: b.readUInt32LE(80),
    uid: b.readUInt32LE(84),
    nlink: b.readUInt32LE(88),
    action: b.readUInt8(92),
    pathArg: b.readInt8(93),
    dirfdArg: b.readInt8(94),
    comm: cString(b, 96, 16),
    exe: cString(b, 112, SysLimit.path),
    path: cString(b, 368, SysLimit.path),
    name: cString(b, 624, SysLimit.name),
    nsPid: b.readUInt32LE(688),
    nsPpid: b.readUInt32LE(692),
    rule: b.readUInt32LE(696),
    verdict: b.readUInt8(700),
  };
}
