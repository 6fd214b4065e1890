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

/**
 * Total order on rules: negative when `a` takes precedence over `b`. The order itself is compareRanked's;
 * a sort of many rules ranks each once instead (sortByPrecedence, sortRanked).
 */
export function compareRulePrecedence(a: PolicyRule, b: PolicyRule): number {
  return compareRanked(rankRule(a), rankRule(b));
}

/** A rule with the parts of its precedence computed once (rankRule), for sortRanked. */
export interface RankedRule {
  readonly item: PolicyRule;
  readonly cls: number;
  readonly tier: number;
  /** Directory matchers: the depth of the directory; -1 for every other matcher. */
  readonly depth: number;
  readonly recursive: number;
  readonly action: number;
  /** The canonical key, made when a comparison first reaches it. */
  canonical: string | undefined;
}

/** The precedence parts of one rule, computed once: a rule's precedence depends on its policy and itself. */
export function rankRule(item: PolicyRule): RankedRule {
  const r = item.rule;
  const m = r.matcher;
  return {
    item,
    cls: OPERATION_RANK[r.operation] ?? 9,
    tier: getSpecificityTier(r),
    depth: m.kind === 'directory' ? getDirectoryDepth(m.dir) : -1,
    recursive: m.kind === 'directory' && m.recursive ? 1 : 0,
    action: ACTION_RANK[r.action],
    canonical: undefined,
  };
}

function canonicalOf(r: RankedRule): string {
  r.canonical ??= getCanonicalRuleKey(r.item.rule);
  return r.canonical;
}

/**
 * The precedence order over ranked rules: class, then specificity tier, then (directories) the deeper and the
 * non-recursive first, then Block > Audit > Allow, then where the rule is written, then the canonical key.
 */
function compareRanked(a: RankedRule, b: RankedRule): number {
  const byClass = a.cls - b.cls;
  if (byClass !== 0) return byClass;
  const byTier = a.tier - b.tier;
  if (byTier !== 0) return byTier;
  if (a.depth >= 0 && b.depth >= 0) {
    const byDepth = b.depth - a.depth;
    if (byDepth !== 0) return byDepth;
    const byRecursion = a.recursive - b.recursive;
    if (byRecursion !== 0) return byRecursion;
  }
  const byAction = a.action - b.action;
  if (byAction !== 0) return byAction;
  const pa = a.item.policy;
  const pb = b.item.policy;
  const la = a.item.rule.location;
  const lb = b.item.rule.location;
  return (
    compareStrings(pa.kind, pb.kind) ||
    compareStrings(pa.namespace, pb.namespace) ||
    compareStrings(pa.name, pb.name) ||
    compareStrings(la.file, lb.file) ||
    la.line - lb.line ||
    la.column - lb.column ||
    compareStrings(canonicalOf(a), canonicalOf(b))
  );
}

/**
 * Sorts ranked rules in place into compareRulePrecedence's order, with the same result as sorting the rules
 * with it (the sort is stable, as `Array.prototype.sort` is): the class, tier, depth and action are not
 * recomputed at every comparison, and the canonical key (the last tie-break, a serialisation of the whole
 * rule) is made only for rules that reach it, once each.
 */
export function sortRanked<T extends RankedRule>(ranked: T[]): T[] {
  return ranked.sort(compareRanked);
}

/**
 * Merges runs each already in sortRanked's order into one in that order: the same result as sortRanked over
 * the runs joined in the given order (on a tie the earlier run's rule comes first, as a stable sort keeps
 * it). Runs are merged pairwise, so n rules in k runs cost about n·log2(k) comparisons, and two runs (a
 * policy change beside one large policy) about n.
 */
export function mergeRanked<T extends RankedRule>(runs: readonly (readonly T[])[]): T[] {
  let level: (readonly T[])[] = runs.filter((r) => r.length > 0);
  if (level.length === 0) return [];
  while (level.length > 1) {
    const next: (readonly T[])[] = [];
    for (let i = 0; i + 1 < level.length; i += 2) next.push(mergeTwo(level[i] as T[], level[i + 1] as T[]));
    if (level.length % 2 === 1) next.push(level[level.length - 1] as T[]);
    level = next;
  }
  return [...(level[0] as T[])];
}

function mergeTwo<T extends RankedRule>(a: readonly T[], b: readonly T[]): T[] {
  const out = new Array<T>(a.length + b.length);
  let i = 0;
  let j = 0;
  let k = 0;
  while (i < a.length && j < b.length) {
    const x = a[i] as T;
    const y = b[j] as T;
    if (compareRanked(y, x) < 0) {
      out[k++] = y;
      j++;
    } else {
      out[k++] = x;
      i++;
    }
  }
  while (i < a.length) out[k++] = a[i++] as T;
  while (j < b.length) out[k++] = b[j++] as T;
  return out;
}

/** Sorts rules by compareRulePrecedence, with the same result (sortRanked). */
export function sortByPrecedence(rules: readonly PolicyRule[]): PolicyRule[] {
  return sortRanked(rules.map(rankRule)).map((r) => r.item);
}
