// What this node does with each policy, as the per-node report says it (pure): from the snapshot the plane
// has applied (its policies, their API generation and uid), the node state (which workloads each policy
// selects here) and the capability table for the running plane (which rules it cannot enforce). Policies the
// enforcer refused (lint errors) are listed too, not enforced, with their findings.
import { Severity } from '../../compiler/diagnostics/diagnostic.js';
import {
  summarizeEnforcement,
  type RuleGap,
  type UnavailableForms,
} from '../../compiler/enforcement/summarize-enforcement.js';
import type { EnforcementTarget } from '../../compiler/enforcement/enforcement-table.js';
import type { NodePolicyReport, NodeRuleGap } from '../../compiler/model/node-status.js';
import { POLICY_KIND_CODES } from '../../compiler/rule-table/rule-table-format.js';
import type { NodeState } from '../node-state.js';
import { policyObjectKey, type PolicyObjectMetadata, type PolicySnapshot } from '../policy-source.js';

/** Findings listed per refused policy at most, and the longest finding kept. */
const MAX_ERRORS = 5;
const MAX_ERROR_TEXT = 300;
/** Prefix of the file name the Kubernetes source gives each object. */
const OBJECT_FILE_PREFIX = 'kubernetes:';

const KIND_BY_CODE = new Map<number, NodePolicyReport['kind']>(
  Object.entries(POLICY_KIND_CODES).map(([kind, code]) => [code, kind as NodePolicyReport['kind']]),
);

function gapsOf(list: readonly RuleGap[], level: NodeRuleGap['level']): NodeRuleGap[] {
  return list.map((g) => ({
    rule: g.pointer,
    level,
    reason: g.gaps.map((f) => f.reason || f.title).join('; '),
  }));
}

/** The policies of a snapshot applied as `state`, as report entries (sorted by kind, namespace, name). */
export function buildPolicyReports(
  snapshot: PolicySnapshot,
  state: NodeState,
  target: EnforcementTarget,
  unavailable?: UnavailableForms,
): NodePolicyReport[] {
  const meta: ReadonlyMap<string, PolicyObjectMetadata> = snapshot.policyMetadata ?? new Map();
  const workloads = new Map<string, number>();
  for (const w of state.state.workloads) {
    for (const i of w.policies) {
      const p = state.policies[i];
      const kind = p === undefined ? undefined : KIND_BY_CODE.get(p.kind);
      if (p === undefined || kind === undefined) continue;
      const key = policyObjectKey(kind, p.namespace, p.name);
      workloads.set(key, (workloads.get(key) ?? 0) + 1);
    }
  }
  const out = new Map<string, NodePolicyReport>();
  for (const policy of snapshot.ruleSet.policies) {
    const key = policyObjectKey(policy.kind, policy.namespace, policy.name);
    const m = meta.get(key);
    const summary = summarizeEnforcement(policy, target, unavailable);
    out.set(key, {
      kind: policy.kind,
      ...(policy.kind === 'RuntimePolicy' ? { namespace: policy.namespace } : {}),
      name: policy.name,
      ...(m?.uid === undefined ? {} : { uid: m.uid }),
      generation: m?.generation ?? 0,
      workloads: workloads.get(key) ?? 0,
      enforced: summary.carried,
      gaps: [...gapsOf(summary.notEnforced, 'not-enforced'), ...gapsOf(summary.auditedOnly, 'audited')],
    });
  }
  // Objects with errors are not in the rule set: report them as refused, with their findings.
  for (const d of snapshot.diagnostics) {
    if (d.severity !== Severity.Error || !d.file.startsWith(OBJECT_FILE_PREFIX)) continue;
    const key = d.file.slice(OBJECT_FILE_PREFIX.length);
    const m = meta.get(key);
    const [kind, namespace = '', ...rest] = key.split('/');
    if (m === undefined || (kind !== 'RuntimePolicy' && kind !== 'RuntimeHostPolicy')) continue;
    // A policy still in the rule set (a finding across objects) is enforced: its entry stands.
    if (out.has(key) && out.get(key)?.errors === undefined) continue;
    const entry = out.get(key) ?? {
      kind,
      ...(kind === 'RuntimePolicy' ? { namespace } : {}),
      name: rest.join('/'),
      ...(m.uid === undefined ? {} : { uid: m.uid }),
      generation: m.generation,
      workloads: 0,
      enforced: false,
      gaps: [],
      errors: [],
    };
    const errors = entry.errors ?? [];
    if (errors.length < MAX_ERRORS)
      errors.push(`${d.code} ${d.pointer || '/'}: ${d.message}`.slice(0, MAX_ERROR_TEXT));
    entry.errors = errors;
    out.set(key, entry);
  }
  return [...out.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, e]) => e);
}
