// Checks across documents: conflicts and duplicates between policies that select overlapping workloads,
// sources that can never run, Allow policies under an audit posture, and policies defined twice.
import type { Finding } from '../../diagnostics/finding.js';
import { pointerToPath } from '../../diagnostics/diagnostic.js';
import type { PolicyIR, SourceLocation } from '../../ir/rule-set.js';
import type { Postures } from '../../model/posture.js';

/** A lowered policy and the document it came from. */
export interface LocatedPolicy {
  policy: PolicyIR;
  file: string;
  document: number;
}

/** A finding placed in a document. */
export interface CrossFinding {
  finding: Finding;
  file: string;
  document: number;
}

/** What cross checks know besides the policies: postures of the Namespace objects in the same input. */
export interface CrossContext {
  namespacePostures: ReadonlyMap<string, Readonly<Postures>>;
}

/** One cross-document check. */
export type CrossRule = (policies: readonly LocatedPolicy[], context: CrossContext) => CrossFinding[];

/**
 * Where a rule is, for messages: `file:line`, its path inside the same policy when checked alone, or the input
 * and the path when the input has no positions (an API object, line 0).
 */
export function describeLocation(loc: SourceLocation): string {
  if (loc.file === '') return `at ${pointerToPath(loc.pointer)}`;
  return loc.line === 0 ? `${loc.file} at ${pointerToPath(loc.pointer)}` : `${loc.file}:${loc.line}`;
}
