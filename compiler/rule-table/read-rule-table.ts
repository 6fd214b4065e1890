// The TypeScript reader of the binary rule table: validates a table once, then answers lookups with
// the walk of docs/rule-table.md (hash probes per ancestor directory, never a scan over all rules).
// It is the reference for the C readers and is tested against the decision oracle.
import { Action, Operation, PolicyKind } from '../ir/rule-set.js';
import {
  Posture,
  WorkloadKind,
  type OperationRequest,
  type Postures,
  type Workload,
} from '../decide/decision-input.js';
import {
  AlertResult,
  AlertType,
  DEFAULT_POSTURE_POLICY,
  DEFAULT_POSTURE_SEVERITY,
  DecisionBasis,
  type Decision,
  type DecisionAlert,
  type RuleReference,
} from '../decide/decision.js';
import { getPosture } from '../decide/decide.js';
import { normalizeCapability, normalizeOperationRequest } from '../decide/match-rule.js';
import { getOperationSocketNames } from '../decide/socket-names.js';
import { compileGlob, matchCompiledGlob, type CompiledGlob } from './match-glob-bytes.js';
import { formatIpAddress, maskAddress, parseCidr, parseIpAddress } from '../net/cidr.js';
import {
  ACTION_BY_CODE,
  ALLOW_ADDRESS_BIT,
  MatcherCode,
  getIpProtocolName,
  CLASS_BY_CODE,
  CLASS_CODES,
  HEADER_SIZE,
  Header,
  LABEL_RECORD_SIZE,
  LabelOp,
  MAGIC,
  NODE_RECORD_SIZE,
  NodeKind,
  POLICY_RECORD_SIZE,
  RULE_RECORD_SIZE,
  RuleFlag,
  SOURCE_RECORD_SIZE,
  SourceCode,
  VERSION_MAJOR,
  hashNodeKey,
  LabelField,
  NodeField,
  PolicyField,
  RuleField,
  SourceField,
  type NodeKind as NodeKindCode,
} from './rule-table-format.js';
import type { RuleTableImage, RuleTableRecords, SourceRecord } from './rule-table-records.js';

const encoder = new TextEncoder();
const decoder = new TextDecoder();
const SLASH = 0x2f;
const NONE = 0xffff_ffff;

/** The policies selecting one workload, computed once per workload. */
export interface PolicySet {
  /** Bit `p` set: policy `p` selects the workload. */
  bits: Uint8Array;
  /** OR of the selected policies' `allow_unscoped` class bits. */
  allowUnscoped: number;
  workloadKind: WorkloadKind;
}

/** A policy record, decoded. */
export interface TablePolicy {
  name: string;
  namespace: string;
  kind: PolicyKind;
  file: string;
  line: number;
}

/** A rule record, decoded. */
export interface DecodedRule {
  index: number;
  policy: string;
  operation: Operation;
  /** Matcher code (docs/rule-table.md). */
  matcher: number;
  value: string;
  action: Action;
  flags: number;
  depth: number;
  sources: string[];
  severity: number;
  location: string;
  /** Address rules: destination ports (empty: any) and protocol name ('' any); empty for other rules. */
  ports: number[];
  protocol: string;
}

/** Why bytes are not a table this reader can use. */
export const RuleTableErrorCode = {
  /** Too short for a header, or the magic is wrong: not a rule table at all. */
  NotATable: 'RULE_TABLE_NOT_A_TABLE',
  /** A rule table of another major version (written by an incompatible rtctl). */
  Version: 'RULE_TABLE_VERSION',
  /** A rule table whose sizes, offsets or references are inconsistent (truncated or corrupted). */
  Corrupt: 'RULE_TABLE_CORRUPT',
} as const;
export type RuleTableErrorCode = (typeof RuleTableErrorCode)[keyof typeof RuleTableErrorCode];

/** Why a table was refused: a stable code, a message naming the field, and its byte offset when known. */
export interface RuleTableError {
  ok: false;
  code: RuleTableErrorCode;
  error: string;
  offset?: number;
}

/** Result of reading a table: the table, or why it is not a valid one. */
export type ReadRuleTableResult = { ok: true; table: RuleTable } | RuleTableError;

interface Sections {
  stringOffset: number;
  stringSize: number;
  policyOffset: number;
  policyCount: number;
  labelOffset: number;
  labelCount: number;
  ruleOffset: number;
  ruleCount: number;
  sourceOffset: number;
  sourceCount: number;
  refOffset: number;
  refCount: number;
  nodeOffset: number;
  nodeCount: number;
  bucketOffset: number;
  bucketCount: number;
}

class TableError extends Error {
  constructor(
    readonly code: RuleTableErrorCode,
    message: string,
    readonly offset: number | undefined,
  ) {
    super(message);
  }
}

function fail(
  message: string,
  offset?: number,
  code: RuleTableErrorCode = RuleTableErrorCode.Corrupt,
): never {
  throw new TableError(code, message, offset);
}

/** Reads and validates a rule table. A malformed table is an error result, never an exception. */
export function readRuleTable(bytes: Uint8Array): ReadRuleTableResult {
  try {
    return { ok: true, table: new RuleTable(bytes) };
  } catch (e) {
    if (e instanceof TableError) {
      const error: RuleTableError = { ok: false, code: e.code, error: e.message };
      if (e.offset !== undefined) error.offset = e.offset;
      return error;
    }
    throw e;
  }
}

