// Every document checker, in one array: `rtctl lint` and the admission webhook both run these.
import type { DocumentChecker, ObjectHead } from './document-checker.js';
import { namespacePostureChecker } from '../namespace-posture/namespace-posture-checker.js';
import { nodeSettingsChecker } from '../node-settings/node-settings-checker.js';
import { policyChecker } from './policy/policy-checker.js';

/** All checkers, in the order their findings are reported. Add a checker here to add an object family. */
export const DOCUMENT_CHECKERS: readonly DocumentChecker[] = [
  policyChecker,
  namespacePostureChecker,
  nodeSettingsChecker,
];

/** The checkers that validate objects with this head. */
export function findCheckers(head: ObjectHead): DocumentChecker[] {
  return DOCUMENT_CHECKERS.filter((c) => c.appliesTo(head));
}
