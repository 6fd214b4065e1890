// Builds the rule table of docs/rule-table.md from a RuleSet: first its records (policies, rules in precedence
// order, index nodes), then their encoding as bytes. Pure and deterministic: the same rule set (in any policy
// order) gives the same records and the same bytes.
import { Action, type PolicyIR, type Rule, type RuleSet, type SourceMatcher } from '../ir/rule-set.js';
import { getDirectoryDepth, getGlobPrefixDirectory, normalizeDirectory } from '../decide/path-match.js';
import { isMatcherForOperation, normalizeCapability } from '../decide/match-rule.js';
import { mergeRanked, rankRule, sortRanked, type PolicyRule, type RankedRule } from '../decide/precedence.js';
import { compareSyscallPrecedence } from '../decide/decide-syscall.js';
import {
  ACTION_CODES,
  ALLOW_ADDRESS_BIT,
  IP_PROTOCOL_NUMBERS,
  CLASS_CODES,
  HEADER_SIZE,
  LABEL_RECORD_SIZE,
  LabelOp,
  MAGIC,
  MIN_BUCKETS,
  MatcherCode,
  NODE_RECORD_SIZE,
  NodeKind,
  POLICY_KIND_CODES,
  POLICY_RECORD_SIZE,
  RULE_RECORD_SIZE,
  RuleFlag,
  SOURCE_RECORD_SIZE,
  SourceCode,
  VERSION_MAJOR,
  VERSION_MINOR,
  hashNodeKey,
  type Hash64,
  Header,
  LabelField,
  NodeField,
  PolicyField,
  RuleField,
  SECTION_ALIGN,
  SourceField,
} from './rule-table-format.js';
import type {
  LabelRecord,
  NodeRecord,
  PolicyRecord,
  PresetRecord,
  RuleRecord,
  RuleTableImage,
  RuleTableRecords,
  SourceRecord,
  SyscallRecord,
} from './rule-table-records.js';

const encoder = new TextEncoder();

/**
 * Deduplicated string table: `u32 length`, bytes, NUL, padded to 4. Reference 0 is the empty string. The
 * strings are written straight into one buffer (grown by doubling, zero-filled, so the NUL and the padding
 * need no writes): no array per string.
 */
class StringTable {
  private buffer = Buffer.alloc(16 * 1024);
  private readonly offsets = new Map<string, number>();
  private size = 0;

  constructor() {
    this.add('');
  }

  add(value: string): number {
    const known = this.offsets.get(value);
    if (known !== undefined) return known;
    const length = Buffer.byteLength(value, 'utf8');
    const padded = (4 + length + 1 + 3) & ~3;
    if (this.size + padded > this.buffer.length) {
      let capacity = this.buffer.length * 2;
      while (capacity < this.size + padded) capacity *= 2;
      const grown = Buffer.alloc(capacity);
      this.buffer.copy(grown, 0, 0, this.size);
      this.buffer = grown;
    }
    const offset = this.size;
    this.buffer.writeUInt32LE(length, offset);
    if (length > 0) this.buffer.write(value, offset + 4, length, 'utf8');
    this.offsets.set(value, offset);
    this.size += padded;
    return offset;
  }

  toBytes(): Uint8Array {
    return this.buffer.subarray(0, this.size);
  }
}

function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function comparePolicies(a: PolicyIR, b: PolicyIR): number {
  return (
    compareText(a.kind, b.kind) ||
    compareText(a.namespace, b.namespace) ||
    compareText(a.name, b.name) ||
    compareText(a.location.file, b.location.file) ||
    a.location.line - b.location.line ||
    a.location.column - b.location.column ||
    compareText(JSON.stringify(a), JSON.stringify(b))
  );
}

/** Byte-wise order of two byte strings (a prefix first): Buffer.compare, native. */
function compareBytes(a: Uint8Array, b: Uint8Array): number {
  return Buffer.compare(a, b);
}

