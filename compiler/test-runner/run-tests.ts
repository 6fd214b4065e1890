// Runs test cases against the oracle (compiler/decide/) over a linted rule set: each case's decision, the
// deciding policy and the alert's action compared with what it expects; and which policies no case reaches
// (`--require-tests`). Pure.
import { explainRequest, type ExplainRule } from '../explain/explain.js';
import type { PolicyKind, RuleSet } from '../ir/rule-set.js';
import type { NamespacePostures } from '../front-end/checked-documents.js';
import type { TestCase } from './read-test-suites.js';

/** What the oracle said for a case. */
export interface ActualDecision {
  allowed: boolean;
  /** The deciding policy's name, `DefaultPosture` for the posture, `none` when nothing decided. */
  policy: string;
  action: 'Block' | 'Audit' | 'none';
  rule: ExplainRule | null;
}

/** The outcome of one case. */
export interface CaseResult {
  case: TestCase;
  actual: ActualDecision;
  /** What differs from the expectation; empty when the case passed. */
  failures: string[];
}

/** A policy no case is decided by or names. */
export interface UntestedPolicy {
  kind: PolicyKind;
  namespace: string;
  name: string;
  file: string;
  line: number;
}

/** The outcome of a run. */
export interface TestRun {
  results: CaseResult[];
  untested: UntestedPolicy[];
}

function describe(allowed: boolean, policy: string, action: string): string {
  return `${allowed ? 'allowed' : 'denied'} by ${policy} (alert ${action})`;
}

/** Decides every case and compares. */
export function runTests(
  ruleSet: RuleSet,
  namespacePostures: ReadonlyMap<string, NamespacePostures>,
  cases: readonly TestCase[],
): TestRun {
  const reached = new Set<string>();
  const key = (kind: string, namespace: string, name: string) => `${kind}\u0000${namespace}\u0000${name}`;
  const named = new Set<string>();
  const results = cases.map((c): CaseResult => {
    const w = c.request.workload;
    const declared = w.kind === 'container' ? namespacePostures.get(w.namespace)?.postures : undefined;
    const r = explainRequest(ruleSet, { ...c.request, postures: { ...declared, ...c.request.postures } });
    const rule = r.rule ?? r.leastPermissiveBy ?? null;
    if (rule !== null) reached.add(key(rule.kind, rule.namespace, rule.policy));
    if (c.expect.policy !== undefined) named.add(c.expect.policy);
    const actual: ActualDecision = {
      allowed: r.allowed,
      policy: r.rule?.policy ?? r.alert?.PolicyName ?? 'none',
      action: r.alert?.Action ?? 'none',
      rule: r.rule,
    };
    const e = c.expect;
    const failures: string[] = [];
    if (e.allowed !== actual.allowed)
      failures.push(
        `expected ${e.allowed ? 'allowed' : 'denied'}, got ${actual.allowed ? 'allowed' : 'denied'}`,
      );
    if (e.policy !== undefined && e.policy !== actual.policy)
      failures.push(`expected policy ${e.policy}, got ${actual.policy}`);
    if (e.action !== undefined && e.action !== actual.action)
      failures.push(`expected action ${e.action}, got ${actual.action}`);
    return { case: c, actual, failures };
  });
  const untested: UntestedPolicy[] = [];
  for (const p of ruleSet.policies) {
    if (reached.has(key(p.kind, p.namespace, p.name)) || named.has(p.name)) continue;
    untested.push({
      kind: p.kind,
      namespace: p.namespace,
      name: p.name,
      file: p.location.file,
      line: p.location.line,
    });
  }
  return { results, untested };
}

/** One line describing a case's actual decision. */
export function describeActual(a: ActualDecision): string {
  return describe(a.allowed, a.policy, a.action);
}
