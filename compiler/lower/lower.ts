// Lowers validated policy documents into a RuleSet, in a deterministic order (kind, namespace, name).
import type { PolicyIR, RuleSet } from '../ir/rule-set.js';
import type { PolicyDocument } from '../model/policy-document.js';
import { lowerPolicy } from './lower-policy.js';
import type { LocateFn } from './lower-policy.js';

/** Orders lowered policies by kind (host policies first), then namespace and name. */
export function comparePolicies(a: PolicyIR, b: PolicyIR): number {
  const ka = `${a.kind}\u0000${a.namespace}\u0000${a.name}`;
  const kb = `${b.kind}\u0000${b.namespace}\u0000${b.name}`;
  return ka < kb ? -1 : ka > kb ? 1 : 0;
}

/** Compares two strings by UTF-16 code units (what `<` does). */
function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * Sorts policies in the order of comparePolicies, field by field (no key built per policy): the same order,
 * since no kind, namespace or name holds the NUL that separates the fields of the key (kind is one of two
 * names; namespace and name are DNS names or empty).
 */
export function sortPolicies(policies: readonly PolicyIR[]): PolicyIR[] {
  return [...policies].sort(
    (a, b) =>
      compareText(a.kind, b.kind) || compareText(a.namespace, b.namespace) || compareText(a.name, b.name),
  );
}

/**
 * Lowers documents into a RuleSet. `locate` resolves positions; without it, rules carry the document's line
 * (for documents built in memory, such as admission objects).
 */
export function lowerDocuments(
  documents: readonly PolicyDocument[],
  locate?: (doc: PolicyDocument) => LocateFn,
): RuleSet {
  const policies = documents.map((d) => lowerPolicy(d, locate?.(d) ?? (() => ({ line: d.line, column: 1 }))));
  return { policies: sortPolicies(policies) };
}