/** The value a rule record stores and the index node it is listed under. */
function describeMatcher(rule: Rule): {
  code: MatcherCode;
  value: string;
  depth: number;
  node: NodeKind;
  key: string;
} {
  const m = rule.matcher;
  switch (m.kind) {
    case 'path':
      return { code: MatcherCode.path, value: m.path, depth: 0, node: NodeKind.path, key: m.path };
    case 'execname':
      return { code: MatcherCode.execname, value: m.name, depth: 0, node: NodeKind.execname, key: m.name };
    case 'directory': {
      const dir = normalizeDirectory(m.dir);
      return {
        code: MatcherCode.directory,
        value: dir,
        depth: getDirectoryDepth(dir),
        node: NodeKind.directory,
        key: dir,
      };
    }
    case 'pattern': {
      const prefix = getGlobPrefixDirectory(m.pattern);
      return {
        code: MatcherCode.pattern,
        value: m.pattern,
        depth: getDirectoryDepth(prefix),
        node: NodeKind.patternDirectory,
        key: prefix,
      };
    }
    case 'protocol': {
      const p = m.protocol.toLowerCase();
      return { code: MatcherCode.protocol, value: p, depth: 0, node: NodeKind.protocol, key: p };
    }
    case 'capability': {
      const c = normalizeCapability(m.capability);
      return { code: MatcherCode.capability, value: c, depth: 0, node: NodeKind.capability, key: c };
    }
    case 'address':
      return {
        code: MatcherCode.address,
        value: m.cidr,
        depth: m.prefix,
        node: NodeKind.address,
        key: m.cidr,
      };
  }
}

function splitLabelPair(pair: string): [string, string] {
  const eq = pair.indexOf('=');
  return eq === -1 ? [pair, ''] : [pair.slice(0, eq), pair.slice(eq + 1)];
}

function collectLabels(policy: PolicyIR): { labels: LabelRecord[]; groups: number } {
  const labels: LabelRecord[] = [];
  const pairs = policy.target.kind === 'host' ? policy.target.nodeLabels : policy.target.matchLabels;
  for (const key of Object.keys(pairs).sort(compareText)) {
    labels.push({ key, value: pairs[key] ?? '', op: LabelOp.equals, group: 0 });
  }
  let groups = 0;
  if (policy.target.kind === 'pods') {
    for (const e of policy.target.matchExpressions) {
      groups++;
      for (const pair of [...e.values].sort(compareText)) {
        const [key, value] = splitLabelPair(pair);
        labels.push({ key, value, op: e.operator === 'In' ? LabelOp.in : LabelOp.notIn, group: groups });
      }
    }
  }
  return { labels, groups };
}

function alignSection(n: number): number {
  return (n + SECTION_ALIGN - 1) & ~(SECTION_ALIGN - 1);
}

/** The policies in table order (a rule's policy index refers to this list). */
export function orderPolicies(ruleSet: RuleSet): PolicyIR[] {
  return [...ruleSet.policies].sort(comparePolicies);
}

/** The policies in table order and the rules in precedence order, as the table stores them. */
export function orderRuleTable(ruleSet: RuleSet): { policies: PolicyIR[]; rules: PolicyRule[] } {
  const policies = orderPolicies(ruleSet);
  const ranked = mergeRanked(policies.map((p) => preparePolicy(p).rules));
  return { policies, rules: ranked.map((r) => r.item) };
}

/** One index-node entry of a rule: the node's class, kind and key, its identity in the node map, its key's
 * bytes and its hash. */
interface NodeEntry {
  cls: number;
  kind: NodeKind;
  key: string;
  id: string;
  keyBytes: Uint8Array;
  hash: Hash64;
}

/** A rule as the table stores it, less its policy's index (which depends on the other policies). */
type RuleRecordBody = Omit<RuleRecord, 'policy'>;

