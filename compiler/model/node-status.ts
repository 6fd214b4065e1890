// The per-node enforcement report: what one node's enforcer enforces, policy by policy. The contract between
// the enforcers (writers, one object per node in the install namespace: bounded by the node count, never per
// pod), the status controller (reads them all, writes each policy's `status`) and `rtctl install --verify` /
// `rtctl uninstall` (read which plane each node runs, and whether a node has released enforcement).
import { createHash } from 'node:crypto';
import { isRecord } from './json-value.js';

/** Label on every report ConfigMap (value `"true"`); the controller lists by it. */
export const NODE_STATUS_LABEL = 'security.runtime.com/node-status';
/** Data key of the report ConfigMap holding the JSON of a {@link NodeStatusReport}. */
export const NODE_STATUS_DATA_KEY = 'status.json';
/** Name prefix of the report ConfigMaps. */
export const NODE_STATUS_NAME_PREFIX = 'rtctl-node-';
/**
 * ConfigMap in the install namespace that asks every enforcer to release enforcement (`rtctl uninstall` creates
 * it with data `{ release: "true" }` before it deletes the DaemonSet). An enforcer that sees it releases its data
 * plane and reports `released: true`.
 */
export const RELEASE_CONFIGMAP_NAME = 'rtctl-release';
/** Data key of {@link RELEASE_CONFIGMAP_NAME}. */
export const RELEASE_DATA_KEY = 'release';
/** Version of the report's JSON form. */
export const NODE_STATUS_VERSION = 1;

const MAX_OBJECT_NAME = 253;

/** The report ConfigMap's name for a node (hashed when the node name would make it longer than 253). */
export function nodeStatusObjectName(node: string): string {
  const name = `${NODE_STATUS_NAME_PREFIX}${node}`;
  if (name.length <= MAX_OBJECT_NAME) return name;
  const digest = createHash('sha256').update(node).digest('hex').slice(0, 16);
  return `${name.slice(0, MAX_OBJECT_NAME - digest.length - 1)}-${digest}`;
}

/** A rule (or rule form) the node's plane does not enforce, or only audits. */
export interface NodeRuleGap {
  /** JSON pointer of the rule in the policy (`/spec/network/matchProtocols/0`). */
  rule: string;
  level: 'audited' | 'not-enforced';
  reason: string;
}

/** What one node does with one policy. */
export interface NodePolicyReport {
  kind: 'RuntimePolicy' | 'RuntimeHostPolicy';
  /** Absent for RuntimeHostPolicy. */
  namespace?: string;
  name: string;
  uid?: string;
  /** `metadata.generation` of the policy the node enforces. */
  generation: number;
  /** Workloads of this node the policy selects (containers, or 1 for the host). */
  workloads: number;
  /** True when the plane has the rules of this generation in force. */
  enforced: boolean;
  gaps: NodeRuleGap[];
  /**
   * Findings (`RTnnnn pointer: message`, bounded) that kept this generation out of the node's rule set: the
   * policy is known to the node but not enforced at all. Absent when there are none.
   */
  errors?: string[];
}

/** One node's report (the JSON under {@link NODE_STATUS_DATA_KEY}). */
export interface NodeStatusReport {
  version: typeof NODE_STATUS_VERSION;
  node: string;
  /** Data plane in use (`fanotify`, `bpf-lsm`, …). */
  plane: string;
  /** rtctl version of the enforcer. */
  rtctlVersion: string;
  /** ISO-8601 UTC time of the report. */
  updatedAt: string;
  /** True once the enforcer released enforcement after a {@link RELEASE_CONFIGMAP_NAME} request. */
  released: boolean;
  policies: NodePolicyReport[];
}

/** Largest report text read (a report is bounded by the node's policies; anything larger is refused). */
export const MAX_NODE_STATUS_BYTES = 1024 * 1024;

/** A report, or why its text is not one (with the JSON pointer of the first bad field). */
export type NodeStatusParse = { ok: true; report: NodeStatusReport } | { ok: false; error: string };

const isString = (v: unknown): v is string => typeof v === 'string';
const isCount = (v: unknown): v is number => typeof v === 'number' && Number.isSafeInteger(v) && v >= 0;

