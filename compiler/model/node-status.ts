// The per-node enforcement report: what one node's enforcer enforces, policy by policy. The contract between
// the enforcers (writers, one object per node in the install namespace: bounded by the node count, never per
// pod), the status controller (reads them all, writes each policy's `status`) and `rtctl install --verify` /
// `rtctl uninstall` (read which plane each node runs, and whether a node has released enforcement).
import { createHash } from 'node:crypto';

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
