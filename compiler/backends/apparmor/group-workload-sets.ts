// Groups pod policies into workload sets for AppArmor: one set per distinct (namespace, selector).
// A set's profile includes every policy of the namespace whose selector any workload of the set also
// satisfies (its matchLabels are a subset and its matchExpressions are none or the same).
import { createHash } from 'node:crypto';
import type { LabelExpression, PolicyIR } from '../../ir/rule-set.js';
import { isSafeApparmorName } from './escape-apparmor.js';

/** One workload set: the selector that defines it and the policies its workloads get. */
export interface WorkloadSet {
  /** Stable profile name `rtctl-<namespace>-<hash>` (the namespace left out when it is not a plain DNS label). */
  name: string;
  namespace: string;
  matchLabels: Record<string, string>;
  matchExpressions: LabelExpression[];
  /** Policies applying to the set, sorted by name. */
  policies: PolicyIR[];
}

function canonicalExpressions(e: readonly LabelExpression[]): string {
  return JSON.stringify(e.map((x) => [x.operator, [...x.values].sort()]));
}

function canonicalLabels(labels: Record<string, string>): string {
  return JSON.stringify(
    Object.keys(labels)
      .sort()
      .map((k) => [k, labels[k]]),
  );
}

function isImpliedBy(
  policy: PolicyIR,
  set: { matchLabels: Record<string, string>; expressions: string },
): boolean {
  if (policy.target.kind !== 'pods') return false;
  const t = policy.target;
  const labelsOk = Object.entries(t.matchLabels).every(
    ([k, v]) => Object.hasOwn(set.matchLabels, k) && set.matchLabels[k] === v,
  );
  const expr = canonicalExpressions(t.matchExpressions);
  return labelsOk && (t.matchExpressions.length === 0 || expr === set.expressions);
}

/** The workload sets of the pod policies, sorted by name. */
export function groupWorkloadSets(policies: readonly PolicyIR[]): WorkloadSet[] {
  const keys = new Map<
    string,
    { namespace: string; matchLabels: Record<string, string>; matchExpressions: LabelExpression[] }
  >();
  for (const p of policies) {
    if (p.target.kind !== 'pods') continue;
    const key = `${p.target.namespace}\u0000${canonicalLabels(p.target.matchLabels)}\u0000${canonicalExpressions(p.target.matchExpressions)}`;
    if (!keys.has(key)) {
      keys.set(key, {
        namespace: p.target.namespace,
        matchLabels: p.target.matchLabels,
        matchExpressions: p.target.matchExpressions,
      });
    }
  }
  const sets: WorkloadSet[] = [];
  for (const [key, s] of keys) {
    const hash = createHash('sha256').update(key).digest('hex').slice(0, 10);
    const expressions = canonicalExpressions(s.matchExpressions);
    const members = policies
      .filter((p) => p.target.kind === 'pods' && p.target.namespace === s.namespace)
      .filter((p) => isImpliedBy(p, { matchLabels: s.matchLabels, expressions }))
      .sort((a, b) =>
        a.name < b.name ? -1 : a.name > b.name ? 1 : a.location.file < b.location.file ? -1 : 1,
      );
    const prefix = isSafeApparmorName(s.namespace) ? `${s.namespace}-` : '';
    sets.push({
      name: `rtctl-${prefix}${hash}`,
      namespace: s.namespace,
      matchLabels: s.matchLabels,
      matchExpressions: s.matchExpressions,
      policies: members,
    });
  }
  return sets.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}
