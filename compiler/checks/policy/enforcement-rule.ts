// The enforcement check of one schema-valid policy object: lowers it (positions are not needed: findings carry
// pointers; the lowering stage reuses the result) and reports what the targets do not enforce, from the enforcement table (compiler/enforcement).
import type { Finding } from '../../diagnostics/finding.js';
import { findEnforcementGaps } from '../../enforcement/enforcement-findings.js';
import type { PolicyKind } from '../../ir/rule-set.js';
import { lowerPolicyForChecks } from '../../lower/lower-policy.js';
import type { PolicyDocument } from '../../model/policy-document.js';
import type { CheckContext } from '../document-checker.js';
import { KNOWN_PRESETS } from './document-rules.js';

function isKnown(preset: { name: string }): boolean {
  return (KNOWN_PRESETS as readonly string[]).includes(preset.name);
}

/** RT3016/RT3018 findings of one policy object (errors for the targets of `context.requireEnforced`). */
export function checkEnforcement(kind: PolicyKind, object: unknown, context: CheckContext): Finding[] {
  const doc = { kind, object, file: '', index: 0, line: 1 } as PolicyDocument;
  // The lowering stage takes this over (lowerPolicyOnce) instead of walking the document again.
  const policy = lowerPolicyForChecks(doc, { withoutPositions: context.withoutPositions === true });
  // An unknown preset already has its warning (RT3013).
  const checked = policy.presets.every(isKnown)
    ? policy
    : { ...policy, presets: policy.presets.filter(isKnown) };
  return findEnforcementGaps(
    checked,
    context.requireEnforced === undefined ? {} : { requireEnforced: context.requireEnforced },
  );
}
