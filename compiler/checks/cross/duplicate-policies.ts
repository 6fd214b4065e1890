// RT3012: two documents that define the same object (kind, namespace, name); the later would replace the earlier.
import { Code } from '../../diagnostics/codes/code.js';
import type { CrossFinding, CrossRule, LocatedPolicy } from './cross-rule.js';

export const checkDuplicatePolicies: CrossRule = (policies) => {
  const seen = new Map<string, LocatedPolicy>();
  const out: CrossFinding[] = [];
  for (const p of policies) {
    const key = `${p.policy.kind}/${p.policy.namespace}/${p.policy.name}`;
    const first = seen.get(key);
    if (first === undefined) {
      seen.set(key, p);
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
