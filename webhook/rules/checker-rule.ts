// The rule that runs the compiler's document checkers over the object under review: policy kinds (parse,
// schema, semantic checks), namespace posture annotations and IMDS-unsafe node settings, the same codes as lint.
import type { CheckContext } from '../../compiler/checks/document-checker.js';
import type { Finding } from '../../compiler/diagnostics/finding.js';
import { Operation, type AdmissionRequest } from '../admission-review.js';
import { ALLOW, decideFromFindings, type Decision } from '../decision.js';
import type { AdmissionRule } from './rule.js';

/** The compiler entry the webhook calls: `checkAdmissionObject` of compiler/lint.ts. */
export type ObjectCheck = (object: unknown, context: CheckContext) => Finding[];

/** Decides one request with the checkers: CREATE and UPDATE are checked, other operations pass. */
export function decideByCheckers(request: AdmissionRequest, check: ObjectCheck): Decision {
  if (request.operation !== Operation.Create && request.operation !== Operation.Update) return ALLOW;
  return decideFromFindings(check(request.object, { operation: request.operation }));
}

/** Creates the checker rule around the compiler's `checkAdmissionObject`. */
export function createCheckerRule(check: ObjectCheck): AdmissionRule {
  return { name: 'checkers', decide: (request) => decideByCheckers(request, check) };
}
