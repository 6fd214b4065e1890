// Which policies select a workload: pod policies by namespace and label selector, host policies by
// node labels (a required value `*` matches any value of that key).
import type { LabelExpression, PolicyIR, Target } from '../ir/rule-set.js';
import { WorkloadKind, type Workload } from './decision-input.js';

function hasLabelPair(labels: Readonly<Record<string, string>>, pair: string): boolean {
  const eq = pair.indexOf('=');
  const key = eq === -1 ? pair : pair.slice(0, eq);
  const value = eq === -1 ? '' : pair.slice(eq + 1);
  return Object.hasOwn(labels, key) && labels[key] === value;
}

function matchesExpression(labels: Readonly<Record<string, string>>, expression: LabelExpression): boolean {
  const any = expression.values.some((pair) => hasLabelPair(labels, pair));
  return expression.operator === 'In' ? any : !any;
}

/** True when the target selects the workload. */
export function isTargetSelecting(target: Target, workload: Workload): boolean {
  if (target.kind === 'host') {
    if (workload.kind !== WorkloadKind.Host) return false;
    return Object.entries(target.nodeLabels).every(
      ([key, value]) =>
        Object.hasOwn(workload.nodeLabels, key) && (value === '*' || workload.nodeLabels[key] === value),
    );
  }
  if (workload.kind !== WorkloadKind.Container || workload.namespace !== target.namespace) return false;
  const labelsOk = Object.entries(target.matchLabels).every(
    ([key, value]) => Object.hasOwn(workload.labels, key) && workload.labels[key] === value,
  );
  return labelsOk && target.matchExpressions.every((e) => matchesExpression(workload.labels, e));
}

/** The policies of the rule set that select the workload, in their given order. */
export function selectPolicies(policies: readonly PolicyIR[], workload: Workload): PolicyIR[] {
  return policies.filter((p) => isTargetSelecting(p.target, workload));
}
