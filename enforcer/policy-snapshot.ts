// Builds a policy snapshot (pure) through the compiler's front end (parse, schema, checks, lowering, cross
// checks): from texts (the directory source) or from API objects (the Kubernetes source). Namespace postures
// come from the Namespace objects of the same input, read by the model's rule (compiler/model/posture.ts).
import {
  lintObjects,
  lintTexts,
  type LintResult,
  type SourceObject,
  type SourceText,
} from '../compiler/lint.js';
import { Severity } from '../compiler/diagnostics/diagnostic.js';
import { createIncrementalLinter } from '../compiler/front-end/lint-texts-incremental.js';
import type { PolicySnapshot } from './policy-source.js';

function toSnapshot(lint: LintResult): PolicySnapshot {
  return {
    ruleSet: lint.ruleSet,
    diagnostics: lint.diagnostics.filter((d) => d.severity !== Severity.Info),
    postures: new Map([...lint.namespacePostures].map(([ns, n]) => [ns, n.postures])),
  };
}

/** A snapshot of policy texts: the rule set of the valid policies and every finding. */
export function buildSnapshot(sources: readonly SourceText[]): PolicySnapshot {
  return toSnapshot(lintTexts(sources));
}

/** A snapshot of API objects (policies and Namespaces), never turned back into YAML text. */
export function buildSnapshotFromObjects(sources: readonly SourceObject[]): PolicySnapshot {
  return toSnapshot(lintObjects(sources));
}

/**
 * Snapshots of successive versions of the same texts (the directory source): a file whose text did not
 * change is not parsed, checked or lowered again; the cross checks run over all of them every time. Each
 * snapshot equals buildSnapshot of the same texts.
 */
export function createSnapshotBuilder(): (sources: readonly SourceText[]) => PolicySnapshot {
  const linter = createIncrementalLinter();
  return (sources) => toSnapshot(linter.lint(sources));
}
