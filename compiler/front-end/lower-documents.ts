// Stage 3: checked policy documents → lowered policies, each with the document it came from (for the cross
// checks' positions). Rule positions are the pointer's line and column in a text; 0 for API objects.
import type { LocatedPolicy } from '../checks/cross/cross-rule.js';
import type { RuleSet } from '../ir/rule-set.js';
import { sortPolicies } from '../lower/lower.js';
import { lowerPolicyOnce } from '../lower/lower-policy.js';
import type { CheckedPolicy } from './checked-documents.js';

/** Lowers one checked policy. */
export function lowerDocument({ document, source }: CheckedPolicy): LocatedPolicy {
  const { locator, index } = source;
  const policy = lowerPolicyOnce(document, (pointer) => {
    const p = locator.locate(index, pointer)?.start ?? locator.documentStart(index);
    return { line: p?.line ?? 0, column: p?.column ?? 0 };
  });
  return { policy, file: locator.file, document: index };
}

/** Lowers checked policies, in order. */
export function lowerDocuments(policies: readonly CheckedPolicy[]): LocatedPolicy[] {
  return policies.map(lowerDocument);
}

/** The rule set of lowered policies: sorted by kind, namespace and name. */
export function toRuleSet(located: readonly LocatedPolicy[]): RuleSet {
  return { policies: sortPolicies(located.map((l) => l.policy)) };
}
