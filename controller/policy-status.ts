// The `status` the controller writes on every RuntimePolicy and RuntimeHostPolicy (kstatus conventions): what
// the CRDs declare (compiler/backends/crd/crd-status-schema.ts), what Argo CD's health.lua and Flux's CEL
// expressions read (install/gitops/), and what the aggregation (aggregate-policy-status.ts) produces.

/** The Ready condition's status values. */
export const ConditionStatus = { True: 'True', False: 'False', Unknown: 'Unknown' } as const;
export type ConditionStatus = (typeof ConditionStatus)[keyof typeof ConditionStatus];

/** Why Ready has its status (machine-readable, CamelCase as Kubernetes reasons are). */
export const ReadyReason = {
  /** Every node whose workloads the policy selects enforces the current generation (or it selects none). */
  Enforced: 'Enforced',
  /** Some nodes have not reported the current generation yet (within the grace period). */
  Pending: 'Pending',
  /** No enforcer has reported at all. */
  NoReports: 'NoReports',
  /** The enforcers refuse this generation (lint errors; the webhook normally stops such a policy). */
  Invalid: 'Invalid',
  /** A node selects workloads but its plane does not have the policy in force. */
  NotEnforced: 'NotEnforced',
  /** A node enforces the policy but its plane cannot enforce some of its rules. */
  RulesNotEnforced: 'RulesNotEnforced',
  /** A node still reports an older generation after the grace period. */
  StaleGeneration: 'StaleGeneration',
  /** A node has no report, or a report older than the staleness threshold. */
  NodeNotReporting: 'NodeNotReporting',
  /** A node's enforcer released enforcement (`rtctl uninstall`). */
  Released: 'Released',
} as const;
export type ReadyReason = (typeof ReadyReason)[keyof typeof ReadyReason];

/** The Ready condition (metav1.Condition's fields). */
export interface ReadyCondition {
  type: 'Ready';
  status: ConditionStatus;
  reason: ReadyReason;
  message: string;
  observedGeneration: number;
  /** RFC 3339 UTC, seconds; kept while `status` stays the same. */
  lastTransitionTime: string;
}

/** A rule some nodes do not enforce (or only audit). */
export interface RuleNotEnforced {
  /** JSON pointer of the rule in the policy. */
  rule: string;
  level: 'audited' | 'not-enforced';
  reason: string;
  /** Up to {@link MAX_RULE_NODES} node names, sorted. */
  nodes: string[];
  /** How many nodes in all. */
  nodeCount: number;
}

/** A policy's status. */
export interface PolicyStatus {
  observedGeneration: number;
  /** Nodes whose workloads the policy selects that enforce every rule of the current generation. */
  enforcedNodes: number;
  /** Nodes whose workloads the policy selects (as their reports say, or host policies by node labels). */
  expectedNodes: number;
  /** At most {@link MAX_RULES_LISTED} entries, sorted by rule. */
  rulesNotEnforced: RuleNotEnforced[];
  conditions: ReadyCondition[];
}

/** Rules listed in `status.rulesNotEnforced` at most. */
export const MAX_RULES_LISTED = 20;
/** Nodes named per listed rule at most. */
export const MAX_RULE_NODES = 5;
/** Longest condition message. */
export const MAX_MESSAGE_LENGTH = 1024;

/** True when two statuses are the same (the controller writes only on a difference). */
export function isSameStatus(a: PolicyStatus | undefined, b: PolicyStatus | undefined): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

/** The status as written (a fixed key order, so equal statuses serialize alike). */
export function normalizeStatus(s: PolicyStatus): PolicyStatus {
  return {
    observedGeneration: s.observedGeneration,
    enforcedNodes: s.enforcedNodes,
    expectedNodes: s.expectedNodes,
    rulesNotEnforced: s.rulesNotEnforced.map((r) => ({
      rule: r.rule,
      level: r.level,
      reason: r.reason,
      nodes: [...r.nodes],
      nodeCount: r.nodeCount,
    })),
    conditions: s.conditions.map((c) => ({
      type: c.type,
      status: c.status,
      reason: c.reason,
      message: c.message,
      observedGeneration: c.observedGeneration,
      lastTransitionTime: c.lastTransitionTime,
    })),
  };
}

const REASONS = new Set<string>(Object.values(ReadyReason));
const STATUSES = new Set<string>(Object.values(ConditionStatus));

/** Reads the status found on an object (what this controller wrote before); undefined when absent or not ours. */
export function readPolicyStatus(v: unknown): PolicyStatus | undefined {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return undefined;
  const s = v as Record<string, unknown>;
  const counts = ['observedGeneration', 'enforcedNodes', 'expectedNodes'] as const;
  if (!counts.every((k) => Number.isSafeInteger(s[k]))) return undefined;
  const conditions = Array.isArray(s['conditions']) ? (s['conditions'] as unknown[]) : [];
  const ready = conditions.filter(
    (c): c is ReadyCondition =>
      typeof c === 'object' &&
      c !== null &&
      (c as Record<string, unknown>)['type'] === 'Ready' &&
      STATUSES.has(String((c as Record<string, unknown>)['status'])) &&
      REASONS.has(String((c as Record<string, unknown>)['reason'])) &&
      typeof (c as Record<string, unknown>)['message'] === 'string' &&
      Number.isSafeInteger((c as Record<string, unknown>)['observedGeneration']) &&
      typeof (c as Record<string, unknown>)['lastTransitionTime'] === 'string',
  );
  const rules = Array.isArray(s['rulesNotEnforced']) ? (s['rulesNotEnforced'] as unknown[]) : [];
  return normalizeStatus({
    observedGeneration: s['observedGeneration'] as number,
    enforcedNodes: s['enforcedNodes'] as number,
    expectedNodes: s['expectedNodes'] as number,
    rulesNotEnforced: rules.filter(
      (r): r is RuleNotEnforced =>
        typeof r === 'object' &&
        r !== null &&
        typeof (r as Record<string, unknown>)['rule'] === 'string' &&
        Array.isArray((r as Record<string, unknown>)['nodes']),
    ),
    conditions: ready,
  });
}
