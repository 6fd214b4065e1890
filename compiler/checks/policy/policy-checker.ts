// The document checker of the two policy kinds: apiVersion, then the JSON Schema, then (on schema-valid
// documents) the per-document semantic rules.
import type { Finding } from '../../diagnostics/finding.js';
import { PolicyKind } from '../../ir/rule-set.js';
import { API_GROUP, API_GROUP_VERSION } from '../../schema/policy-schema.js';
import { validatePolicySchema } from '../../schema/validate.js';
import type { CheckContext, DocumentChecker, ObjectHead } from '../document-checker.js';
import { DOCUMENT_RULES } from './document-rules.js';
import { checkConflictingRules } from '../cross/conflicting-rules.js';
import { checkUnreachableSources } from '../cross/unreachable-sources.js';
import { lowerPolicy } from '../../lower/lower-policy.js';
import type { PolicyDocument } from '../../model/policy-document.js';
import type { Postures } from '../../model/posture.js';
import type { PolicyObject } from './document-rules.js';

/** True for the kind names of our policy kinds. */
export function isPolicyKind(kind: string): kind is PolicyKind {
  return kind === PolicyKind.RuntimePolicy || kind === PolicyKind.RuntimeHostPolicy;
}

/** Rules of one policy that conflict with, repeat, or make unreachable other rules of the same policy. */
function checkWithinPolicy(kind: PolicyKind, object: unknown): Finding[] {
  const doc = { kind, object, file: '', index: 0, line: 1 } as PolicyDocument;
  const policy = lowerPolicy(doc, () => ({ line: 1, column: 1 }));
  const located = [{ policy, file: '', document: 0 }];
  const context = { namespacePostures: new Map<string, Postures>() };
  return [checkConflictingRules, checkUnreachableSources]
    .flatMap((rule) => rule(located, context))
    .map(({ finding }): Finding => {
      const { related, ...rest } = finding;
      return related === undefined
        ? rest
        : { ...rest, related: related.map((r) => ({ message: r.message, pointer: r.pointer })) };
    });
}

/** Checks RuntimePolicy and RuntimeHostPolicy objects. */
export const policyChecker: DocumentChecker = {
  name: 'policy',
  appliesTo(head: ObjectHead): boolean {
    return (
      isPolicyKind(head.kind) &&
      (head.apiVersion === API_GROUP_VERSION || head.apiVersion.startsWith(`${API_GROUP}/`))
    );
  },
  check(object: unknown, context: CheckContext): Finding[] {
    const o = object as { apiVersion: string; kind: string };
    if (!isPolicyKind(o.kind)) return [];
    if (o.apiVersion !== API_GROUP_VERSION) {
      return [
        {
          code: 'RT2010',
          severity: 'error',
          pointer: '/apiVersion',
          message: `apiVersion: ${JSON.stringify(o.apiVersion)} is not served; expected ${JSON.stringify(API_GROUP_VERSION)}`,
        },
      ];
    }
    const schemaFindings = validatePolicySchema(o.kind, object);
    if (schemaFindings.length > 0) return schemaFindings;
    const policy = object as PolicyObject;
    const findings = DOCUMENT_RULES.flatMap((rule) => rule(policy, o.kind as PolicyKind));
    if (findings.some((f) => f.severity === 'error') || context.crossChecked === true) return findings;
    return [...findings, ...checkWithinPolicy(o.kind, object)];
  },
};
