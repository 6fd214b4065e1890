// Whether two policies can select the same workload: the test behind conflict and duplicate reports.
import type { Target } from '../../ir/rule-set.js';

function labelsCompatible(
  a: Readonly<Record<string, string>>,
  b: Readonly<Record<string, string>>,
  wildcard: boolean,
) {
  for (const [k, v] of Object.entries(a)) {
    const w = b[k];
    if (w === undefined) continue;
    if (w !== v && !(wildcard && (v === '*' || w === '*'))) return false;
  }
  return true;
}

/** True when some pod labelled `labels` cannot satisfy the other target's NotIn expressions. */
function excludedByNotIn(labels: Readonly<Record<string, string>>, other: Target): boolean {
  if (other.kind !== 'pods') return false;
  return other.matchExpressions.some(
    (e) =>
      e.operator === 'NotIn' &&
      e.values.some((kv) => {
        const i = kv.indexOf('=');
        return labels[kv.slice(0, i)] === kv.slice(i + 1);
      }),
  );
}

/** True when the two targets may select a common workload (conservative: "may" means not provably disjoint). */
export function targetsOverlap(a: Target, b: Target): boolean {
  if (a.kind === 'host' && b.kind === 'host') return labelsCompatible(a.nodeLabels, b.nodeLabels, true);
  if (a.kind === 'pods' && b.kind === 'pods') {
    if (a.namespace !== b.namespace) return false;
    if (!labelsCompatible(a.matchLabels, b.matchLabels, false)) return false;
    return !excludedByNotIn(a.matchLabels, b) && !excludedByNotIn(b.matchLabels, a);
  }
  return false;
}

/** A string that is equal for targets that select exactly the same workloads by the same words. */
export function targetKey(t: Target): string {
  return t.kind === 'host'
    ? `host:${JSON.stringify(Object.entries(t.nodeLabels).sort())}`
    : `pods:${t.namespace}`;
}
