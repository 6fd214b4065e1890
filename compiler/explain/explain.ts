// `rtctl explain` without I/O: runs the oracle on a request and renders its answer as text or JSON.
import { decideOperation, getPosture } from '../decide/decide.js';
import type { Decision, DecisionAlert, RuleReference } from '../decide/decision.js';
import { formatAddressMatcher, type Rule, type RuleSet } from '../ir/rule-set.js';
import type { ExplainRequest } from './explain-request.js';

/** The deciding rule as `explain --json` prints it. */
export interface ExplainRule {
  file: string;
  line: number;
  column: number;
  policy: string;
  namespace: string;
  kind: string;
  /** What the rule says, in words (`File Block directory /etc/ recursive`). */
  summary: string;
}

/** The JSON document `explain --json` prints. */
export interface ExplainResult {
  allowed: boolean;
  /** The alert's policy fields, or null when no alert is emitted. */
  alert: DecisionAlert | null;
  rule: ExplainRule | null;
  /** `rule`, `posture` or `default`. */
  basis: Decision['basis'];
  /** Posture decisions: the Allow rule that made the workload least-permissive. */
  leastPermissiveBy?: ExplainRule;
  posture?: string;
  /** The file whose Namespace object declared the postures, if any. */
  postureSource?: string;
  request: ExplainRequest;
}

/** A one-line description of a rule. */
export function summarizeRule(rule: Rule): string {
  const m = rule.matcher;
  const what =
    m.kind === 'path'
      ? `path ${m.path}`
      : m.kind === 'execname'
        ? `execname ${m.name}`
        : m.kind === 'directory'
          ? `directory ${m.dir}${m.recursive ? ' (recursive)' : ''}`
          : m.kind === 'pattern'
            ? `pattern ${m.pattern}`
            : m.kind === 'protocol'
              ? `protocol ${m.protocol}`
              : m.kind === 'address'
                ? `address ${formatAddressMatcher(m)}`
                : `capability ${m.capability}`;
  const extra = [
    rule.readOnly ? 'readOnly' : '',
    rule.ownerOnly ? 'ownerOnly' : '',
    rule.fromSource.length > 0
      ? `fromSource ${rule.fromSource.map((s) => (s.kind === 'path' ? s.path : `${s.dir}${s.recursive ? ' (recursive)' : ''}`)).join(', ')}`
      : '',
  ].filter((x) => x !== '');
  return `${rule.operation} ${rule.action} ${what}${extra.length > 0 ? ` [${extra.join('; ')}]` : ''}`;
}

function findRule(ruleSet: RuleSet, ref: RuleReference): ExplainRule {
  const policy = ruleSet.policies.find(
    (p) => p.name === ref.policy && p.namespace === ref.namespace && p.kind === ref.kind,
  );
  const rule = policy?.rules.find(
    (r) =>
      r.location.file === ref.file &&
      r.location.line === ref.line &&
      r.location.column === ref.column &&
      r.location.pointer === ref.pointer,
  );
  return {
    file: ref.file,
    line: ref.line,
    column: ref.column,
    policy: ref.policy,
    namespace: ref.namespace,
    kind: ref.kind,
    summary: rule === undefined ? '' : summarizeRule(rule),
  };
}

/** Decides the request and gathers what explain prints. */
export function explainRequest(ruleSet: RuleSet, request: ExplainRequest): ExplainResult {
  const d = decideOperation(ruleSet, request.workload, request.operation, request.postures);
  const result: ExplainResult = {
    allowed: d.allowed,
    alert: d.alert,
    rule: d.rule === null ? null : findRule(ruleSet, d.rule),
    basis: d.basis,
    request,
  };
  if (d.leastPermissiveBy !== undefined) {
    result.leastPermissiveBy = findRule(ruleSet, d.leastPermissiveBy);
    result.posture = getPosture(request.postures, request.operation.operation);
  }
  return result;
}

function describeWorkload(request: ExplainRequest): string {
  const w = request.workload;
  const pairs = (labels: Readonly<Record<string, string>>): string =>
    Object.entries(labels)
      .map(([k, v]) => `${k}=${v}`)
      .join(',') || '(no labels)';
  return w.kind === 'host'
    ? `host with node labels ${pairs(w.nodeLabels)}`
    : `pod in namespace ${w.namespace} with labels ${pairs(w.labels)}`;
}

function describeOperation(request: ExplainRequest): string {
  const op = request.operation;
  const actor = op.operation === 'Process' ? op.parentExecutable : op.executable;
  const by = actor === undefined ? '' : ` by ${actor}`;
  switch (op.operation) {
    case 'Process':
      return `exec ${op.resource}${by}`;
    case 'File':
      return `open ${op.resource} for ${op.write ? 'writing' : 'reading'}${op.owner ? ' (as owner)' : ''}${by}`;
    case 'Network':
      return op.address === undefined
        ? `socket ${op.resource}${by}`
        : `connect ${op.resource} to ${op.address.includes(':') ? `[${op.address}]` : op.address}:${op.port ?? 0}${by}`;
    case 'Capabilities':
      return `capability ${op.resource}${by}`;
  }
}

/** The text `rtctl explain` prints. */
export function formatExplainText(result: ExplainResult): string {
  const lines = [
    `operation: ${describeOperation(result.request)}`,
    `workload:  ${describeWorkload(result.request)}`,
    `decision:  ${result.allowed ? 'allowed' : 'denied (EACCES: Permission denied)'}`,
  ];
  if (result.alert === null) lines.push('alert:     none');
  else {
    const a = result.alert;
    const fields = [
      `PolicyName=${a.PolicyName}`,
      `Action=${a.Action}`,
      `Result=${a.Result}`,
      `Severity=${a.Severity}`,
      `Type=${a.Type}`,
      ...(a.Tags === undefined ? [] : [`Tags=${a.Tags}`]),
      ...(a.Message === undefined ? [] : [`Message=${JSON.stringify(a.Message)}`]),
    ];
    lines.push(`alert:     ${fields.join(' ')}`);
  }
  if (result.rule !== null) {
    const r = result.rule;
    lines.push(
      `rule:      ${r.file}:${r.line}:${r.column} policy ${r.namespace === '' ? '' : `${r.namespace}/`}${r.policy}: ${r.summary}`,
    );
  } else if (result.leastPermissiveBy !== undefined) {
    const r = result.leastPermissiveBy;
    lines.push(
      `rule:      none matched; the workload is least-permissive for this operation because of ${r.file}:${r.line}:${r.column} policy ${r.policy} (${r.summary}), so the ${result.posture ?? 'audit'} posture decided${result.postureSource === undefined ? '' : ` (namespace annotation in ${result.postureSource})`}`,
    );
  } else {
    lines.push(
      'rule:      none matched and no Allow rule makes the workload least-permissive: allowed without alert',
    );
  }
  return `${lines.join('\n')}\n`;
}

/** The JSON `rtctl explain --json` prints. */
export function formatExplainJson(result: ExplainResult): string {
  return `${JSON.stringify(result, null, 2)}\n`;
}