/** A rule of a policy, ranked for the precedence sort, with its record body and its index-node entries. */
interface PreparedRule extends RankedRule {
  body: RuleRecordBody;
  nodes: NodeEntry[];
  /** The record made for it by the last build, reused while its policy keeps the same index. */
  record: RuleRecord | undefined;
}

/** What a policy contributes to the table that depends on the policy alone. */
interface PreparedPolicy {
  record: PolicyRecord;
  /** Its rules that the table holds (isMatcherForOperation), in precedence order (sortRanked). */
  rules: PreparedRule[];
}

/**
 * Prepared policies by their lowered object. The IR is never changed once lowered, and the enforcer's
 * snapshots keep the object of a policy whose file did not change (compiler/front-end/
 * lint-texts-incremental.ts), so a policy change prepares only the policies that changed: the rest of a
 * build is the precedence sort over ranks already computed, and the encoding. Records built from a prepared
 * policy share its objects (the policy's record, and the rules' sources, tags, arguments and ports): records
 * are read, never changed.
 */
const preparedPolicies = new WeakMap<PolicyIR, PreparedPolicy>();

function nodeEntry(cls: number, kind: NodeKind, key: string): NodeEntry {
  const keyBytes = encoder.encode(key);
  return {
    cls,
    kind,
    key,
    id: `${cls}\u0000${kind}\u0000${key}`,
    keyBytes,
    hash: hashNodeKey(cls, kind, keyBytes),
  };
}

function prepareRule(policy: PolicyIR, rule: Rule): PreparedRule {
  const cls = CLASS_CODES[rule.operation];
  const m = describeMatcher(rule);
  let flags = 0;
  if (rule.matcher.kind === 'directory' && rule.matcher.recursive) flags |= RuleFlag.recursive;
  if (rule.readOnly) flags |= RuleFlag.readOnly;
  if (rule.ownerOnly) flags |= RuleFlag.ownerOnly;
  if (rule.pts) flags |= RuleFlag.pts;
  if (rule.allowedArgs.length > 0) flags |= RuleFlag.hasArgs;
  const nodes = [nodeEntry(cls, m.node, m.key)];
  if (rule.action === Action.Allow) {
    const isAddress = rule.matcher.kind === 'address';
    for (const s of rule.fromSource) {
      if (s.kind === 'path')
        nodes.push(
          nodeEntry(cls, isAddress ? NodeKind.allowAddressSourcePath : NodeKind.allowSourcePath, s.path),
        );
      else
        nodes.push(
          nodeEntry(
            cls,
            isAddress ? NodeKind.allowAddressSourceDirectory : NodeKind.allowSourceDirectory,
            normalizeDirectory(s.dir),
          ),
        );
    }
  }
  const address = rule.matcher.kind === 'address' ? rule.matcher : undefined;
  return {
    ...rankRule({ policy, rule }),
    body: {
      cls,
      matcher: m.code,
      action: ACTION_CODES[rule.action],
      flags,
      value: m.value,
      depth: Math.min(m.depth, 0xffff),
      protocol: address === undefined ? 0 : (IP_PROTOCOL_NUMBERS[address.protocol] ?? 0),
      ports: address === undefined ? [] : [...address.ports],
      sources: rule.fromSource.map(toSourceRecord),
      severity: rule.severity,
      message: rule.message,
      tags: [...rule.tags],
      args: [...rule.allowedArgs],
      file: rule.location.file,
      line: rule.location.line,
      column: rule.location.column,
      pointer: rule.location.pointer,
    },
    nodes,
    record: undefined,
  };
}