/** A compiled table read from bytes: its image (records and bytes) and its validated reader. */
export interface LoadedRuleTable {
  image: RuleTableImage;
  table: RuleTable;
}

/** Reads and validates a rule table and decodes its records: the image a data plane is given. */
export function loadRuleTableImage(bytes: Uint8Array): ({ ok: true } & LoadedRuleTable) | RuleTableError {
  const read = readRuleTable(bytes);
  if (!read.ok) return read;
  return { ok: true, image: { records: read.table.toRecords(), bytes }, table: read.table };
}

function hasBit(bits: Uint8Array, i: number): boolean {
  return ((bits[i >>> 3] ?? 0) & (1 << (i & 7))) !== 0;
}

function equalBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

function startsWithBytes(a: Uint8Array, prefix: Uint8Array): boolean {
  if (a.length < prefix.length) return false;
  for (let i = 0; i < prefix.length; i++) if (a[i] !== prefix[i]) return false;
  return true;
}

/** Byte indices `i < len - 1` of every `/` (ancestor directory `path[0..i]`), shallowest first. */
function listAncestorEnds(path: Uint8Array): number[] {
  const ends: number[] = [];
  for (let i = 0; i < path.length - 1; i++) if (path[i] === SLASH) ends.push(i);
  return ends;
}

/** True when `path` is in directory `dir` (ends in `/`): directly, or at any depth when recursive. */
function isInDirectoryBytes(path: Uint8Array, dir: Uint8Array, recursive: boolean): boolean {
  if (path.length <= dir.length || !startsWithBytes(path, dir)) return false;
  if (recursive) return true;
  for (let i = dir.length; i < path.length - 1; i++) if (path[i] === SLASH) return false;
  return true;
}

/** A validated rule table. */
export class RuleTable {
  private readonly view: DataView;
  private readonly s: Sections;
  private readonly globs = new Map<number, CompiledGlob>();

  constructor(private readonly bytes: Uint8Array) {
    if (bytes.length < HEADER_SIZE)
      fail(
        `table is ${bytes.length} bytes, shorter than the ${HEADER_SIZE}-byte header`,
        0,
        RuleTableErrorCode.NotATable,
      );
    this.view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    for (let i = 0; i < MAGIC.length; i++)
      if (bytes[i] !== MAGIC[i]) fail('bad magic: not a rule table', 0, RuleTableErrorCode.NotATable);
    const major = this.view.getUint16(Header.versionMajor, true);
    const minor = this.view.getUint16(Header.versionMinor, true);
    if (major !== VERSION_MAJOR)
      fail(
        `unsupported rule table version ${major}.${minor} (this reader reads ${VERSION_MAJOR}.x)`,
        Header.versionMajor,
        RuleTableErrorCode.Version,
      );
    const u32 = (o: number): number => this.view.getUint32(o, true);
    if (u32(Header.headerSize) < HEADER_SIZE) fail('header_size is smaller than 128', Header.headerSize);
    if (u32(Header.fileSize) !== bytes.length)
      fail(`file_size ${u32(Header.fileSize)} differs from the ${bytes.length} bytes read`, Header.fileSize);
    this.s = {
      stringOffset: u32(Header.stringOffset),
      stringSize: u32(Header.stringSize),
      policyOffset: u32(Header.policyOffset),
      policyCount: u32(Header.policyCount),
      labelOffset: u32(Header.labelOffset),
      labelCount: u32(Header.labelCount),
      ruleOffset: u32(Header.ruleOffset),
      ruleCount: u32(Header.ruleCount),
      sourceOffset: u32(Header.sourceOffset),
      sourceCount: u32(Header.sourceCount),
      refOffset: u32(Header.refOffset),
      refCount: u32(Header.refCount),
      nodeOffset: u32(Header.nodeOffset),
      nodeCount: u32(Header.nodeCount),
      bucketOffset: u32(Header.bucketOffset),
      bucketCount: u32(Header.bucketCount),
    };
    this.validate();
  }

  private u32(o: number): number {
    return this.view.getUint32(o, true);
  }

  private u8(o: number): number {
    return this.view.getUint8(o);
  }

  private checkSection(name: string, offset: number, count: number, size: number, field: number): void {
    if (offset % 8 !== 0) fail(`${name} section offset ${offset} is not 8-aligned`, field);
    if (offset < HEADER_SIZE || offset + count * size > this.bytes.length)
      fail(`${name} section lies outside the table`, field);
  }

  private checkString(ref: number, what: string): void {
    if (ref % 4 !== 0 || ref + 5 > this.s.stringSize)
      fail(`${what}: string reference ${ref} outside the string table`);
    const len = this.u32(this.s.stringOffset + ref);
    if (ref + 4 + len + 1 > this.s.stringSize) fail(`${what}: string at ${ref} overruns the string table`);
  }

  private checkRange(start: number, count: number, total: number, what: string): void {
    if (start + count > total) fail(`${what}: range ${start}+${count} exceeds ${total}`);
  }

