// What one target does with each rule of a policy, from the enforcement table: the enforcer's status reports it
// per policy for its running plane, and lint's warnings are built from the same assessments.
import type { PolicyIR, PolicyKind } from '../ir/rule-set.js';
import {
  EnforcementLevel,
  LEVEL_ORDER,
  findEnforcementRow,
  getEnforcementCell,
  getTargetInfo,
  isKindCarried,
  type EnforcementTarget,
} from './enforcement-table.js';
import { listRuleEntries } from './rule-forms.js';

/** A form of a rule that the target does not enforce, and why. */
export interface FormGap {
  form: string;
  /** The form as warnings name it (`fromSource dir`). */
  title: string;
  level: EnforcementLevel;
  reason: string;
}

/** A target's level for one rule: the weakest level of its forms, with the forms below enforced. */
export interface RuleAssessment {
  level: EnforcementLevel;
  gaps: FormGap[];
}

/** The weaker of two levels. */
export function weakerLevel(a: EnforcementLevel, b: EnforcementLevel): EnforcementLevel {
  return LEVEL_ORDER.indexOf(a) <= LEVEL_ORDER.indexOf(b) ? a : b;
}

/**
 * What one running node cannot do although its target's column says "enforced" (a part of the plane that is
 * off there, such as the cgroup network programs): a reason for the form, or undefined when it is in force.
 */
export type UnavailableForms = (form: string, kind: PolicyKind) => string | undefined;

/** What `target` does with a rule of these forms in a policy of this kind. */
export function assessRule(
  forms: readonly string[],
  target: EnforcementTarget,
  kind: PolicyKind,
  unavailable?: UnavailableForms,
): RuleAssessment {
  if (!isKindCarried(target, kind)) {
    return {
      level: EnforcementLevel.NotEnforced,
      gaps: [
        {
          form: 'policy kind',
          title: kind,
          level: EnforcementLevel.NotEnforced,
          reason: getTargetInfo(target).kindsNote ?? `${kind} is not carried`,
        },
      ],
    };
  }
  let level: EnforcementLevel = EnforcementLevel.Enforced;
  const gaps: FormGap[] = [];
  for (const form of forms) {
    const table = getEnforcementCell(form, target);
    // A part of the plane that is off on the node neither enforces nor audits what the table says it does.
    const off = table.level !== EnforcementLevel.NotEnforced ? unavailable?.(form, kind) : undefined;
    const cell = off === undefined ? table : { level: EnforcementLevel.NotEnforced, reason: off };
    if (cell.level === EnforcementLevel.Enforced) continue;
    level = weakerLevel(level, cell.level);
    gaps.push({
      form,
      title: findEnforcementRow(form)?.title ?? form,
      level: cell.level,
      reason: cell.reason ?? '',
    });
  }
  return { level, gaps };
}

/** A rule the target audits only or does not enforce. */
export interface RuleGap {
  /** JSON pointer of the rule in its document (`/spec/network/matchProtocols/0`). */
  pointer: string;
  file: string;
  line: number;
  level: EnforcementLevel;
  gaps: FormGap[];
}

/** What one target does with one policy. */
export interface PolicyEnforcement {
  kind: PolicyKind;
  namespace: string;
  name: string;
  target: EnforcementTarget;
  /** False when the target does not carry this kind of policy at all (then every rule is not enforced). */
  carried: boolean;
  /** The weakest level over the policy's rules (enforced for a policy without rules). */
  level: EnforcementLevel;
  /** Pointers of the rules the target enforces. */
  enforced: string[];
  auditedOnly: RuleGap[];
  notEnforced: RuleGap[];
}

/**
 * What `target` enforces, audits only, and cannot enforce of one policy's rules; on a running node, `unavailable`
 * names what its plane has off although the table says enforced.
 */
export function summarizeEnforcement(
  policy: PolicyIR,
  target: EnforcementTarget,
  unavailable?: UnavailableForms,
): PolicyEnforcement {
  const summary: PolicyEnforcement = {
    kind: policy.kind,
    namespace: policy.namespace,
    name: policy.name,
    target,
    carried: isKindCarried(target, policy.kind),
    level: EnforcementLevel.Enforced,
    enforced: [],
    auditedOnly: [],
    notEnforced: [],
  };
  for (const entry of listRuleEntries(policy)) {
    const a = assessRule(entry.forms, target, policy.kind, unavailable);
    summary.level = weakerLevel(summary.level, a.level);
    if (a.level === EnforcementLevel.Enforced) {
      summary.enforced.push(entry.location.pointer);
      continue;
    }
    const gap: RuleGap = {
      pointer: entry.location.pointer,
      file: entry.location.file,
      line: entry.location.line,
      level: a.level,
      gaps: a.gaps,
    };
    (a.level === EnforcementLevel.AuditedOnly ? summary.auditedOnly : summary.notEnforced).push(gap);
  }
  return summary;
}
