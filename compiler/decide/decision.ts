// The output of a decision: allowed or not, the alert it produces, and the rule that decided.
import type { Action, PolicyKind } from '../ir/rule-set.js';

/** Policy name used in alerts for operations decided by the namespace posture. */
export const DEFAULT_POSTURE_POLICY = 'DefaultPosture';

/**
 * `Severity` of alerts the posture decides: empty. No rule decided, so there is no severity to report (the
 * reference leaves it empty too); outputs' `minSeverity` reads it as 0 (docs/alerts.md).
 */
export const DEFAULT_POSTURE_SEVERITY = '';

/** Alert `Result` values. */
export const AlertResult = { PermissionDenied: 'Permission denied', Passed: 'Passed' } as const;
export type AlertResult = (typeof AlertResult)[keyof typeof AlertResult];

/** Alert `Type` values. */
export const AlertType = { MatchedPolicy: 'MatchedPolicy', MatchedHostPolicy: 'MatchedHostPolicy' } as const;
export type AlertType = (typeof AlertType)[keyof typeof AlertType];

/** The policy fields of the alert record a decision produces. */
export interface DecisionAlert {
  PolicyName: string;
  Type: AlertType;
  Operation: string;
  Action: typeof Action.Block | typeof Action.Audit;
  Result: AlertResult;
  /** Numeric string, as in alert records. `0` for posture alerts. */
  Severity: string;
  /** Comma-separated tags, when the rule has any. */
  Tags?: string;
  /** The rule's message, when it has one. */
  Message?: string;
}

/** Where the deciding rule is written. */
export interface RuleReference {
  policy: string;
  kind: PolicyKind;
  namespace: string;
  file: string;
  line: number;
  column: number;
  pointer: string;
}

/** Why the posture was consulted or not, for explanations. */
export const DecisionBasis = {
  /** A rule matched and decided. */
  Rule: 'rule',
  /** No rule matched; the workload is least-permissive for the class, the posture decided. */
  Posture: 'posture',
  /** No rule matched and the workload is not least-permissive: allowed silently. */
  Default: 'default',
} as const;
export type DecisionBasis = (typeof DecisionBasis)[keyof typeof DecisionBasis];

/** The answer of the oracle. */
export interface Decision {
  allowed: boolean;
  /** `EACCES` for BPF-LSM/oracle denials; absent when allowed. */
  errno?: 'EACCES';
  basis: DecisionBasis;
  alert: DecisionAlert | null;
  /** The rule that decided, or null when the posture or the default decided. */
  rule: RuleReference | null;
  /** Posture decisions: the Allow rule that put the workload in least-permissive mode. */
  leastPermissiveBy?: RuleReference;
}
