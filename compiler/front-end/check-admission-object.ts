// Entry for one admission object (the webhook): the document checks, then, for a policy without errors, the
// cross checks a lone policy can fail (its own rules conflicting with or shadowing each other). Findings stay
// located by pointer; the webhook turns pointers into JSON paths.
import type { CheckContext } from '../checks/document-checker.js';
import { checkConflictingRules } from '../checks/cross/conflicting-rules.js';
import type { CrossRule } from '../checks/cross/cross-rule.js';
import { checkUnreachableSources } from '../checks/cross/unreachable-sources.js';
import type { Finding } from '../diagnostics/finding.js';
import { isRecord } from '../model/json-value.js';
import { lowerPolicyOnce } from '../lower/lower-policy.js';
import type { PolicyDocument } from '../model/policy-document.js';
import { isLowerable } from './check-documents.js';
import { checkObjectDocument } from './check-object.js';

/** The cross rules that apply within one policy. */
const WITHIN_POLICY_RULES: readonly CrossRule[] = [checkConflictingRules, checkUnreachableSources];

const noPosition = (): { line: number; column: number } => ({ line: 0, column: 0 });

/** Checks one object under admission. Never throws for bad input. */
export function checkAdmissionObject(object: unknown, context: CheckContext = {}): Finding[] {
  // Alone, the object has no text: its rules' locations are pointers only (lowered without lazy positions).
  const { findings } = checkObjectDocument(object, { ...context, withoutPositions: true });
  if (!isRecord(object)) return findings;
  const { kind, apiVersion } = object;
  if (typeof kind !== 'string' || typeof apiVersion !== 'string') return findings;
  if (!isLowerable(kind, apiVersion, findings)) return findings;
  // Alone, the policy has no file and no text: rule locations read as paths inside it (checks/cross/cross-rule.ts),
  // line and column 0, as an object locator gives them; the checks' lowering is taken over.
  const document = { kind, object, file: '', index: 0, line: 0 } as PolicyDocument;
  const located = [{ policy: lowerPolicyOnce(document, noPosition), file: '', document: 0 }];
  for (const rule of WITHIN_POLICY_RULES) {
    for (const { finding } of rule(located, { namespacePostures: new Map() })) {
      const { related, ...rest } = finding;
      findings.push(
        related === undefined
          ? rest
          : { ...rest, related: related.map((r) => ({ message: r.message, pointer: r.pointer })) },
      );
    }
  }
  return findings;
}
