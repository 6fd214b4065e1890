// Builds a policy snapshot (pure) from YAML texts: policies through the compiler's lint (parse, schema,
// checks, lowering), Namespace objects for their posture annotations.
import { lintTexts, type SourceText } from '../compiler/lint.js';
import { Severity } from '../compiler/diagnostics/diagnostic.js';
import { readNamespacePostures } from '../compiler/model/posture.js';
import type { PolicySnapshot } from './policy-source.js';

/** A snapshot of policy texts: the rule set of the valid policies and every finding. */
export function buildSnapshot(sources: readonly SourceText[]): PolicySnapshot {
  const lint = lintTexts(sources);
  return {
    ruleSet: lint.ruleSet,
    diagnostics: lint.diagnostics.filter((d) => d.severity !== Severity.Info),
    // Namespace annotations come from the same parse as the policies.
    postures: new Map([...lint.namespaceAnnotations].map(([ns, ann]) => [ns, readNamespacePostures(ann)])),
  };
}