function preparePolicy(policy: PolicyIR): PreparedPolicy {
  const known = preparedPolicies.get(policy);
  if (known !== undefined) return known;
  const rules: PreparedRule[] = [];
  let allowUnscoped = 0;
  let allowScoped = 0;
  for (const rule of policy.rules) {
    if (!isMatcherForOperation(rule.matcher, rule.operation)) continue;
    rules.push(prepareRule(policy, rule));
    if (rule.action !== Action.Allow) continue;
    const bit = rule.matcher.kind === 'address' ? ALLOW_ADDRESS_BIT : 1 << CLASS_CODES[rule.operation];
    if (rule.fromSource.length > 0) allowScoped |= bit;
    else allowUnscoped |= bit;
  }
  const { labels, groups } = collectLabels(policy);
  const prepared: PreparedPolicy = {
    record: {
      name: policy.name,
      namespace: policy.namespace,
      kind: POLICY_KIND_CODES[policy.kind],
      allowUnscoped,
      allowScoped,
      labels,
      expressionGroups: groups,
      file: policy.location.file,
      line: policy.location.line,
    },
    rules: sortRanked(rules),
  };
  preparedPolicies.set(policy, prepared);
  return prepared;
}

/** The records of a rule set's table, and the hash of each index node (in `records.nodes` order). */
function createRecordsAndHashes(ruleSet: RuleSet): { records: RuleTableRecords; hashes: Hash64[] } {
  const policies = orderPolicies(ruleSet);
  const policyIndex = new Map<PolicyIR, number>();
  const policyRecords: PolicyRecord[] = [];
  const runs: PreparedRule[][] = [];
  policies.forEach((policy, i) => {
    policyIndex.set(policy, i);
    const prepared = preparePolicy(policy);
    policyRecords.push(prepared.record);
    runs.push(prepared.rules);
  });
  // Each policy's rules are sorted once, when it is prepared: a build merges the runs.
  const ranked = mergeRanked(runs);

  const nodes = new Map<string, { entry: NodeEntry; rules: number[] }>();
  const ruleRecords: RuleRecord[] = new Array<RuleRecord>(ranked.length);
  for (let r = 0; r < ranked.length; r++) {
    const prepared = ranked[r] as PreparedRule;
    for (const e of prepared.nodes) {
      let node = nodes.get(e.id);
      if (node === undefined) {
        node = { entry: e, rules: [] };
        nodes.set(e.id, node);
      }
      if (node.rules[node.rules.length - 1] !== r) node.rules.push(r);
    }
    const policy = policyIndex.get(prepared.item.policy) ?? 0;
    if (prepared.record?.policy === policy) {
      ruleRecords[r] = prepared.record;
      continue;
    }
    const b = prepared.body;
    ruleRecords[r] = prepared.record = {
      policy,
      cls: b.cls,
      matcher: b.matcher,
      action: b.action,
      flags: b.flags,
      value: b.value,
      depth: b.depth,
      protocol: b.protocol,
      ports: b.ports,
      sources: b.sources,
      severity: b.severity,
      message: b.message,
      tags: b.tags,
      args: b.args,
      file: b.file,
      line: b.line,
      column: b.column,
      pointer: b.pointer,
    };
  }
  const sorted = [...nodes.values()].sort(
    (a, b) =>
      a.entry.cls - b.entry.cls ||
      a.entry.kind - b.entry.kind ||
      compareBytes(a.entry.keyBytes, b.entry.keyBytes),
  );
  const nodeRecords: NodeRecord[] = sorted.map(({ entry, rules: list }) => ({
    cls: entry.cls,
    kind: entry.kind,
    key: entry.key,
    rules: list,
  }));
  const records: RuleTableRecords = { policies: policyRecords, rules: ruleRecords, nodes: nodeRecords };
  const syscalls = createSyscallRecords(policies, policyIndex);
  if (syscalls.length > 0) records.syscalls = syscalls;
  const presets = createPresetRecords(policies, policyIndex);
  if (presets.length > 0) records.presets = presets;
  return { records, hashes: sorted.map((n) => n.entry.hash) };
}

/** The records of the rule table of a rule set. */
export function createRuleTableRecords(ruleSet: RuleSet): RuleTableRecords {
  return createRecordsAndHashes(ruleSet).records;
}

