// Builds the binary rule table of docs/rule-table.md from a RuleSet. Pure and deterministic: the same
// rule set (in any policy order) gives the same bytes.
import { Action, type PolicyIR, type Rule, type RuleSet, type SourceMatcher } from '../ir/rule-set.js';
import { getDirectoryDepth, getGlobPrefixDirectory, normalizeDirectory } from '../decide/path-match.js';
import { isMatcherForOperation, normalizeCapability } from '../decide/match-rule.js';
import { compareRulePrecedence, type PolicyRule } from '../decide/precedence.js';
import {
  ACTION_CODES,
  CLASS_CODES,
  HEADER_SIZE,
  Header,
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
} from './rule-table-format.js';

const encoder = new TextEncoder();

/** Deduplicated string table: `u32 length`, bytes, NUL, padded to 4. Reference 0 is the empty string. */
class StringTable {
  private readonly chunks: Uint8Array[] = [];
  private readonly offsets = new Map<string, number>();
  private size = 0;

  constructor() {
    this.add('');
  }

  add(value: string): number {
    const known = this.offsets.get(value);
    if (known !== undefined) return known;
    const bytes = encoder.encode(value);
    const padded = (4 + bytes.length + 1 + 3) & ~3;
    const chunk = new Uint8Array(padded);
    new DataView(chunk.buffer).setUint32(0, bytes.length, true);
    chunk.set(bytes, 4);
    const offset = this.size;
    this.chunks.push(chunk);
    this.offsets.set(value, offset);
    this.size += padded;
    return offset;
  }

  toBytes(): Uint8Array {
    const out = new Uint8Array(this.size);
    let at = 0;
    for (const c of this.chunks) {
      out.set(c, at);
      at += c.length;
    }
    return out;
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

function compareBytes(a: Uint8Array, b: Uint8Array): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const d = (a[i] ?? 0) - (b[i] ?? 0);
    if (d !== 0) return d;
  }
  return a.length - b.length;
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
  }
}

function splitLabelPair(pair: string): [string, string] {
  const eq = pair.indexOf('=');
  return eq === -1 ? [pair, ''] : [pair.slice(0, eq), pair.slice(eq + 1)];
}