  private validate(): void {
    const s = this.s;
    this.checkSection('string', s.stringOffset, s.stringSize, 1, Header.stringOffset);
    this.checkSection('policy', s.policyOffset, s.policyCount, POLICY_RECORD_SIZE, Header.policyOffset);
    this.checkSection('label', s.labelOffset, s.labelCount, LABEL_RECORD_SIZE, Header.labelOffset);
    this.checkSection('rule', s.ruleOffset, s.ruleCount, RULE_RECORD_SIZE, Header.ruleOffset);
    this.checkSection('source', s.sourceOffset, s.sourceCount, SOURCE_RECORD_SIZE, Header.sourceOffset);
    this.checkSection('ref', s.refOffset, s.refCount, 4, Header.refOffset);
    this.checkSection('node', s.nodeOffset, s.nodeCount, NODE_RECORD_SIZE, Header.nodeOffset);
    this.checkSection('bucket', s.bucketOffset, s.bucketCount, 4, Header.bucketOffset);
    if (s.bucketCount < 16 || (s.bucketCount & (s.bucketCount - 1)) !== 0)
      fail('bucket_count is not a power of two ≥ 16');
    if (s.bucketCount < 2 * s.nodeCount) fail('bucket_count is less than twice node_count');
    if (s.ruleCount >= NONE) fail('too many rules');
    for (let p = 0; p < s.policyCount; p++) {
      const at = s.policyOffset + p * POLICY_RECORD_SIZE;
      this.checkString(this.u32(at + PolicyField.name), `policy ${p} name`);
      this.checkString(this.u32(at + PolicyField.namespace), `policy ${p} namespace`);
      if (this.u8(at + PolicyField.kind) > 1)
        fail(`policy ${p}: unknown kind ${this.u8(at + PolicyField.kind)}`);
      this.checkRange(
        this.u32(at + PolicyField.labelStart),
        this.u32(at + PolicyField.labelCount),
        s.labelCount,
        `policy ${p} labels`,
      );
      this.checkString(this.u32(at + PolicyField.file), `policy ${p} file`);
    }
    for (let l = 0; l < s.labelCount; l++) {
      const at = s.labelOffset + l * LABEL_RECORD_SIZE;
      this.checkString(this.u32(at + LabelField.key), `label ${l} key`);
      this.checkString(this.u32(at + LabelField.value), `label ${l} value`);
      if (this.u8(at + LabelField.op) > LabelOp.notIn) fail(`label ${l}: unknown operator`);
    }
    for (let r = 0; r < s.ruleCount; r++) {
      const at = s.ruleOffset + r * RULE_RECORD_SIZE;
      if (this.u32(at + RuleField.policy) >= s.policyCount) fail(`rule ${r}: policy index out of range`);
      if (this.u8(at + RuleField.cls) > 3) fail(`rule ${r}: unknown class`);
      const matcher = this.u8(at + RuleField.matcher);
      if (matcher < 1 || matcher > MatcherCode.address) fail(`rule ${r}: unknown matcher kind`);
      if (matcher === MatcherCode.address) {
        if (this.u8(at + RuleField.cls) !== CLASS_CODES.Network)
          fail(`rule ${r}: address rule not of class Network`);
        const cidr = parseCidr(this.getStringChecked(this.u32(at + RuleField.value), `rule ${r}`));
        if (!cidr.ok || cidr.value.canonical !== this.getString(this.u32(at + RuleField.value)))
          fail(`rule ${r}: address rule value is not a canonical CIDR block`);
        if (cidr.value.prefix !== this.view.getUint16(at + RuleField.depth, true))
          fail(`rule ${r}: address rule depth is not its prefix length`);
        if (getIpProtocolName(this.view.getUint16(at + RuleField.protocol, true)) === undefined)
          fail(`rule ${r}: unknown IP protocol number`);
      }
      if (this.u8(at + RuleField.action) > 2) fail(`rule ${r}: unknown action`);
      for (const o of [RuleField.value, RuleField.message, RuleField.file, RuleField.pointer])
        this.checkString(this.u32(at + o), `rule ${r}`);
      this.checkRange(
        this.u32(at + RuleField.sourceStart),
        this.u32(at + RuleField.sourceCount),
        s.sourceCount,
        `rule ${r} sources`,
      );
      for (const [o, c] of [
        [RuleField.tagsStart, RuleField.tagsCount],
        [RuleField.argsStart, RuleField.argsCount],
      ] as const) {
        const start = this.u32(at + o);
        const count = this.u32(at + c);
        this.checkRange(start, count, s.refCount, `rule ${r} strings`);
        const ports = o === RuleField.argsStart && matcher === MatcherCode.address;
        for (let i = 0; i < count; i++) {
          const v = this.u32(s.refOffset + 4 * (start + i));
          if (!ports) this.checkString(v, `rule ${r}`);
          else if (v < 1 || v > 65535) fail(`rule ${r}: port ${v} out of range`);
        }
      }
    }
    for (let i = 0; i < s.sourceCount; i++) {
      const at = s.sourceOffset + i * SOURCE_RECORD_SIZE;
      this.checkString(this.u32(at + SourceField.value), `source ${i}`);
      const kind = this.u8(at + SourceField.kind);
      if (kind !== SourceCode.path && kind !== SourceCode.directory) fail(`source ${i}: unknown kind`);
    }
    for (let n = 0; n < s.nodeCount; n++) {
      const at = s.nodeOffset + n * NODE_RECORD_SIZE;
      this.checkString(this.u32(at + NodeField.key), `node ${n} key`);
      const start = this.u32(at + NodeField.refsStart);
      const count = this.u32(at + NodeField.refsCount);
      this.checkRange(start, count, s.refCount, `node ${n} rules`);
      let last = -1;
      for (let i = 0; i < count; i++) {
        const r = this.u32(s.refOffset + 4 * (start + i));
        if (r >= s.ruleCount || r <= last) fail(`node ${n}: rule list not ascending rule indices`);
        last = r;
      }
    }
    let empty = 0;
    for (let b = 0; b < s.bucketCount; b++) {
      const v = this.u32(s.bucketOffset + 4 * b);
      if (v === 0) empty++;
      else if (v > s.nodeCount) fail(`bucket ${b}: node index out of range`);
    }
    if (empty === 0) fail('no empty bucket: probes would not terminate');
  }

