// RT3005: an Allow policy in a namespace whose posture for that operation class is audit (the default) does
// not restrict anything; operations outside the allow list are only alerted. Known only when the Namespace
// object is part of the same input.
import { Code } from '../../diagnostics/codes/code.js';
import { getPosture, getPostureAnnotation, Posture } from '../../model/posture.js';
import type { CrossFinding, CrossRule } from './cross-rule.js';

export const checkAllowUnderAudit: CrossRule = (policies, context) => {
  const out: CrossFinding[] = [];
  for (const p of policies) {
    if (p.policy.target.kind !== 'pods') continue;
    const postures = context.namespacePostures.get(p.policy.target.namespace);
    if (postures === undefined) continue;
    const reported = new Set<string>();
    for (const r of p.policy.rules) {
      if (r.action !== 'Allow') continue;
      const key = getPostureAnnotation(r.operation);
      if (reported.has(key) || getPosture(postures, r.operation) !== Posture.Audit) continue;
      reported.add(key);
      out.push({
        file: p.file,
        document: p.document,
        finding: {
          code: Code.allowUnderAuditPosture,
          severity: 'warning',
          pointer: r.location.pointer,
          message: `Allow rule in namespace ${p.policy.target.namespace}, whose ${key} is audit: ${r.operation} operations outside the allow list will be alerted but not blocked; annotate the namespace ${key}=block to restrict them`,
        },
      });
    }
  }
  return out;
};