interface LabelRecord {
  key: string;
  value: string;
  op: number;
  group: number;
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

function align8(n: number): number {
  return (n + 7) & ~7;
}

interface IndexNode {
  classCode: number;
  kind: NodeKind;
  key: string;
  keyBytes: Uint8Array;
  rules: number[];
}

/** The policies in table order and the rules in precedence order, as the table stores them. */
export function orderRuleTable(ruleSet: RuleSet): { policies: PolicyIR[]; rules: PolicyRule[] } {
  const policies = [...ruleSet.policies].sort(comparePolicies);
  const rules: PolicyRule[] = [];
  for (const policy of policies) {
    for (const rule of policy.rules)
      if (isMatcherForOperation(rule.matcher, rule.operation)) rules.push({ policy, rule });
  }
  rules.sort(compareRulePrecedence);
  return { policies, rules };
}

/** Builds the rule table bytes for a rule set. */
export function buildRuleTable(ruleSet: RuleSet): Uint8Array {
  const { policies, rules } = orderRuleTable(ruleSet);
  const policyIndex = new Map<PolicyIR, number>(policies.map((p, i) => [p, i]));
  const strings = new StringTable();
  const refs: number[] = [];
  const sources: { value: number; kind: number; recursive: boolean }[] = [];

  // Policies and their selector labels.
  const policyBytes = new Uint8Array(policies.length * POLICY_RECORD_SIZE);
  const pv = new DataView(policyBytes.buffer);
  const labelRecords: { key: number; value: number; op: number; group: number }[] = [];
  const allowUnscoped = new Array<number>(policies.length).fill(0);
  const allowScoped = new Array<number>(policies.length).fill(0);
  for (const { policy, rule } of rules) {
    if (rule.action !== Action.Allow) continue;
    const i = policyIndex.get(policy) ?? 0;
    const bit = 1 << CLASS_CODES[rule.operation];
    if (rule.fromSource.length > 0) allowScoped[i] = (allowScoped[i] ?? 0) | bit;
    else allowUnscoped[i] = (allowUnscoped[i] ?? 0) | bit;
  }
  policies.forEach((policy, i) => {
    const at = i * POLICY_RECORD_SIZE;
    const { labels, groups } = collectLabels(policy);
    pv.setUint32(at + 0, strings.add(policy.name), true);
    pv.setUint32(at + 4, strings.add(policy.namespace), true);
    pv.setUint8(at + 8, POLICY_KIND_CODES[policy.kind]);
    pv.setUint8(at + 9, allowUnscoped[i] ?? 0);
    pv.setUint8(at + 10, allowScoped[i] ?? 0);
    pv.setUint32(at + 12, labelRecords.length, true);
    pv.setUint32(at + 16, labels.length, true);
    pv.setUint32(at + 20, strings.add(policy.location.file), true);
    pv.setUint32(at + 24, policy.location.line, true);
    pv.setUint32(at + 28, groups, true);
    for (const l of labels) {
      labelRecords.push({ key: strings.add(l.key), value: strings.add(l.value), op: l.op, group: l.group });
    }
  });
  const labelBytes = new Uint8Array(labelRecords.length * LABEL_RECORD_SIZE);
  const lv = new DataView(labelBytes.buffer);
  labelRecords.forEach((l, i) => {
    const at = i * LABEL_RECORD_SIZE;
    lv.setUint32(at, l.key, true);
    lv.setUint32(at + 4, l.value, true);
    lv.setUint8(at + 8, l.op);
    lv.setUint16(at + 10, l.group, true);
  });

  // Rules, their sources, tags and arguments, and the index nodes that list them.
  const nodes = new Map<string, IndexNode>();
  const addToNode = (classCode: number, kind: NodeKind, key: string, ruleIndex: number): void => {
    const id = `${classCode}\u0000${kind}\u0000${key}`;
    let node = nodes.get(id);
    if (node === undefined) {
      node = { classCode, kind, key, keyBytes: encoder.encode(key), rules: [] };
      nodes.set(id, node);
    }
    if (node.rules[node.rules.length - 1] !== ruleIndex) node.rules.push(ruleIndex);
  };
  const ruleBytes = new Uint8Array(rules.length * RULE_RECORD_SIZE);
  const rv = new DataView(ruleBytes.buffer);
  rules.forEach(({ policy, rule }, r) => {
    const at = r * RULE_RECORD_SIZE;
    const classCode = CLASS_CODES[rule.operation];
    const m = describeMatcher(rule);
    let flags = 0;
    if (rule.matcher.kind === 'directory' && rule.matcher.recursive) flags |= RuleFlag.recursive;
    if (rule.readOnly) flags |= RuleFlag.readOnly;
    if (rule.ownerOnly) flags |= RuleFlag.ownerOnly;
    if (rule.pts) flags |= RuleFlag.pts;
    if (rule.allowedArgs.length > 0) flags |= RuleFlag.hasArgs;
    rv.setUint32(at + 0, policyIndex.get(policy) ?? 0, true);
    rv.setUint8(at + 4, classCode);
    rv.setUint8(at + 5, m.code);
    rv.setUint8(at + 6, ACTION_CODES[rule.action]);
    rv.setUint8(at + 7, flags);
    rv.setUint32(at + 8, strings.add(m.value), true);
    rv.setUint16(at + 12, Math.min(m.depth, 0xffff), true);
    rv.setUint32(at + 16, sources.length, true);
    rv.setUint32(at + 20, rule.fromSource.length, true);
    for (const s of rule.fromSource) sources.push(encodeSource(s, strings));
    rv.setUint32(at + 24, rule.severity, true);
    rv.setUint32(at + 28, strings.add(rule.message), true);
    rv.setUint32(at + 32, refs.length, true);
    rv.setUint32(at + 36, rule.tags.length, true);
    for (const t of rule.tags) refs.push(strings.add(t));
    rv.setUint32(at + 40, refs.length, true);
    rv.setUint32(at + 44, rule.allowedArgs.length, true);
    for (const a of rule.allowedArgs) refs.push(strings.add(a));
    rv.setUint32(at + 48, strings.add(rule.location.file), true);
    rv.setUint32(at + 52, rule.location.line, true);
    rv.setUint32(at + 56, rule.location.column, true);
    rv.setUint32(at + 60, strings.add(rule.location.pointer), true);
    addToNode(classCode, m.node, m.key, r);
    if (rule.action === Action.Allow) {
      for (const s of rule.fromSource) {
        if (s.kind === 'path') addToNode(classCode, NodeKind.allowSourcePath, s.path, r);
        else addToNode(classCode, NodeKind.allowSourceDirectory, normalizeDirectory(s.dir), r);
      }
    }
  });
  const sourceBytes = new Uint8Array(sources.length * SOURCE_RECORD_SIZE);
  const sv = new DataView(sourceBytes.buffer);
  sources.forEach((s, i) => {
    const at = i * SOURCE_RECORD_SIZE;
    sv.setUint32(at, s.value, true);
    sv.setUint8(at + 4, s.kind);
    sv.setUint8(at + 5, s.recursive ? 1 : 0);
  });

  // Index nodes in (class, kind, key bytes) order, and the open-addressing bucket array.
  const nodeList = [...nodes.values()].sort(
    (a, b) => a.classCode - b.classCode || a.kind - b.kind || compareBytes(a.keyBytes, b.keyBytes),
  );
  const nodeBytes = new Uint8Array(nodeList.length * NODE_RECORD_SIZE);
  const nv = new DataView(nodeBytes.buffer);
  let bucketCount = MIN_BUCKETS;
  while (bucketCount < 2 * nodeList.length) bucketCount *= 2;
  const buckets = new Uint32Array(bucketCount);
  nodeList.forEach((node, n) => {
    const at = n * NODE_RECORD_SIZE;
    const h = hashNodeKey(node.classCode, node.kind, node.keyBytes);
    nv.setUint32(at, h.lo, true);
    nv.setUint32(at + 4, h.hi, true);
    nv.setUint32(at + 8, strings.add(node.key), true);
    nv.setUint8(at + 12, node.classCode);
    nv.setUint8(at + 13, node.kind);
    nv.setUint32(at + 16, refs.length, true);
    nv.setUint32(at + 20, node.rules.length, true);
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
    size = align8(size);
    offsets.push(size);
    size += s.length;
  }
  size = align8(size);
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

function encodeSource(
  s: SourceMatcher,
  strings: StringTable,
): { value: number; kind: number; recursive: boolean } {
  return s.kind === 'path'
    ? { value: strings.add(s.path), kind: SourceCode.path, recursive: false }
    : { value: strings.add(normalizeDirectory(s.dir)), kind: SourceCode.directory, recursive: s.recursive };
}