  private getStringBytes(ref: number): Uint8Array {
    const at = this.s.stringOffset + ref;
    const len = this.u32(at);
    return this.bytes.subarray(at + 4, at + 4 + len);
  }

  private getStringChecked(ref: number, what: string): string {
    this.checkString(ref, what);
    return this.getString(ref);
  }

  private getString(ref: number): string {
    return decoder.decode(this.getStringBytes(ref));
  }

  /** Number of policies. */
  get policyCount(): number {
    return this.s.policyCount;
  }

  /** Number of rules. */
  get ruleCount(): number {
    return this.s.ruleCount;
  }

  /** The decoded policy record `p`. */
  getPolicy(p: number): TablePolicy {
    const at = this.s.policyOffset + p * POLICY_RECORD_SIZE;
    return {
      name: this.getString(this.u32(at + PolicyField.name)),
      namespace: this.getString(this.u32(at + PolicyField.namespace)),
      kind: this.u8(at + PolicyField.kind) === 1 ? PolicyKind.RuntimeHostPolicy : PolicyKind.RuntimePolicy,
      file: this.getString(this.u32(at + PolicyField.file)),
      line: this.u32(at + PolicyField.line),
    };
  }

  private isPolicySelecting(p: number, workload: Workload): boolean {
    const at = this.s.policyOffset + p * POLICY_RECORD_SIZE;
    const host = this.u8(at + PolicyField.kind) === 1;
    if (host !== (workload.kind === WorkloadKind.Host)) return false;
    if (!host && this.getString(this.u32(at + PolicyField.namespace)) !== workload.namespace) return false;
    const labels = host ? workload.nodeLabels : workload.labels;
    const start = this.u32(at + PolicyField.labelStart);
    const count = this.u32(at + PolicyField.labelCount);
    const groups = new Map<number, { op: number; hit: boolean }>();
    for (let i = start; i < start + count; i++) {
      const l = this.s.labelOffset + i * LABEL_RECORD_SIZE;
      const key = this.getString(this.u32(l + LabelField.key));
      const value = this.getString(this.u32(l + LabelField.value));
      const op = this.u8(l + LabelField.op);
      const present = Object.hasOwn(labels, key) && (labels[key] === value || (host && value === '*'));
      if (op === LabelOp.equals) {
        if (!present) return false;
        continue;
      }
      const group = this.view.getUint16(l + LabelField.group, true);
      const g = groups.get(group) ?? { op, hit: false };
      g.hit ||= present;
      groups.set(group, g);
    }
    for (const g of groups.values()) if (g.hit !== (g.op === LabelOp.in)) return false;
    return true;
  }

  /** The policy set of a workload (evaluates every policy's selector once). */
  selectPolicies(workload: Workload): PolicySet {
    const bits = new Uint8Array((this.s.policyCount + 7) >>> 3);
    let allowUnscoped = 0;
    for (let p = 0; p < this.s.policyCount; p++) {
      if (!this.isPolicySelecting(p, workload)) continue;
      bits[p >>> 3] = (bits[p >>> 3] ?? 0) | (1 << (p & 7));
      allowUnscoped |= this.u8(this.s.policyOffset + p * POLICY_RECORD_SIZE + PolicyField.allowUnscoped);
    }
    return { bits, allowUnscoped, workloadKind: workload.kind };
  }

  /** Finds the index node `(class, kind, key)`; returns its rule-list range or null. */
  private findNode(
    classCode: number,
    kind: number,
    key: Uint8Array,
  ): { start: number; count: number } | null {
    const h = hashNodeKey(classCode, kind, key);
    const mask = this.s.bucketCount - 1;
    let i = h.lo & mask;
    for (;;) {
      const v = this.u32(this.s.bucketOffset + 4 * i);
      if (v === 0) return null;
      const at = this.s.nodeOffset + (v - 1) * NODE_RECORD_SIZE;
      if (
        this.u32(at + NodeField.hashLo) === h.lo &&
        this.u32(at + NodeField.hashHi) === h.hi &&
        this.u8(at + NodeField.cls) === classCode &&
        this.u8(at + NodeField.kind) === kind &&
        equalBytes(this.getStringBytes(this.u32(at + NodeField.key)), key)
      ) {
        return {
          start: this.s.refOffset + 4 * this.u32(at + NodeField.refsStart),
          count: this.u32(at + NodeField.refsCount),
        };
      }
      i = (i + 1) & mask;
    }
  }