function readPolicy(v: unknown, at: string): NodePolicyReport | string {
  if (!isRecord(v)) return `${at}: expected an object`;
  const { kind, namespace, name, uid, generation, workloads, enforced, gaps, errors } = v;
  if (kind !== 'RuntimePolicy' && kind !== 'RuntimeHostPolicy')
    return `${at}/kind: expected RuntimePolicy or RuntimeHostPolicy`;
  if (!isString(name) || name === '') return `${at}/name: expected a name`;
  if (namespace !== undefined && !isString(namespace)) return `${at}/namespace: expected a string`;
  if (uid !== undefined && !isString(uid)) return `${at}/uid: expected a string`;
  if (!isCount(generation)) return `${at}/generation: expected a whole number`;
  if (!isCount(workloads)) return `${at}/workloads: expected a whole number`;
  if (typeof enforced !== 'boolean') return `${at}/enforced: expected true or false`;
  if (!Array.isArray(gaps)) return `${at}/gaps: expected a list`;
  const out: NodePolicyReport = { kind, name, generation, workloads, enforced, gaps: [] };
  if (namespace !== undefined) out.namespace = namespace;
  if (uid !== undefined) out.uid = uid;
  for (const [i, g] of gaps.entries()) {
    if (
      !isRecord(g) ||
      !isString(g['rule']) ||
      !isString(g['reason']) ||
      (g['level'] !== 'audited' && g['level'] !== 'not-enforced')
    )
      return `${at}/gaps/${i}: expected {rule, level: audited|not-enforced, reason}`;
    out.gaps.push({ rule: g['rule'], level: g['level'], reason: g['reason'] });
  }
  if (errors !== undefined) {
    if (!Array.isArray(errors) || !errors.every(isString)) return `${at}/errors: expected a list of strings`;
    out.errors = errors;
  }
  return out;
}

/** Reads a report ConfigMap's JSON (bounded; every field checked), never throwing. */
export function parseNodeStatusReport(text: string): NodeStatusParse {
  if (text.length > MAX_NODE_STATUS_BYTES)
    return { ok: false, error: `larger than ${MAX_NODE_STATUS_BYTES} bytes` };
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    return { ok: false, error: 'not JSON' };
  }
  if (!isRecord(v)) return { ok: false, error: 'expected a JSON object' };
  if (v['version'] !== NODE_STATUS_VERSION)
    return {
      ok: false,
      error: `/version: expected ${NODE_STATUS_VERSION}, got ${JSON.stringify(v['version'])}`,
    };
  for (const key of ['node', 'plane', 'rtctlVersion', 'updatedAt'] as const)
    if (!isString(v[key])) return { ok: false, error: `/${key}: expected a string` };
  if (Number.isNaN(Date.parse(String(v['updatedAt']))))
    return { ok: false, error: '/updatedAt: expected an ISO-8601 time' };
  if (typeof v['released'] !== 'boolean') return { ok: false, error: '/released: expected true or false' };
  const policies = v['policies'];
  if (!Array.isArray(policies)) return { ok: false, error: '/policies: expected a list' };
  const report: NodeStatusReport = {
    version: NODE_STATUS_VERSION,
    node: String(v['node']),
    plane: String(v['plane']),
    rtctlVersion: String(v['rtctlVersion']),
    updatedAt: String(v['updatedAt']),
    released: v['released'],
    policies: [],
  };
  for (const [i, p] of policies.entries()) {
    const read = readPolicy(p, `/policies/${i}`);
    if (typeof read === 'string') return { ok: false, error: read };
    report.policies.push(read);
  }
  return { ok: true, report };
}

/** The report's JSON with a fixed key order (byte-identical for equal reports). */
export function formatNodeStatusReport(report: NodeStatusReport): string {
  return JSON.stringify({
    version: report.version,
    node: report.node,
    plane: report.plane,
    rtctlVersion: report.rtctlVersion,
    updatedAt: report.updatedAt,
    released: report.released,
    policies: report.policies.map((p) => ({
      kind: p.kind,
      ...(p.namespace === undefined ? {} : { namespace: p.namespace }),
      name: p.name,
      ...(p.uid === undefined ? {} : { uid: p.uid }),
      generation: p.generation,
      workloads: p.workloads,
      enforced: p.enforced,
      gaps: p.gaps.map((g) => ({ rule: g.rule, level: g.level, reason: g.reason })),
      ...(p.errors === undefined ? {} : { errors: p.errors }),
    })),
  });
}
