// The decision oracle for system calls and the filelessExec preset (docs/semantics.md, "System calls"): for one
// system call of one workload (its name, the path it names if any, the calling executable), which `syscalls`
// rule decides and the alert it produces; for one exec of a file without links (a memfd, an O_TMPFILE or a
// deleted file), what the filelessExec preset says. Same selection of policies and the same ordering ideas as
// decideOperation (the most specific rule wins, then Block > Audit > Allow, then where the rule is written).
// There is no posture for system calls: an Allow rule silences an alert, it does not make a workload
// least-permissive.
import {
  Action,
  PolicyKind,
  type PolicyIR,
  type PresetRule,
  type RuleSet,
  type SyscallRule,
} from '../ir/rule-set.js';
import { WorkloadKind, type Workload } from './decision-input.js';
import {
  AlertResult,
  AlertType,
  DecisionBasis,
  type Decision,
  type DecisionAlert,
  type RuleReference,
} from './decision.js';
import { matchesSource } from './match-rule.js';
import { getDirectoryDepth, isInDirectory, normalizeAbsolutePath } from './path-match.js';
import { selectPolicies } from './select-policies.js';

/** The alert `Operation` of system call decisions. */
export const SYSCALL_OPERATION = 'Syscall';
/** The alert `Operation` of fileless exec decisions (an exec, as Process alerts are). */
export const FILELESS_OPERATION = 'Process';
/** The preset name of fileless exec (the reference's). */
export const FILELESS_PRESET = 'filelessExec';

/** One system call to decide. */
export interface SyscallRequest {
  /** The call's name as the schema lists it (`unlink`, `openat`). */
  syscall: string;
  /** The absolute path the call names (its path argument resolved), when it names one. */
  path?: string;
  /** Absolute path of the calling process's executable, if known. */
  executable?: string;
}

/** A syscalls rule with its policy. */
export interface PolicySyscallRule {
  policy: PolicyIR;
  rule: SyscallRule;
}

/** The kind of a rule's path: a file, a directory (ends in `/`), or none (matchSyscalls). */
function pathKind(rule: SyscallRule): 'file' | 'directory' | 'none' {
  if (rule.path === undefined) return 'none';
  return rule.path.endsWith('/') ? 'directory' : 'file';
}

/**
 * Specificity tier of a syscalls rule, lower first: a file path with a source, a file path, a directory with a
 * source, a directory, no path with a source, no path.
 */
export function getSyscallTier(rule: SyscallRule): number {
  const withSource = rule.fromSource.length > 0 ? 0 : 1;
  const kind = pathKind(rule);
  return (kind === 'file' ? 0 : kind === 'directory' ? 2 : 4) + withSource;
}

const ACTION_RANK: Record<Action, number> = { [Action.Block]: 0, [Action.Audit]: 1, [Action.Allow]: 2 };