  private matchesSources(at: number, actor: Uint8Array | undefined): boolean {
    const count = this.u32(at + RuleField.sourceCount);
    if (count === 0) return true;
    if (actor === undefined) return false;
    const start = this.u32(at + RuleField.sourceStart);
    for (let i = start; i < start + count; i++) {
      const so = this.s.sourceOffset + i * SOURCE_RECORD_SIZE;
      const value = this.getStringBytes(this.u32(so + SourceField.value));
      if (this.u8(so + SourceField.kind) === SourceCode.path) {
        if (equalBytes(actor, value)) return true;
      } else if (isInDirectoryBytes(actor, value, this.u8(so + SourceField.recursive) === 1)) return true;
    }
    return false;
  }

  /** Address rules: the destination port is listed (or none is), and the protocol is the rule's (or 0). */
  private matchesPortAndProtocol(at: number, op: OperationRequest): boolean {
    const protocol = getIpProtocolName(this.view.getUint16(at + RuleField.protocol, true)) ?? '';
    if (protocol !== '' && !getOperationSocketNames(op).includes(protocol)) return false;
    const start = this.u32(at + RuleField.argsStart);
    const count = this.u32(at + RuleField.argsCount);
    if (count === 0) return true;
    for (let i = start; i < start + count; i++)
      if (this.u32(this.s.refOffset + 4 * i) === op.port) return true;
    return false;
  }

  private matchesArgs(at: number, args: readonly string[] | undefined): boolean {
    const start = this.u32(at + RuleField.argsStart);
    const count = this.u32(at + RuleField.argsCount);
    const allowed = new Set<string>();
    for (let i = start; i < start + count; i++)
      allowed.add(this.getString(this.u32(this.s.refOffset + 4 * i)));
    return (args ?? []).every((a) => allowed.has(a));
  }

  private isApplicable(flags: number, action: number, write: boolean, owner: boolean): boolean {
    const readOnly = (flags & RuleFlag.readOnly) !== 0;
    const ownerOnly = (flags & RuleFlag.ownerOnly) !== 0;
    const exempt = readOnly || ownerOnly;
    const acceptable = (!readOnly || !write) && (!ownerOnly || owner);
    return ACTION_BY_CODE[action] === Action.Allow ? !exempt || acceptable : !(exempt && acceptable);
  }

  private getGlob(r: number, at: number): CompiledGlob {
    let glob = this.globs.get(r);
    if (glob === undefined) {
      glob = compileGlob(this.getStringBytes(this.u32(at + RuleField.value)));
      this.globs.set(r, glob);
    }
    return glob;
  }

  /** The best (lowest) matching rule index of the given node's list, or `best` if none beats it. */
  private scanNode(
    node: { start: number; count: number } | null,
    best: number,
    set: PolicySet,
    op: OperationRequest,
    resource: Uint8Array,
    actor: Uint8Array | undefined,
    condition: 'none' | 'parent' | 'ancestor' | 'glob' | 'address',
  ): number {
    if (node === null) return best;
    const write = op.operation === Operation.File && op.write;
    for (let i = 0; i < node.count; i++) {
      const r = this.u32(node.start + 4 * i);
      if (r >= best) break;
      const at = this.s.ruleOffset + r * RULE_RECORD_SIZE;
      if (!hasBit(set.bits, this.u32(at + RuleField.policy))) continue;
      const flags = this.u8(at + RuleField.flags);
      if (condition === 'ancestor' && (flags & RuleFlag.recursive) === 0) continue;
      if (condition === 'glob' && !matchCompiledGlob(this.getGlob(r, at), resource)) continue;
      if (condition === 'address' && !this.matchesPortAndProtocol(at, op)) continue;
      if (!this.matchesSources(at, actor)) continue;
      if ((flags & RuleFlag.pts) !== 0 && op.tty !== true) continue;
      if ((flags & RuleFlag.hasArgs) !== 0 && !this.matchesArgs(at, op.args)) continue;
      if (!this.isApplicable(flags, this.u8(at + RuleField.action), write, op.owner)) continue;
      return r;
    }
    return best;
  }