/** The `syscalls` rules of the policies in precedence order (compareSyscallPrecedence). */
function createSyscallRecords(policies: PolicyIR[], policyIndex: Map<PolicyIR, number>): SyscallRecord[] {
  const rules = policies.flatMap((policy) => policy.syscallRules.map((rule) => ({ policy, rule })));
  rules.sort(compareSyscallPrecedence);
  return rules.map(({ policy, rule }) => ({
    policy: policyIndex.get(policy) ?? 0,
    syscalls: [...rule.syscalls],
    path: rule.path ?? '',
    recursive: rule.recursive,
    sources: rule.fromSource.map(toSourceRecord),
    action: ACTION_CODES[rule.action],
    severity: rule.severity,
    message: rule.message,
    tags: [...rule.tags],
    file: rule.location.file,
    line: rule.location.line,
    column: rule.location.column,
    pointer: rule.location.pointer,
  }));
}

const PRESET_ACTION_RANK: Record<Action, number> = {
  [Action.Block]: 0,
  [Action.Audit]: 1,
  [Action.Allow]: 2,
};

/** The presets of the policies: Block, Audit, Allow, then in policy (table) order and where written. */
function createPresetRecords(policies: PolicyIR[], policyIndex: Map<PolicyIR, number>): PresetRecord[] {
  const all = policies.flatMap((policy) => policy.presets.map((preset) => ({ policy, preset })));
  all.sort(
    (a, b) =>
      PRESET_ACTION_RANK[a.preset.action] - PRESET_ACTION_RANK[b.preset.action] ||
      (policyIndex.get(a.policy) ?? 0) - (policyIndex.get(b.policy) ?? 0) ||
      (a.preset.location.pointer < b.preset.location.pointer
        ? -1
        : a.preset.location.pointer > b.preset.location.pointer
          ? 1
          : 0),
  );
  return all.map(({ policy, preset }) => ({
    policy: policyIndex.get(policy) ?? 0,
    name: preset.name,
    action: ACTION_CODES[preset.action],
    severity: preset.severity,
    message: preset.message,
    tags: [...preset.tags],
    file: preset.location.file,
    line: preset.location.line,
    column: preset.location.column,
    pointer: preset.location.pointer,
  }));
}

/**
 * Encodes records as the bytes of docs/rule-table.md (string table, references and hash buckets added).
 * `nodeHashes`, when given, holds hashNodeKey of each of `records.nodes` (computed once per rule when the
 * policy was prepared).
 */
