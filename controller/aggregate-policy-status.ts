// Aggregates the nodes' enforcement reports into one policy's status (pure). A node counts for a policy when
// its fresh report says the policy selects workloads there (host policies: also when the node's labels match
// and the node says nothing current). Ready is True only when every such node enforces every rule of the
// current generation and no node is silent; a policy that selects nothing on any reporting node is Ready
// with expectedNodes 0 (it is enforced wherever it applies: nowhere yet). See docs/install.md, "Policy status".
import type { NodePolicyReport, NodeStatusReport } from '../compiler/model/node-status.js';
import {
  ConditionStatus,
  MAX_MESSAGE_LENGTH,
  MAX_RULE_NODES,
  MAX_RULES_LISTED,
  ReadyReason,
  normalizeStatus,
  type PolicyStatus,
  type ReadyCondition,
  type RuleNotEnforced,
} from './policy-status.js';

/** The policy whose status is computed (from its API object). */
export interface PolicyTarget {
  kind: 'RuntimePolicy' | 'RuntimeHostPolicy';
  /** RuntimePolicy only. */
  namespace?: string;
  name: string;
  uid?: string;
  generation: number;
  /** RuntimeHostPolicy: `spec.nodeSelector.matchLabels` (a value `*` matches any value). */
  nodeSelector?: Record<string, string>;
}

/** A Node of the cluster. */
export interface NodeInfo {
  name: string;
  labels: Record<string, string>;
}

/** Everything the status depends on. */
export interface AggregateInput {
  policy: PolicyTarget;
  /** The cluster's Nodes; undefined when unknown (then the reporting nodes are the nodes). */
  nodes?: readonly NodeInfo[] | undefined;
  /** The reports found (reports of nodes not in `nodes` are ignored: their node is gone). */
  reports: readonly NodeStatusReport[];
  /** Now, ms since the epoch. */
  now: number;
  /** A report older than this counts as no report (the enforcers send a heartbeat well within it). */
  staleAfterMs: number;
  /** When the controller first saw this generation of the policy, ms since the epoch. */
  generationSeenAt: number;
  /** Nodes behind the current generation are pending (Unknown) this long, then stale (False). */
  pendingGraceMs: number;
  /** The status on the object now (its Ready transition time is kept while Ready's status is unchanged). */
  previous?: PolicyStatus;
}

/** Node names in a message at most, per list. */
const MESSAGE_NODES = 5;
/** Longest rule pointer kept (reasons: twice this), as the CRD's status schema bounds them. */
const MAX_RULE_TEXT = 512;
/** Rules in a message at most. */
const MESSAGE_RULES = 3;

function listNames(names: readonly string[]): string {
  const shown = names.slice(0, MESSAGE_NODES).join(', ');
  return names.length > MESSAGE_NODES ? `${shown} and ${names.length - MESSAGE_NODES} more` : shown;
}

function plural(n: number, one: string, many = `${one}s`): string {
  return `${n} ${n === 1 ? one : many}`;
}

function bound(message: string): string {
  return message.length <= MAX_MESSAGE_LENGTH ? message : `${message.slice(0, MAX_MESSAGE_LENGTH - 1)}…`;
}

function matchesNodeSelector(selector: Record<string, string>, labels: Record<string, string>): boolean {
  return Object.entries(selector).every(
    ([k, v]) => Object.hasOwn(labels, k) && (v === '*' || labels[k] === v),
  );
}

function isSamePolicy(e: NodePolicyReport, p: PolicyTarget): boolean {
  if (e.kind !== p.kind || e.name !== p.name) return false;
  if (p.kind === 'RuntimePolicy' && (e.namespace ?? '') !== (p.namespace ?? '')) return false;
  // A report naming another uid is about a deleted policy of the same name.
  return p.uid === undefined || e.uid === undefined || e.uid === p.uid;
}

/** Entries of a report by kind/namespace/name, built once per report object (reports are not mutated). */
const ENTRY_INDEX = new WeakMap<NodeStatusReport, Map<string, NodePolicyReport[]>>();

function entryKey(kind: string, namespace: string | undefined, name: string): string {
  return `${kind}/${kind === 'RuntimePolicy' ? (namespace ?? '') : ''}/${name}`;
}