  /** The index of the rule that decides the operation for this policy set, or null when none matches. */
  findDecidingRule(set: PolicySet, request: OperationRequest): number | null {
    const op = normalizeOperationRequest(request);
    const classCode = CLASS_CODES[op.operation];
    const actorText = op.operation === Operation.Process ? op.parentExecutable : op.executable;
    const actor = actorText === undefined ? undefined : encoder.encode(actorText);
    let best = NONE;
    if (op.operation === Operation.Network) {
      const proto = encoder.encode(op.resource.toLowerCase());
      const address = op.address === undefined ? undefined : parseIpAddress(op.address);
      if (address?.ok === true) {
        // One probe per prefix length, longest first: the blocks the destination lies in.
        const { family, bytes } = address.value;
        for (let prefix = bytes.length * 8; prefix >= 0; prefix--) {
          const key = `${formatIpAddress({ family, bytes: maskAddress(bytes, prefix) })}/${prefix}`;
          best = this.scanNode(
            this.findNode(classCode, NodeKind.address, encoder.encode(key)),
            best,
            set,
            op,
            proto,
            actor,
            'address',
          );
        }
      }
      // Every name of the socket (its type's and its protocol's): the lowest rule index of all their lists
      // wins, which is the oracle's precedence among rules matched through different names.
      for (const name of getOperationSocketNames(op)) {
        best = this.scanNode(
          this.findNode(classCode, NodeKind.protocol, encoder.encode(name)),
          best,
          set,
          op,
          proto,
          actor,
          'none',
        );
      }
      const all = encoder.encode('all');
      best = this.scanNode(
        this.findNode(classCode, NodeKind.protocol, all),
        best,
        set,
        op,
        proto,
        actor,
        'none',
      );
    } else if (op.operation === Operation.Capabilities) {
      const cap = encoder.encode(normalizeCapability(op.resource));
      best = this.scanNode(
        this.findNode(classCode, NodeKind.capability, cap),
        best,
        set,
        op,
        cap,
        actor,
        'none',
      );
    } else {
      const res = encoder.encode(op.resource);
      best = this.scanNode(this.findNode(classCode, NodeKind.path, res), best, set, op, res, actor, 'none');
      const base = res.subarray(res.lastIndexOf(SLASH) + 1);
      best = this.scanNode(
        this.findNode(classCode, NodeKind.execname, base),
        best,
        set,
        op,
        res,
        actor,
        'none',
      );
      const ends = listAncestorEnds(res);
      ends.forEach((end, k) => {
        const dir = res.subarray(0, end + 1);
        const where = k === ends.length - 1 ? 'parent' : 'ancestor';
        best = this.scanNode(
          this.findNode(classCode, NodeKind.directory, dir),
          best,
          set,
          op,
          res,
          actor,
          where,
        );
        best = this.scanNode(
          this.findNode(classCode, NodeKind.patternDirectory, dir),
          best,
          set,
          op,
          res,
          actor,
          'glob',
        );
      });
    }
    return best === NONE ? null : best;
  }

  private hasScopedAllow(
    set: PolicySet,
    classCode: number,
    actor: Uint8Array,
    kinds: { path: number; dir: number } = {
      path: NodeKind.allowSourcePath,
      dir: NodeKind.allowSourceDirectory,
    },
  ): boolean {
    const direct = this.findNode(classCode, kinds.path, actor);
    if (direct !== null) {
      for (let i = 0; i < direct.count; i++) {
        const r = this.u32(direct.start + 4 * i);
        if (hasBit(set.bits, this.u32(this.s.ruleOffset + r * RULE_RECORD_SIZE + RuleField.policy)))
          return true;
      }
    }
    const ends = listAncestorEnds(actor);
    for (let k = 0; k < ends.length; k++) {
      const dir = actor.subarray(0, (ends[k] ?? 0) + 1);
      const isParent = k === ends.length - 1;
      const node = this.findNode(classCode, kinds.dir, dir);
      if (node === null) continue;
      for (let i = 0; i < node.count; i++) {
        const at = this.s.ruleOffset + this.u32(node.start + 4 * i) * RULE_RECORD_SIZE;
        if (!hasBit(set.bits, this.u32(at + RuleField.policy))) continue;
        const start = this.u32(at + RuleField.sourceStart);
        for (let j = start; j < start + this.u32(at + RuleField.sourceCount); j++) {
          const so = this.s.sourceOffset + j * SOURCE_RECORD_SIZE;
          if (this.u8(so + SourceField.kind) !== SourceCode.directory) continue;
          if (!equalBytes(this.getStringBytes(this.u32(so + SourceField.value)), dir)) continue;
          if (isParent || this.u8(so + SourceField.recursive) === 1) return true;
        }
      }
    }
    return false;
  }

  /** True when the workload is least-permissive for this operation's class and actor. */
  isLeastPermissive(set: PolicySet, request: OperationRequest): boolean {
    const op = normalizeOperationRequest(request);
    const classCode = CLASS_CODES[op.operation];
    // Connects and sends: Allow address rules make them least-permissive too.
    const addressOp = op.operation === Operation.Network && op.address !== undefined;
    if ((set.allowUnscoped & (1 << classCode)) !== 0) return true;
    if (addressOp && (set.allowUnscoped & ALLOW_ADDRESS_BIT) !== 0) return true;
    const actorText = op.operation === Operation.Process ? op.parentExecutable : op.executable;
    if (actorText === undefined) return false;
    const actor = encoder.encode(actorText);
    if (this.hasScopedAllow(set, classCode, actor)) return true;
    return (
      addressOp &&
      this.hasScopedAllow(set, classCode, actor, {
        path: NodeKind.allowAddressSourcePath,
        dir: NodeKind.allowAddressSourceDirectory,
      })
    );
  }

  private readNumbers(start: number, count: number): number[] {
    const out: number[] = [];
    for (let i = start; i < start + count; i++) out.push(this.u32(this.s.refOffset + 4 * i));
    return out;
  }

  private readStrings(start: number, count: number): string[] {
    const out: string[] = [];
    for (let i = start; i < start + count; i++) out.push(this.getString(this.u32(this.s.refOffset + 4 * i)));
    return out;
  }

