// Entry for one admission object (the webhook): the document checks, then, for a policy without errors, the
// cross checks a lone policy can fail (its own rules conflicting with or shadowing each other). Findings stay
// located by pointer; the webhook turns pointers into JSON paths.
import type { CheckContext } from '../checks/document-checker.js';
import { checkConflictingRules } from '../checks/cross/conflicting-rules.js';
import type { CrossRule } from '../checks/cross/cross-rule.js';
import { checkUnreachableSources } from '../checks/cross/unreachable-sources.js';
import type { Finding } from '../diagnostics/finding.js';
import { isRecord } from '../model/json-value.js';
import { isLowerable, toPolicyDocument } from './check-documents.js';
import { checkObjectDocument } from './check-object.js';
import { createObjectLocator } from './document-locator.js';
import { lowerDocument } from './lower-documents.js';

/** The cross rules that apply within one policy. */
const WITHIN_POLICY_RULES: readonly CrossRule[] = [checkConflictingRules, checkUnreachableSources];

/** Checks one object under admission. Never throws for bad input. */
export function checkAdmissionObject(object: unknown, context: CheckContext = {}): Finding[] {
  // Alone, the object has no text: its rules' locations are pointers only (lowered without lazy positions).
  const { findings } = checkObjectDocument(object, { ...context, withoutPositions: true });
  if (!isRecord(object)) return findings;
  const { kind, apiVersion } = object;
  if (typeof kind !== 'string' || typeof apiVersion !== 'string') return findings;
  if (!isLowerable(kind, apiVersion, findings)) return findings;
  // Alone, the policy has no file: rule locations read as paths inside it (checks/cross/cross-rule.ts).
  const source = { locator: createObjectLocator(''), index: 0, value: object };
  const located = [lowerDocument({ document: toPolicyDocument(source, kind, object), source })];
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