/** The report's entry of the policy (a lookup, so a pass over P policies and N nodes is O(P·N)). */
function findEntry(report: NodeStatusReport, policy: PolicyTarget): NodePolicyReport | undefined {
  let index = ENTRY_INDEX.get(report);
  if (index === undefined) {
    index = new Map();
    for (const e of report.policies) {
      const k = entryKey(e.kind, e.namespace, e.name);
      const list = index.get(k);
      if (list === undefined) index.set(k, [e]);
      else list.push(e);
    }
    ENTRY_INDEX.set(report, index);
  }
  return index
    .get(entryKey(policy.kind, policy.namespace, policy.name))
    ?.find((e) => isSamePolicy(e, policy));
}

/** RFC 3339 UTC with seconds, as metav1.Time serializes. */
export function formatConditionTime(ms: number): string {
  return `${new Date(Math.floor(ms / 1000) * 1000).toISOString().slice(0, 19)}Z`;
}

/** The newest report per node. */
function newestReports(reports: readonly NodeStatusReport[]): Map<string, NodeStatusReport> {
  const out = new Map<string, NodeStatusReport>();
  for (const r of reports) {
    const had = out.get(r.node);
    if (had === undefined || Date.parse(r.updatedAt) > Date.parse(had.updatedAt)) out.set(r.node, r);
  }
  return out;
}