  /** Every record of the table, decoded (the inverse of encodeRuleTable). */
  toRecords(): RuleTableRecords {
    const s = this.s;
    const policies: RuleTableRecords['policies'] = [];
    for (let p = 0; p < s.policyCount; p++) {
      const at = s.policyOffset + p * POLICY_RECORD_SIZE;
      const labels: RuleTableRecords['policies'][number]['labels'] = [];
      const start = this.u32(at + PolicyField.labelStart);
      for (let l = start; l < start + this.u32(at + PolicyField.labelCount); l++) {
        const la = s.labelOffset + l * LABEL_RECORD_SIZE;
        labels.push({
          key: this.getString(this.u32(la + LabelField.key)),
          value: this.getString(this.u32(la + LabelField.value)),
          op: this.u8(la + LabelField.op),
          group: this.view.getUint16(la + LabelField.group, true),
        });
      }
      policies.push({
        name: this.getString(this.u32(at + PolicyField.name)),
        namespace: this.getString(this.u32(at + PolicyField.namespace)),
        kind: this.u8(at + PolicyField.kind),
        allowUnscoped: this.u8(at + PolicyField.allowUnscoped),
        allowScoped: this.u8(at + PolicyField.allowScoped),
        labels,
        expressionGroups: this.u32(at + PolicyField.expressionGroups),
        file: this.getString(this.u32(at + PolicyField.file)),
        line: this.u32(at + PolicyField.line),
      });
    }
    const rules: RuleTableRecords['rules'] = [];
    for (let r = 0; r < s.ruleCount; r++) {
      const at = s.ruleOffset + r * RULE_RECORD_SIZE;
      const sources: SourceRecord[] = [];
      const isAddress = this.u8(at + RuleField.matcher) === MatcherCode.address;
      const argsStart = this.u32(at + RuleField.argsStart);
      const argsCount = this.u32(at + RuleField.argsCount);
      const start = this.u32(at + RuleField.sourceStart);
      for (let i = start; i < start + this.u32(at + RuleField.sourceCount); i++) {
        const so = s.sourceOffset + i * SOURCE_RECORD_SIZE;
        sources.push({
          kind: this.u8(so + SourceField.kind),
          value: this.getString(this.u32(so + SourceField.value)),
          recursive: this.u8(so + SourceField.recursive) === 1,
        });
      }
      rules.push({
        policy: this.u32(at + RuleField.policy),
        cls: this.u8(at + RuleField.cls),
        matcher: this.u8(at + RuleField.matcher) as MatcherCode,
        action: this.u8(at + RuleField.action),
        flags: this.u8(at + RuleField.flags),
        value: this.getString(this.u32(at + RuleField.value)),
        depth: this.view.getUint16(at + RuleField.depth, true),
        protocol: this.view.getUint16(at + RuleField.protocol, true),
        ports: isAddress ? this.readNumbers(argsStart, argsCount) : [],
        sources,
        severity: this.u32(at + RuleField.severity),
        message: this.getString(this.u32(at + RuleField.message)),
        tags: this.readStrings(this.u32(at + RuleField.tagsStart), this.u32(at + RuleField.tagsCount)),
        args: isAddress ? [] : this.readStrings(argsStart, argsCount),
        file: this.getString(this.u32(at + RuleField.file)),
        line: this.u32(at + RuleField.line),
        column: this.u32(at + RuleField.column),
        pointer: this.getString(this.u32(at + RuleField.pointer)),
      });
    }
    const nodes: RuleTableRecords['nodes'] = [];
    for (let n = 0; n < s.nodeCount; n++) {
      const at = s.nodeOffset + n * NODE_RECORD_SIZE;
      const list: number[] = [];
      const start = this.u32(at + NodeField.refsStart);
      for (let i = start; i < start + this.u32(at + NodeField.refsCount); i++)
        list.push(this.u32(s.refOffset + 4 * i));
      nodes.push({
        cls: this.u8(at + NodeField.cls),
        kind: this.u8(at + NodeField.kind) as NodeKindCode,
        key: this.getString(this.u32(at + NodeField.key)),
        rules: list,
      });
    }
    return { policies, rules, nodes };
  }

  /** Every rule record decoded, in table (precedence) order: for dumps and debugging. */
  listRules(): DecodedRule[] {
    const out: DecodedRule[] = [];
    for (let r = 0; r < this.s.ruleCount; r++) {
      const at = this.s.ruleOffset + r * RULE_RECORD_SIZE;
      const sources: string[] = [];
      const start = this.u32(at + RuleField.sourceStart);
      for (let i = start; i < start + this.u32(at + RuleField.sourceCount); i++) {
        const so = this.s.sourceOffset + i * SOURCE_RECORD_SIZE;
        const value = this.getString(this.u32(so + SourceField.value));
        sources.push(
          this.u8(so + SourceField.kind) === SourceCode.path
            ? value
            : `${value}${this.u8(so + SourceField.recursive) === 1 ? '**' : '*'}`,
        );
      }
      out.push({
        index: r,
        policy: this.getPolicy(this.u32(at + RuleField.policy)).name,
        operation: CLASS_BY_CODE[this.u8(at + RuleField.cls)] ?? Operation.File,
        matcher: this.u8(at + RuleField.matcher),
        value: this.getString(this.u32(at + RuleField.value)),
        action: ACTION_BY_CODE[this.u8(at + RuleField.action)] ?? Action.Allow,
        flags: this.u8(at + RuleField.flags),
        depth: this.view.getUint16(at + RuleField.depth, true),
        sources,
        severity: this.u32(at + RuleField.severity),
        ports:
          this.u8(at + RuleField.matcher) === MatcherCode.address
            ? this.readNumbers(this.u32(at + RuleField.argsStart), this.u32(at + RuleField.argsCount))
            : [],
        protocol: getIpProtocolName(this.view.getUint16(at + RuleField.protocol, true)) ?? '',
        location: `${this.getString(this.u32(at + RuleField.file))}:${this.u32(at + RuleField.line)}:${this.u32(at + RuleField.column)}`,
      });
    }
    return out;
  }

