// The rule for custom OPA policies: each loaded policy's deny entrypoint is evaluated with the AdmissionReview
// request as input, and each message it returns denies. A policy that fails to evaluate denies (fail closed).
import { AdmissionCode } from '../../compiler/diagnostics/codes/admission.js';
import { isRecord } from '../../compiler/model/json-value.js';
import { Operation, type AdmissionRequest } from '../admission-review.js';
import { ALLOW, type Decision, type DecisionItem } from '../decision.js';
import type { AdmissionRule } from './rule.js';

/** A loaded custom policy: its name (the file) and its deny entrypoint, evaluated synchronously. */
export interface CustomPolicy {
  readonly name: string;
  /** Returns the OPA result set (`[{ result: <deny> }]`); throws when the policy aborts. */
  evaluateDeny(input: unknown): unknown;
}

const MAX_MESSAGE = 1024;

function shorten(s: string): string {
  return s.length > MAX_MESSAGE ? `${s.slice(0, MAX_MESSAGE)}…` : s;
}

/** Reads the deny messages out of a result set: strings, or objects `{ msg, path? }`; `true` alone denies too. */
export function readDenyMessages(policyName: string, resultSet: unknown): DecisionItem[] {
  if (!Array.isArray(resultSet)) return [];
  const items: DecisionItem[] = [];
  for (const entry of resultSet as unknown[]) {
    const result = isRecord(entry) ? entry['result'] : undefined;
    const values: unknown[] = Array.isArray(result)
      ? (result as unknown[])
      : result === true
        ? [`denied by ${policyName}`]
        : [];
    for (const v of values) {
      if (typeof v === 'string')
        items.push({ code: AdmissionCode.CustomDeny, path: '.', message: shorten(v) });
      else if (isRecord(v) && typeof v['msg'] === 'string') {
        const path = typeof v['path'] === 'string' && v['path'] !== '' ? shorten(v['path']) : '.';
        items.push({ code: AdmissionCode.CustomDeny, path, message: shorten(v['msg']) });
      } else
        items.push({
          code: AdmissionCode.CustomDeny,
          path: '.',
          message: shorten(JSON.stringify(v) ?? String(v)),
        });
    }
  }
  return items;
}

/** Decides one request with every custom policy. `onFailure` is told about policies that threw. */
export function decideByCustomPolicies(
  request: AdmissionRequest,
  policies: readonly CustomPolicy[],
  onFailure: (policy: string, error: unknown) => void,
): Decision {
  if (policies.length === 0) return ALLOW;
  if (request.operation !== Operation.Create && request.operation !== Operation.Update) return ALLOW;
  const errors: DecisionItem[] = [];
  for (const policy of policies) {
    let resultSet: unknown;
    try {
      resultSet = policy.evaluateDeny(request);
    } catch (err) {
      onFailure(policy.name, err);
      errors.push({
        code: AdmissionCode.CustomPolicyFailed,
        path: '.',
        message: `custom policy ${policy.name} failed to evaluate; the request is denied`,
      });
      continue;
    }
    errors.push(...readDenyMessages(policy.name, resultSet));
  }
  return { allowed: errors.length === 0, errors, warnings: [] };
}

/** Creates the custom-policy rule. */
export function createCustomPolicyRule(
  policies: readonly CustomPolicy[],
  onFailure: (policy: string, error: unknown) => void,
): AdmissionRule {
  return {
    name: 'custom-policies',
    decide: (request) => decideByCustomPolicies(request, policies, onFailure),
  };
}