export function encodeRuleTable(records: RuleTableRecords, nodeHashes?: readonly Hash64[]): Uint8Array {
  const { policies, rules } = records;
  const strings = new StringTable();
  const refs: number[] = [];

  // Policies and their selector labels.
  const policyBytes = new Uint8Array(policies.length * POLICY_RECORD_SIZE);
  const pv = new DataView(policyBytes.buffer);
  const labelRecords: { key: number; value: number; op: number; group: number }[] = [];
  policies.forEach((policy, i) => {
    const at = i * POLICY_RECORD_SIZE;
    pv.setUint32(at + PolicyField.name, strings.add(policy.name), true);
    pv.setUint32(at + PolicyField.namespace, strings.add(policy.namespace), true);
    pv.setUint8(at + PolicyField.kind, policy.kind);
    pv.setUint8(at + PolicyField.allowUnscoped, policy.allowUnscoped);
    pv.setUint8(at + PolicyField.allowScoped, policy.allowScoped);
    pv.setUint32(at + PolicyField.labelStart, labelRecords.length, true);
    pv.setUint32(at + PolicyField.labelCount, policy.labels.length, true);
    pv.setUint32(at + PolicyField.file, strings.add(policy.file), true);
    pv.setUint32(at + PolicyField.line, policy.line, true);
    pv.setUint32(at + PolicyField.expressionGroups, policy.expressionGroups, true);
    for (const l of policy.labels) {
      labelRecords.push({ key: strings.add(l.key), value: strings.add(l.value), op: l.op, group: l.group });
    }
  });
  const labelBytes = new Uint8Array(labelRecords.length * LABEL_RECORD_SIZE);
  const lv = new DataView(labelBytes.buffer);
  labelRecords.forEach((l, i) => {
    const at = i * LABEL_RECORD_SIZE;
    lv.setUint32(at + LabelField.key, l.key, true);
    lv.setUint32(at + LabelField.value, l.value, true);
    lv.setUint8(at + LabelField.op, l.op);
    lv.setUint16(at + LabelField.group, l.group, true);
  });

  // Rules, their sources, tags and arguments.
  const sources: { value: number; kind: number; recursive: boolean }[] = [];
  const ruleBytes = new Uint8Array(rules.length * RULE_RECORD_SIZE);
  const rv = new DataView(ruleBytes.buffer);
  rules.forEach((rule, r) => {
    const at = r * RULE_RECORD_SIZE;
    rv.setUint32(at + RuleField.policy, rule.policy, true);
    rv.setUint8(at + RuleField.cls, rule.cls);
    rv.setUint8(at + RuleField.matcher, rule.matcher);
    rv.setUint8(at + RuleField.action, rule.action);
    rv.setUint8(at + RuleField.flags, rule.flags);
    rv.setUint32(at + RuleField.value, strings.add(rule.value), true);
    rv.setUint16(at + RuleField.depth, rule.depth, true);
    rv.setUint16(at + RuleField.protocol, rule.protocol, true);
    rv.setUint32(at + RuleField.sourceStart, sources.length, true);
    rv.setUint32(at + RuleField.sourceCount, rule.sources.length, true);
    for (const s of rule.sources)
      sources.push({ value: strings.add(s.value), kind: s.kind, recursive: s.recursive });
    rv.setUint32(at + RuleField.severity, rule.severity, true);
    rv.setUint32(at + RuleField.message, strings.add(rule.message), true);
    rv.setUint32(at + RuleField.tagsStart, refs.length, true);
    rv.setUint32(at + RuleField.tagsCount, rule.tags.length, true);
    for (const t of rule.tags) refs.push(strings.add(t));
    // Address rules list their ports where other rules list their arguments: numbers, not strings.
    rv.setUint32(at + RuleField.argsStart, refs.length, true);
    if (rule.matcher === MatcherCode.address) {
      rv.setUint32(at + RuleField.argsCount, rule.ports.length, true);
      refs.push(...rule.ports);
    } else {
      rv.setUint32(at + RuleField.argsCount, rule.args.length, true);
      for (const a of rule.args) refs.push(strings.add(a));
    }
    rv.setUint32(at + RuleField.file, strings.add(rule.file), true);
    rv.setUint32(at + RuleField.line, rule.line, true);
    rv.setUint32(at + RuleField.column, rule.column, true);
    rv.setUint32(at + RuleField.pointer, strings.add(rule.pointer), true);
  });
  const sourceBytes = new Uint8Array(sources.length * SOURCE_RECORD_SIZE);
  const sv = new DataView(sourceBytes.buffer);
  sources.forEach((s, i) => {
    const at = i * SOURCE_RECORD_SIZE;
    sv.setUint32(at + SourceField.value, s.value, true);
    sv.setUint8(at + SourceField.kind, s.kind);
    sv.setUint8(at + SourceField.recursive, s.recursive ? 1 : 0);
  });

  // Index nodes (already in (class, kind, key bytes) order) and the open-addressing bucket array.
  const nodeList = records.nodes;
  const nodeBytes = new Uint8Array(nodeList.length * NODE_RECORD_SIZE);
  const nv = new DataView(nodeBytes.buffer);
  let bucketCount = MIN_BUCKETS;
  while (bucketCount < 2 * nodeList.length) bucketCount *= 2;
  const buckets = new Uint32Array(bucketCount);
  nodeList.forEach((node, n) => {
    const at = n * NODE_RECORD_SIZE;
    const h = nodeHashes?.[n] ?? hashNodeKey(node.cls, node.kind, encoder.encode(node.key));
    nv.setUint32(at + NodeField.hashLo, h.lo, true);
    nv.setUint32(at + NodeField.hashHi, h.hi, true);
    nv.setUint32(at + NodeField.key, strings.add(node.key), true);
    nv.setUint8(at + NodeField.cls, node.cls);
    nv.setUint8(at + NodeField.kind, node.kind);
    nv.setUint32(at + NodeField.refsStart, refs.length, true);
    nv.setUint32(at + NodeField.refsCount, node.rules.length, true);
    refs.push(...node.rules);
    let i = h.lo & (bucketCount - 1);
    while (buckets[i] !== 0) i = (i + 1) & (bucketCount - 1);
    buckets[i] = n + 1;
  });

  // Layout.
  const stringBytes = strings.toBytes();
  const refBytes = new Uint8Array(refs.length * 4);
  const refView = new DataView(refBytes.buffer);
  refs.forEach((v, i) => refView.setUint32(i * 4, v, true));
  const bucketBytes = new Uint8Array(bucketCount * 4);
  const bucketView = new DataView(bucketBytes.buffer);
  buckets.forEach((v, i) => bucketView.setUint32(i * 4, v, true));

  const sections = [
    stringBytes,
    policyBytes,
    labelBytes,
    ruleBytes,
    sourceBytes,
    refBytes,
    nodeBytes,
    bucketBytes,
  ];
  const offsets: number[] = [];
  let size = HEADER_SIZE;
  for (const s of sections) {
    size = alignSection(size);
    offsets.push(size);
    size += s.length;
  }
  size = alignSection(size);
  const out = new Uint8Array(size);
  sections.forEach((s, i) => out.set(s, offsets[i] ?? 0));
  const hv = new DataView(out.buffer);
  out.set(MAGIC, 0);
  hv.setUint16(Header.versionMajor, VERSION_MAJOR, true);
  hv.setUint16(Header.versionMinor, VERSION_MINOR, true);
  hv.setUint32(Header.headerSize, HEADER_SIZE, true);
  hv.setUint32(Header.fileSize, size, true);
  const counts = [
    stringBytes.length,
    policies.length,
    labelRecords.length,
    rules.length,
    sources.length,
    refs.length,
    nodeList.length,
    bucketCount,
  ];
  const fields: [number, number][] = [
    [Header.stringOffset, Header.stringSize],
    [Header.policyOffset, Header.policyCount],
    [Header.labelOffset, Header.labelCount],
    [Header.ruleOffset, Header.ruleCount],
    [Header.sourceOffset, Header.sourceCount],
    [Header.refOffset, Header.refCount],
    [Header.nodeOffset, Header.nodeCount],
    [Header.bucketOffset, Header.bucketCount],
  ];
  fields.forEach(([o, c], i) => {
    hv.setUint32(o, offsets[i] ?? 0, true);
    hv.setUint32(c, counts[i] ?? 0, true);
  });
  return out;
}

/** Builds the rule table bytes for a rule set. */
export function buildRuleTable(ruleSet: RuleSet): Uint8Array {
  return buildRuleTableImage(ruleSet).bytes;
}

/** Builds the rule table of a rule set in both forms: records and bytes, computed once. */
export function buildRuleTableImage(ruleSet: RuleSet): RuleTableImage {
  const { records, hashes } = createRecordsAndHashes(ruleSet);
  return { records, bytes: encodeRuleTable(records, hashes) };
}

function toSourceRecord(s: SourceMatcher): SourceRecord {
  return s.kind === 'path'
    ? { kind: SourceCode.path, value: s.path, recursive: false }
    : { kind: SourceCode.directory, value: normalizeDirectory(s.dir), recursive: s.recursive };
}