/** Computes a policy's status from the nodes' reports. */
export function aggregatePolicyStatus(input: AggregateInput): PolicyStatus {
  const { policy } = input;
  const generation = policy.generation;
  const reports = newestReports(input.reports);
  const labelsOf = new Map((input.nodes ?? []).map((n) => [n.name, n.labels]));
  const names = [...new Set(input.nodes === undefined ? reports.keys() : labelsOf.keys())].sort();
  const host = policy.kind === 'RuntimeHostPolicy';
  /** For host policies with a known selector and node labels: whether the node's labels select it. */
  const labelsSelect = (node: string): boolean | undefined => {
    const labels = labelsOf.get(node);
    if (!host || policy.nodeSelector === undefined || labels === undefined) return undefined;
    return matchesNodeSelector(policy.nodeSelector, labels);
  };

  const silent: string[] = [];
  const released: string[] = [];
  const behind: string[] = [];
  const notEnforced: string[] = [];
  const partial: string[] = [];
  const invalid: { node: string; errors: string[] }[] = [];
  const rules = new Map<string, { level: RuleNotEnforced['level']; reason: string; nodes: string[] }>();
  let expected = 0;
  let enforced = 0;
  let fresh = 0;

  for (const node of names) {
    const selectsByLabels = labelsSelect(node);
    const report = reports.get(node);
    const current =
      report !== undefined && input.now - Date.parse(report.updatedAt) <= input.staleAfterMs
        ? report
        : undefined;
    if (current !== undefined && !current.released) fresh++;
    const entry = current === undefined ? undefined : findEntry(current, policy);
    if (entry !== undefined && entry.generation === generation && !current?.released) {
      if (entry.errors !== undefined && entry.errors.length > 0) {
        invalid.push({ node, errors: entry.errors });
        continue;
      }
      if (entry.workloads === 0) continue;
      expected++;
      const missing = entry.gaps.filter((g) => g.level === 'not-enforced');
      if (!entry.enforced) notEnforced.push(node);
      else if (missing.length > 0) partial.push(node);
      else enforced++;
      for (const g of entry.gaps) {
        const had = rules.get(g.rule);
        if (had === undefined) rules.set(g.rule, { level: g.level, reason: g.reason, nodes: [node] });
        else {
          had.nodes.push(node);
          if (g.level === 'not-enforced' && had.level !== 'not-enforced') {
            had.level = g.level;
            had.reason = g.reason;
          }
        }
      }
      continue;
    }
    // Nothing current from this node about this generation: a host policy whose selector does not match
    // the node's labels does not apply there; anywhere else the node's enforcement is unknown.
    if (selectsByLabels === false) continue;
    if (selectsByLabels === true) expected++;
    if (current === undefined) silent.push(node);
    else if (current.released) released.push(node);
    else behind.push(node);
  }

  const pendingOver = input.now - input.generationSeenAt > input.pendingGraceMs;
  const stale = pendingOver ? behind : [];
  const pending = pendingOver ? [] : behind;
  const listed: RuleNotEnforced[] = [...rules.entries()]
    // Rules not enforced before rules only audited, so the bounded list keeps the ones that fail Ready.
    .sort(([a, x], [b, y]) =>
      x.level !== y.level ? (x.level === 'not-enforced' ? -1 : 1) : a < b ? -1 : a > b ? 1 : 0,
    )
    .slice(0, MAX_RULES_LISTED)
    .map(([rule, r]) => {
      const nodes = [...r.nodes].sort();
      return {
        rule: rule.slice(0, MAX_RULE_TEXT),
        level: r.level,
        reason: r.reason.slice(0, 2 * MAX_RULE_TEXT),
        nodes: nodes.slice(0, MAX_RULE_NODES),
        nodeCount: nodes.length,
      };
    });
  const missingRules = listed.filter((r) => r.level === 'not-enforced');
  const auditedRules = listed.filter((r) => r.level === 'audited');
  const ruleText = (list: readonly RuleNotEnforced[]): string =>
    list
      .slice(0, MESSAGE_RULES)
      .map((r) => {
        const more = r.nodeCount > r.nodes.length ? ` and ${r.nodeCount - r.nodes.length} more` : '';
        return `${r.rule} (${r.reason || r.level}) on ${r.nodes.join(', ')}${more}`;
      })
      .join('; ') + (list.length > MESSAGE_RULES ? `; ${list.length - MESSAGE_RULES} more` : '');

  const counts = `Enforced on ${enforced} of ${plural(expected, 'node')}`;
  const problems: Array<[ReadyReason, string]> = [];
  if (notEnforced.length > 0)
    problems.push([ReadyReason.NotEnforced, `not enforced on ${listNames(notEnforced)}`]);
  if (partial.length > 0)
    problems.push([
      ReadyReason.RulesNotEnforced,
      `rules not enforced on ${listNames(partial)}: ${ruleText(missingRules)}`,
    ]);
  if (stale.length > 0)
    problems.push([
      ReadyReason.StaleGeneration,
      `${listNames(stale)} still on an older generation than ${generation}`,
    ]);
  if (silent.length > 0)
    problems.push([ReadyReason.NodeNotReporting, `no recent report from ${listNames(silent)}`]);
  if (released.length > 0)
    problems.push([ReadyReason.Released, `enforcement released on ${listNames(released)}`]);

  let status: ConditionStatus;
  let reason: ReadyReason;
  let message: string;
  const firstInvalid = invalid[0];
  if (firstInvalid !== undefined) {
    status = ConditionStatus.False;
    reason = ReadyReason.Invalid;
    message = `Generation ${generation} is refused by ${listNames(invalid.map((i) => i.node))}: ${firstInvalid.errors.slice(0, 3).join('; ')}`;
  } else if (problems.length > 0) {
    status = ConditionStatus.False;
    reason = problems[0]?.[0] ?? ReadyReason.NotEnforced;
    message = `${counts}; ${problems.map(([, m]) => m).join('; ')}`;
  } else if (pending.length > 0) {
    status = ConditionStatus.Unknown;
    reason = ReadyReason.Pending;
    message = `Waiting for ${listNames(pending)} to report generation ${generation}`;
  } else if (names.length === 0 || fresh === 0) {
    status = ConditionStatus.Unknown;
    reason = ReadyReason.NoReports;
    message = 'No enforcer has reported yet';
  } else {
    status = ConditionStatus.True;
    reason = ReadyReason.Enforced;
    message =
      expected === 0
        ? `Selects no workloads on the ${plural(names.length, 'reporting node')}`
        : `Enforced on ${enforced} of ${plural(expected, 'node')}`;
    if (auditedRules.length > 0) message += `; audited only: ${ruleText(auditedRules)}`;
  }

  const before = input.previous?.conditions.find((c) => c.type === 'Ready');
  const ready: ReadyCondition = {
    type: 'Ready',
    status,
    reason,
    message: bound(message),
    observedGeneration: generation,
    lastTransitionTime:
      before !== undefined && before.status === status
        ? before.lastTransitionTime
        : formatConditionTime(input.now),
  };
  return normalizeStatus({
    observedGeneration: generation,
    enforcedNodes: enforced,
    expectedNodes: expected,
    rulesNotEnforced: listed,
    conditions: [ready],
  });
}
