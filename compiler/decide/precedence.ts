// Rule precedence (docs/semantics.md, "Which rule decides"): the most specific rule wins; at equal
// specificity Block > Audit > Allow; remaining ties are broken by where the rule is written so that
// the answer never depends on policy order. The rules backend sorts its table with the same order.
import { Action, type PolicyIR, type Rule } from '../ir/rule-set.js';
import { getDirectoryDepth } from './path-match.js';

/** A rule together with the policy it belongs to. */
export interface PolicyRule {
  policy: PolicyIR;
  rule: Rule;
}

/** First tier of protocol rules: every address rule (tiers 0..1031) is more specific than any of them. */
const PROTOCOL_TIER_BASE = 2000;

/**
 * Specificity tier: lower is more specific. Tiers only compare within one operation class. Address rules: a
 * longer prefix first; at the same prefix, with ports before without, with a protocol before without, with
 * a source before without; then every protocol rule.
 */
export function getSpecificityTier(rule: Rule): number {
  const withSource = rule.fromSource.length > 0 ? 0 : 1;
  switch (rule.matcher.kind) {
    case 'path':
      return 0 + withSource;
    case 'execname':
      return 2 + withSource;
    case 'directory':
      return 4 + withSource;
    case 'pattern':
      return 6 + withSource;
    case 'protocol':
      return PROTOCOL_TIER_BASE + (rule.matcher.protocol.toLowerCase() === 'all' ? 2 : 0) + withSource;
    case 'capability':
      return 0 + withSource;
    case 'address':
      return (
        (128 - rule.matcher.prefix) * 8 +
        (rule.matcher.ports.length > 0 ? 0 : 4) +
        (rule.matcher.protocol !== '' ? 0 : 2) +
        withSource
      );
  }
}

const ACTION_RANK: Record<Action, number> = { [Action.Block]: 0, [Action.Audit]: 1, [Action.Allow]: 2 };
const OPERATION_RANK: Record<string, number> = { Process: 0, File: 1, Network: 2, Capabilities: 3 };

function compareStrings(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** A serialisation of every field of a rule, the last tie-break. */
export function getCanonicalRuleKey(rule: Rule): string {
  return JSON.stringify([
    rule.operation,
    rule.matcher,
    rule.fromSource.map((s) => (s.kind === 'path' ? ['path', s.path] : ['directory', s.dir, s.recursive])),
    rule.readOnly,
    rule.ownerOnly,
    rule.action,
    rule.severity,
    rule.tags,
    rule.message,
    rule.allowedArgs,
    rule.pts,
    rule.location,
  ]);
}

/** Total order on rules: negative when `a` takes precedence over `b`. */
export function compareRulePrecedence(a: PolicyRule, b: PolicyRule): number {
  const ra = a.rule;
  const rb = b.rule;
  const byClass = (OPERATION_RANK[ra.operation] ?? 9) - (OPERATION_RANK[rb.operation] ?? 9);
  if (byClass !== 0) return byClass;
  const byTier = getSpecificityTier(ra) - getSpecificityTier(rb);
  if (byTier !== 0) return byTier;
  if (ra.matcher.kind === 'directory' && rb.matcher.kind === 'directory') {
    const byDepth = getDirectoryDepth(rb.matcher.dir) - getDirectoryDepth(ra.matcher.dir);
    if (byDepth !== 0) return byDepth;
    const byRecursion = Number(ra.matcher.recursive) - Number(rb.matcher.recursive);
    if (byRecursion !== 0) return byRecursion;
  }
  const byAction = ACTION_RANK[ra.action] - ACTION_RANK[rb.action];
  if (byAction !== 0) return byAction;
  return (
    compareStrings(a.policy.kind, b.policy.kind) ||
    compareStrings(a.policy.namespace, b.policy.namespace) ||
    compareStrings(a.policy.name, b.policy.name) ||
    compareStrings(ra.location.file, rb.location.file) ||
    ra.location.line - rb.location.line ||
    ra.location.column - rb.location.column ||
    compareStrings(getCanonicalRuleKey(ra), getCanonicalRuleKey(rb))
  );
}
