// RT3005: an Allow policy in a namespace whose posture for that operation class is audit (the default) does
// not restrict anything; operations outside the allow list are only alerted. Known only when the Namespace
// object is part of the same input.
import type { Operation } from '../../ir/rule-set.js';
import type { CrossFinding, CrossRule } from './cross-rule.js';

/** The posture annotation that governs an operation class (Process follows the file posture). */
export function postureAnnotationFor(op: Operation): string {
  if (op === 'Network') return 'runtime-network-posture';
  if (op === 'Capabilities') return 'runtime-capabilities-posture';
  return 'runtime-file-posture';
}

export const checkAllowUnderAudit: CrossRule = (policies, context) => {
  const out: CrossFinding[] = [];
  for (const p of policies) {
    if (p.policy.target.kind !== 'pods') continue;
    const annotations = context.namespaceAnnotations.get(p.policy.target.namespace);
    if (annotations === undefined) continue;
    const reported = new Set<string>();
    for (const r of p.policy.rules) {
      if (r.action !== 'Allow') continue;
      const key = postureAnnotationFor(r.operation);
      if (reported.has(key) || (annotations[key] ?? 'audit') !== 'audit') continue;
      reported.add(key);
      out.push({
        file: p.file,
        document: p.document,
        finding: {
          code: 'RT3005',
          severity: 'warning',
          pointer: r.location.pointer,
          message: `Allow rule in namespace ${p.policy.target.namespace}, whose ${key} is audit: ${r.operation} operations outside the allow list will be alerted but not blocked; annotate the namespace ${key}=block to restrict them`,
        },
      });
    }
  }
  return out;
};
