// RT3012: two documents that define the same object (kind, namespace, name); the later would replace the earlier.
import { Code } from '../../diagnostics/codes/code.js';
import type { CrossFinding, CrossRule, LocatedPolicy } from './cross-rule.js';

/** The first policy of the same kind and namespace among those of one name, if any. */
function findSame(list: LocatedPolicy | LocatedPolicy[], p: LocatedPolicy): LocatedPolicy | undefined {
  if (!Array.isArray(list))
    return list.policy.kind === p.policy.kind && list.policy.namespace === p.policy.namespace
      ? list
      : undefined;
  return list.find((q) => q.policy.kind === p.policy.kind && q.policy.namespace === p.policy.namespace);
}

export const checkDuplicatePolicies: CrossRule = (policies) => {
  // By name first (names are mostly distinct), then kind and namespace: no key is built per policy.
  const byName = new Map<string, LocatedPolicy | LocatedPolicy[]>();
  const out: CrossFinding[] = [];
  for (const p of policies) {
    const seen = byName.get(p.policy.name);
    if (seen === undefined) {
      byName.set(p.policy.name, p);
      continue;
    }
    const first = findSame(seen, p);
    if (first === undefined) {
      if (Array.isArray(seen)) seen.push(p);
      else byName.set(p.policy.name, [seen, p]);
      continue;
    }
    out.push({
      file: p.file,
      document: p.document,
      finding: {
        code: Code.duplicatePolicy,
        severity: 'error',
        pointer: '/metadata/name',
        message: `metadata.name: ${p.policy.kind} ${p.policy.namespace === '' ? '' : `${p.policy.namespace}/`}${p.policy.name} is already defined in ${first.file}:${first.policy.location.line}; one would replace the other`,
        related: [
          {
            message: 'first defined here',
            pointer: '/metadata/name',
            file: first.file,
            document: first.document,
          },
        ],
      },
    });
  }
  return out;
};