function compareStrings(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Total order on syscalls rules: negative when `a` takes precedence over `b`. */
export function compareSyscallPrecedence(a: PolicySyscallRule, b: PolicySyscallRule): number {
  const ra = a.rule;
  const rb = b.rule;
  const byTier = getSyscallTier(ra) - getSyscallTier(rb);
  if (byTier !== 0) return byTier;
  if (pathKind(ra) === 'directory' && pathKind(rb) === 'directory') {
    const byDepth = getDirectoryDepth(rb.path ?? '/') - getDirectoryDepth(ra.path ?? '/');
    if (byDepth !== 0) return byDepth;
    const byRecursion = Number(ra.recursive) - Number(rb.recursive);
    if (byRecursion !== 0) return byRecursion;
  }
  const byAction = ACTION_RANK[ra.action] - ACTION_RANK[rb.action];
  if (byAction !== 0) return byAction;
  return (
    compareStrings(a.policy.kind, b.policy.kind) ||
    compareStrings(a.policy.namespace, b.policy.namespace) ||
    compareStrings(a.policy.name, b.policy.name) ||
    compareStrings(ra.location.file, rb.location.file) ||
    ra.location.line - rb.location.line ||
    ra.location.column - rb.location.column ||
    compareStrings(ra.location.pointer, rb.location.pointer)
  );
}

/** True when the rule matches the call: its name, its path (file: equal; directory: in it), its source. */
export function matchesSyscallRule(rule: SyscallRule, request: SyscallRequest): boolean {
  if (!rule.syscalls.includes(request.syscall)) return false;
  if (rule.path !== undefined) {
    if (request.path === undefined || !request.path.startsWith('/')) return false;
    const path = normalizeAbsolutePath(request.path);
    if (rule.path.endsWith('/') ? !isInDirectory(path, rule.path, rule.recursive) : path !== rule.path)
      return false;
  }
  if (rule.fromSource.length > 0) {
    const actor = request.executable === undefined ? undefined : normalizeAbsolutePath(request.executable);
    if (actor === undefined || !rule.fromSource.some((s) => matchesSource(s, actor))) return false;
  }
  return true;
}

function toReference(policy: PolicyIR, rule: { location: SyscallRule['location'] }): RuleReference {
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

function alertType(policy: PolicyIR, workload: Workload): AlertType {
  return policy.kind === PolicyKind.RuntimeHostPolicy || workload.kind === WorkloadKind.Host
    ? AlertType.MatchedHostPolicy
    : AlertType.MatchedPolicy;
}

function decided(
  policy: PolicyIR,
  rule: {
    action: Action;
    severity: number;
    tags: string[];
    message: string;
    location: SyscallRule['location'];
  },
  workload: Workload,
  operation: string,
): Decision {
  const reference = toReference(policy, rule);
  if (rule.action === Action.Allow)
    return { allowed: true, basis: DecisionBasis.Rule, alert: null, rule: reference };
  const block = rule.action === Action.Block;
  const alert: DecisionAlert = {
    PolicyName: policy.name,
    Type: alertType(policy, workload),
    Operation: operation,
    Action: block ? Action.Block : Action.Audit,
    Result: block ? AlertResult.PermissionDenied : AlertResult.Passed,
    Severity: String(rule.severity),
  };
  if (rule.tags.length > 0) alert.Tags = rule.tags.join(',');
  if (rule.message !== '') alert.Message = rule.message;
  return block
    ? { allowed: false, errno: 'EACCES', basis: DecisionBasis.Rule, alert, rule: reference }
    : { allowed: true, basis: DecisionBasis.Rule, alert, rule: reference };
}

/** The syscalls rule that decides a call, if any (first in precedence among the matching ones). */
export function findSyscallWinner(
  ruleSet: RuleSet,
  workload: Workload,
  request: SyscallRequest,
): PolicySyscallRule | undefined {
  let winner: PolicySyscallRule | undefined;
  for (const policy of selectPolicies(ruleSet.policies, workload))
    for (const rule of policy.syscallRules) {
      if (!matchesSyscallRule(rule, request)) continue;
      const c = { policy, rule };
      if (winner === undefined || compareSyscallPrecedence(c, winner) < 0) winner = c;
    }
  return winner;
}

/**
 * Decides one system call of one workload. Block: denied with EACCES where a plane can deny the call (the
 * capability table says where; elsewhere it is reported as an audit). No rule: allowed without alert.
 */
export function decideSyscall(ruleSet: RuleSet, workload: Workload, request: SyscallRequest): Decision {
  const winner = findSyscallWinner(ruleSet, workload, request);
  if (winner === undefined) return { allowed: true, basis: DecisionBasis.Default, alert: null, rule: null };
  return decided(winner.policy, winner.rule, workload, SYSCALL_OPERATION);
}

/**
 * Decides the exec of a file without links (a memfd, an O_TMPFILE or a deleted file) in a workload: the
 * filelessExec presets of the selecting policies, Block > Audit > Allow, then by policy (kind, namespace,
 * name) and where the preset is written. The preset's alert takes the policy's severity, tags and message.
 */
export function decideFilelessExec(ruleSet: RuleSet, workload: Workload): Decision {
  let best:
    { policy: PolicyIR; preset: PresetRule; action: Action; location: SyscallRule['location'] } | undefined;
  for (const policy of selectPolicies(ruleSet.policies, workload))
    for (const preset of policy.presets) {
      if (preset.name !== FILELESS_PRESET) continue;
      const c = { policy, preset, action: preset.action, location: preset.location };
      const better =
        best === undefined ||
        ACTION_RANK[c.action] - ACTION_RANK[best.action] ||
        compareStrings(c.policy.kind, best.policy.kind) ||
        compareStrings(c.policy.namespace, best.policy.namespace) ||
        compareStrings(c.policy.name, best.policy.name) ||
        compareStrings(c.location.pointer, best.location.pointer);
      if (better === true || (typeof better === 'number' && better < 0)) best = c;
    }
  if (best === undefined) return { allowed: true, basis: DecisionBasis.Default, alert: null, rule: null };
  return decided(best.policy, best.preset, workload, FILELESS_OPERATION);
}
