// The decision oracle (docs/semantics.md): for one operation of one workload, which rule
// decides, whether the operation is allowed, and the alert it produces. Pure and independent of policy
// order; every data plane is tested against it. Choices of detail are listed in
// docs/rule-table.md ("Choices the oracle makes"). `syscalls` rules and presets are monitors, outside it.
import { Action, PolicyKind, type PolicyIR, type Rule, type RuleSet } from '../ir/rule-set.js';
import {
  Posture,
  WorkloadKind,
  type OperationRequest,
  type Postures,
  type Workload,
} from './decision-input.js';
import {
  AlertResult,
  AlertType,
  DEFAULT_POSTURE_POLICY,
  DEFAULT_POSTURE_SEVERITY,
  DecisionBasis,
  type Decision,
  type DecisionAlert,
  type RuleReference,
} from './decision.js';
import {
  getActor,
  isMatcherForOperation,
  matchesRule,
  matchesSource,
  normalizeOperationRequest,
} from './match-rule.js';
import { getPosture } from '../model/posture.js';
import { compareRulePrecedence, type PolicyRule } from './precedence.js';
import { selectPolicies } from './select-policies.js';

/** The posture that applies to an operation class (Process follows the file posture): the model's rule. */
export { getPosture };

/** Where a rule of a policy is written. */
export function toRuleReference(policy: PolicyIR, rule: Rule): RuleReference {
  return {
    policy: policy.name,
    kind: policy.kind,
    namespace: policy.namespace,
    file: rule.location.file,
    line: rule.location.line,
    column: rule.location.column,
    pointer: rule.location.pointer,
  };
}

function getAlertType(workload: Workload): AlertType {
  return workload.kind === WorkloadKind.Host ? AlertType.MatchedHostPolicy : AlertType.MatchedPolicy;
}

function createRuleAlert(winner: PolicyRule, workload: Workload, action: 'Block' | 'Audit'): DecisionAlert {
  const alert: DecisionAlert = {
    PolicyName: winner.policy.name,
    Type:
      winner.policy.kind === PolicyKind.RuntimeHostPolicy
        ? AlertType.MatchedHostPolicy
        : getAlertType(workload),
    Operation: winner.rule.operation,
    Action: action,
    Result: action === Action.Block ? AlertResult.PermissionDenied : AlertResult.Passed,
    Severity: String(winner.rule.severity),
  };
  if (winner.rule.tags.length > 0) alert.Tags = winner.rule.tags.join(',');
  if (winner.rule.message !== '') alert.Message = winner.rule.message;
  return alert;
}

/** The Allow rule that makes the workload least-permissive for this operation, if any (first in precedence). */
function findLeastPermissiveRule(
  candidates: readonly PolicyRule[],
  operation: OperationRequest,
): PolicyRule | undefined {
  const actor = getActor(operation);
  let best: PolicyRule | undefined;
  for (const c of candidates) {
    if (c.rule.action !== Action.Allow || c.rule.operation !== operation.operation) continue;
    if (!isMatcherForOperation(c.rule.matcher, c.rule.operation)) continue;
    // Allowed destinations make connects and sends least-permissive, not the creation of sockets.
    if (c.rule.matcher.kind === 'address' && operation.address === undefined) continue;
    const scoped = c.rule.fromSource.length > 0;
    if (scoped && (actor === undefined || !c.rule.fromSource.some((s) => matchesSource(s, actor)))) continue;
    if (best === undefined || compareRulePrecedence(c, best) < 0) best = c;
  }
  return best;
}

/**
 * Decides one operation of one workload under a rule set and the namespace postures.
 * The result does not depend on the order of policies or rules in the rule set.
 */
export function decideOperation(
  ruleSet: RuleSet,
  workload: Workload,
  operation: OperationRequest,
  postures: Postures = {},
): Decision {
  operation = normalizeOperationRequest(operation);
  const candidates: PolicyRule[] = [];
  for (const policy of selectPolicies(ruleSet.policies, workload)) {
    for (const rule of policy.rules) candidates.push({ policy, rule });
  }
  let winner: PolicyRule | undefined;
  for (const c of candidates) {
    if (!matchesRule(c.rule, operation)) continue;
    if (winner === undefined || compareRulePrecedence(c, winner) < 0) winner = c;
  }
  if (winner !== undefined) {
    const rule = toRuleReference(winner.policy, winner.rule);
    switch (winner.rule.action) {
      case Action.Block:
        return {
          allowed: false,
          errno: 'EACCES',
          basis: DecisionBasis.Rule,
          alert: createRuleAlert(winner, workload, Action.Block),
          rule,
        };
      case Action.Audit:
        return {
          allowed: true,
          basis: DecisionBasis.Rule,
          alert: createRuleAlert(winner, workload, Action.Audit),
          rule,
        };
      case Action.Allow:
        return { allowed: true, basis: DecisionBasis.Rule, alert: null, rule };
    }
  }
  const lp = findLeastPermissiveRule(candidates, operation);
  if (lp === undefined) return { allowed: true, basis: DecisionBasis.Default, alert: null, rule: null };
  const block = getPosture(postures, operation.operation) === Posture.Block;
  const alert: DecisionAlert = {
    PolicyName: DEFAULT_POSTURE_POLICY,
    Type: getAlertType(workload),
    Operation: operation.operation,
    Action: block ? Action.Block : Action.Audit,
    Result: block ? AlertResult.PermissionDenied : AlertResult.Passed,
    Severity: DEFAULT_POSTURE_SEVERITY,
  };
  const base = {
    basis: DecisionBasis.Posture,
    alert,
    rule: null,
    leastPermissiveBy: toRuleReference(lp.policy, lp.rule),
  };
  return block ? { allowed: false, errno: 'EACCES', ...base } : { allowed: true, ...base };
}
