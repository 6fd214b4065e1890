// What the lint entries return, and how they assemble it from the stages.
import type { EnforcementTarget } from '../enforcement/enforcement-table.js';
import type { LocatedPolicy } from '../checks/cross/cross-rule.js';
import { compareDiagnostics } from '../diagnostics/diagnostic.js';
import type { Diagnostic } from '../diagnostics/diagnostic.js';
import type { RuleSet } from '../ir/rule-set.js';
import type { PolicyDocument } from '../model/policy-document.js';
import type { CheckedDocuments, NamespacePostures } from './checked-documents.js';
import { toRuleSet } from './lower-documents.js';

/** What lint produced. */
export interface LintResult {
  /** Policy documents without errors, in input order. */
  documents: PolicyDocument[];
  /** Every finding, sorted by file and position. */
  diagnostics: Diagnostic[];
  /** The documents lowered, sorted by kind, namespace and name. */
  ruleSet: RuleSet;
  /** Counts for summaries. */
  stats: { files: number; documents: number; policies: number };
  /** Postures declared by every v1 Namespace among the inputs, by namespace name. */
  namespacePostures: Map<string, NamespacePostures>;
}

/** Options of lint. */
export interface LintOptions {
  /** Invoked after each input, for progress display. */
  onFile?: (done: number, total: number) => void;
  /** Targets on which every rule must be enforced (`--require-enforced`; compiler/enforcement). */
  requireEnforced?: readonly EnforcementTarget[];
}

/** Assembles the result of the stages. */
export function assembleLintResult(
  inputs: number,
  parseDiagnostics: readonly Diagnostic[],
  checked: CheckedDocuments,
  located: readonly LocatedPolicy[],
  crossDiagnostics: readonly Diagnostic[],
): LintResult {
  const diagnostics = [...parseDiagnostics, ...checked.diagnostics, ...crossDiagnostics];
  diagnostics.sort(compareDiagnostics);
  return {
    documents: checked.policies.map((p) => p.document),
    diagnostics,
    ruleSet: toRuleSet(located),
    stats: { files: inputs, documents: checked.documentCount, policies: checked.policies.length },
    namespacePostures: checked.namespaces,
  };
}