  /** Every index node decoded, in node order. */
  listNodes(): { index: number; operation: Operation; kind: number; key: string; rules: number[] }[] {
    const out: { index: number; operation: Operation; kind: number; key: string; rules: number[] }[] = [];
    for (let n = 0; n < this.s.nodeCount; n++) {
      const at = this.s.nodeOffset + n * NODE_RECORD_SIZE;
      const rules: number[] = [];
      const start = this.u32(at + NodeField.refsStart);
      for (let i = start; i < start + this.u32(at + NodeField.refsCount); i++)
        rules.push(this.u32(this.s.refOffset + 4 * i));
      out.push({
        index: n,
        operation: CLASS_BY_CODE[this.u8(at + NodeField.cls)] ?? Operation.File,
        kind: this.u8(at + NodeField.kind),
        key: this.getString(this.u32(at + NodeField.key)),
        rules,
      });
    }
    return out;
  }

  /** Where rule `r` is written. */
  getRuleReference(r: number): RuleReference {
    const at = this.s.ruleOffset + r * RULE_RECORD_SIZE;
    const policy = this.getPolicy(this.u32(at + RuleField.policy));
    return {
      policy: policy.name,
      kind: policy.kind,
      namespace: policy.namespace,
      file: this.getString(this.u32(at + RuleField.file)),
      line: this.u32(at + RuleField.line),
      column: this.u32(at + RuleField.column),
      pointer: this.getString(this.u32(at + RuleField.pointer)),
    };
  }

  private createRuleAlert(r: number, op: OperationRequest, action: 'Block' | 'Audit'): DecisionAlert {
    const at = this.s.ruleOffset + r * RULE_RECORD_SIZE;
    const policy = this.getPolicy(this.u32(at + RuleField.policy));
    const alert: DecisionAlert = {
      PolicyName: policy.name,
      Type:
        policy.kind === PolicyKind.RuntimeHostPolicy ? AlertType.MatchedHostPolicy : AlertType.MatchedPolicy,
      Operation: op.operation,
      Action: action,
      Result: action === Action.Block ? AlertResult.PermissionDenied : AlertResult.Passed,
      Severity: String(this.u32(at + RuleField.severity)),
    };
    const tags: string[] = [];
    const start = this.u32(at + RuleField.tagsStart);
    for (let i = start; i < start + this.u32(at + RuleField.tagsCount); i++)
      tags.push(this.getString(this.u32(this.s.refOffset + 4 * i)));
    if (tags.length > 0) alert.Tags = tags.join(',');
    const message = this.getString(this.u32(at + RuleField.message));
    if (message !== '') alert.Message = message;
    return alert;
  }

  /** Decides an operation for a policy set: the same answer as the oracle, from the table alone. */
  decide(set: PolicySet, op: OperationRequest, postures: Postures = {}): Decision {
    const r = this.findDecidingRule(set, op);
    if (r !== null) {
      const rule = this.getRuleReference(r);
      const action = ACTION_BY_CODE[this.u8(this.s.ruleOffset + r * RULE_RECORD_SIZE + RuleField.action)];
      if (action === Action.Block) {
        return {
          allowed: false,
          errno: 'EACCES',
          basis: DecisionBasis.Rule,
          alert: this.createRuleAlert(r, op, 'Block'),
          rule,
        };
      }
      if (action === Action.Audit) {
        return {
          allowed: true,
          basis: DecisionBasis.Rule,
          alert: this.createRuleAlert(r, op, 'Audit'),
          rule,
        };
      }
      return { allowed: true, basis: DecisionBasis.Rule, alert: null, rule };
    }
    if (!this.isLeastPermissive(set, op))
      return { allowed: true, basis: DecisionBasis.Default, alert: null, rule: null };
    const block = getPosture(postures, op.operation) === Posture.Block;
    const alert: DecisionAlert = {
      PolicyName: DEFAULT_POSTURE_POLICY,
      Type: set.workloadKind === WorkloadKind.Host ? AlertType.MatchedHostPolicy : AlertType.MatchedPolicy,
      Operation: op.operation,
      Action: block ? Action.Block : Action.Audit,
      Result: block ? AlertResult.PermissionDenied : AlertResult.Passed,
      Severity: DEFAULT_POSTURE_SEVERITY,
    };
    return block
      ? { allowed: false, errno: 'EACCES', basis: DecisionBasis.Posture, alert, rule: null }
      : { allowed: true, basis: DecisionBasis.Posture, alert, rule: null };
  }
}
