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

/** Orders policies of one kind and namespace by name; a stable sort keeps equal names in input order. */
function compareNames(a: PolicyIR, b: PolicyIR): number {
  return compareText(a.name, b.name);
}

/**
 * Sorts policies in the order of comparePolicies, with no key built per policy (no kind, namespace or name
 * holds the NUL that separates the fields of comparePolicies' key, so field by field is the same order):
 * policies are put in buckets by kind and namespace in one pass (a policy set has few of each), the buckets
 * are taken in order of kind and namespace, and each is sorted by name. Stable, as the one sort was.
 */
export function sortPolicies(policies: readonly PolicyIR[]): PolicyIR[] {
  const byKind = new Map<string, Map<string, PolicyIR[]>>();
  for (const p of policies) {
    let byNamespace = byKind.get(p.kind);
    if (byNamespace === undefined) byKind.set(p.kind, (byNamespace = new Map<string, PolicyIR[]>()));
    const bucket = byNamespace.get(p.namespace);
    if (bucket === undefined) byNamespace.set(p.namespace, [p]);
    else bucket.push(p);
  }
  const out: PolicyIR[] = [];
  for (const kind of [...byKind.keys()].sort(compareText)) {
    const byNamespace = byKind.get(kind);
    if (byNamespace === undefined) continue;
    for (const namespace of [...byNamespace.keys()].sort(compareText)) {
      const bucket = byNamespace.get(namespace);
      if (bucket === undefined) continue;
      bucket.sort(compareNames);
      for (const p of bucket) out.push(p);
    }
  }
  return out;
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
