// The document checker of the two policy kinds: apiVersion, then the JSON Schema, then (on schema-valid
// documents) the per-document semantic rules. Rules checked against each other are the cross checks'
// (compiler/front-end runs them across the inputs, or within the one policy under admission).
import { Code } from '../../diagnostics/codes/code.js';
import type { Finding } from '../../diagnostics/finding.js';
import { PolicyKind } from '../../ir/rule-set.js';
import { API_GROUP, API_GROUP_VERSION } from '../../schema/policy-schema.js';
import { validatePolicySchema } from '../../schema/validate.js';
import type { CheckContext, DocumentChecker, ObjectHead } from '../document-checker.js';
import { DOCUMENT_RULES } from './document-rules.js';
import type { PolicyObject } from './document-rules.js';
import { checkEnforcement } from './enforcement-rule.js';

/** True for the kind names of our policy kinds. */
export function isPolicyKind(kind: string): kind is PolicyKind {
  return kind === PolicyKind.RuntimePolicy || kind === PolicyKind.RuntimeHostPolicy;
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
          code: Code.wrongApiVersion,
          severity: 'error',
          pointer: '/apiVersion',
          message: `apiVersion: ${JSON.stringify(o.apiVersion)} is not served; expected ${JSON.stringify(API_GROUP_VERSION)}`,
        },
      ];
    }
    const schemaFindings = validatePolicySchema(o.kind, object);
    if (schemaFindings.length > 0) return schemaFindings;
    const policy = object as PolicyObject;
    const findings: Finding[] = [];
    for (const rule of DOCUMENT_RULES) for (const f of rule(policy, o.kind)) findings.push(f);
    for (const f of checkEnforcement(o.kind, object, context)) findings.push(f);
    return findings;
  },
};
