// Lint and admission findings from the enforcement table, for one lowered policy: RT3016 for what no target
// enforces, RT3018 for what some targets do not enforce (naming them and what the rule gets there). With
// `requireEnforced` (`rtctl lint --require-enforced`), a rule that a required target does not enforce is an
// error, and so is a policy of a kind a required target does not carry.
import { Code } from '../diagnostics/codes/code.js';
import { Severity } from '../diagnostics/diagnostic.js';
import { pointerToPath } from '../diagnostics/diagnostic.js';
import type { Finding } from '../diagnostics/finding.js';
import type { PolicyIR } from '../ir/rule-set.js';
import {
  ENFORCEMENT_TARGETS,
  EnforcementLevel,
  findEnforcementRow,
  getEnforcementCell,
  getTargetInfo,
  isKindCarried,
  type EnforcementTarget,
} from './enforcement-table.js';
import { forEachRuleEntry } from './rule-forms.js';
import { assessRule, type FormGap } from './summarize-enforcement.js';

/** Code of a form that no target carrying the policy enforces or audits. */
export const NOT_ENFORCED_CODE = Code.notEnforced;
/** Code of a rule that some targets carrying the policy do not enforce. */
export const NOT_ENFORCED_ON_TARGET_CODE = Code.notEnforcedOnTarget;

const LEVEL_TEXT: Record<EnforcementLevel, string> = {
  enforced: 'enforced',
  'audited-only': 'audited only',
  'not-enforced': 'not enforced',
};

/** Longest message: with each gap's reason, else naming the gaps only, else naming the targets only. */
const MAX_DETAILED_MESSAGE = 240;

/** Options of the enforcement findings. */
export interface EnforcementFindingOptions {
  /** Targets on which every rule must be enforced: a gap there is an error. */
  requireEnforced?: readonly EnforcementTarget[];
}

function describeTargets(
  byTarget: ReadonlyArray<{ target: EnforcementTarget; gaps: FormGap[] }>,
  detailed: boolean,
): string {
  return byTarget
    .map(({ target, gaps }) => {
      const first = gaps[0];
      if (detailed && gaps.length === 1 && first !== undefined && first.reason !== '')
        return `${target} (${first.title}: ${first.reason})`;
      return `${target} (${gaps.map((g) => g.title).join(', ')})`;
    })
    .join(', ');
}

/** A finding of one rule without its field path: the message is `${path}: ${tail}`, the first tail that fits. */
interface FindingTemplate {
  code: string;
  severity: Severity;
  /** Message tails in order of preference; the first whose message fits MAX_DETAILED_MESSAGE, else the first. */
  tails: string[];
}

/**
 * The findings of a rule depend on its forms, the policy's kind and the required targets only (the field path
 * comes in at the end), and a policy set has few distinct combinations: each is assessed once. The cache is
 * bounded so that input with many odd combinations costs time, not memory.
 */
const templates = new Map<string, FindingTemplate[]>();
const MAX_TEMPLATES = 4096;

function ruleTemplates(
  forms: readonly string[],
  kind: PolicyIR['kind'],
  targets: readonly EnforcementTarget[],
  required: ReadonlySet<EnforcementTarget>,
  requiredKey: string,
): FindingTemplate[] {
  const key = `${kind}\u0000${requiredKey}\u0000${forms.join('\u0000')}`;
  let cached = templates.get(key);
  if (cached === undefined) {
    cached = assessTemplates(forms, kind, targets, required);
    if (templates.size >= MAX_TEMPLATES) templates.clear();
    templates.set(key, cached);
  }
  return cached;
}

function assessTemplates(
  forms: readonly string[],
  kind: PolicyIR['kind'],
  targets: readonly EnforcementTarget[],
  required: ReadonlySet<EnforcementTarget>,
): FindingTemplate[] {
  const out: FindingTemplate[] = [];
  const assessed = targets.map((target) => ({ target, ...assessRule(forms, target, kind) }));
  // Forms no carrying target enforces or audits: RT3016, one finding for them all.
  const nowhere = forms.filter((form) =>
    assessed.every((a) => a.gaps.some((g) => g.form === form && g.level === EnforcementLevel.NotEnforced)),
  );
  if (nowhere.length > 0) {
    const rows = nowhere.map((f) => findEnforcementRow(f));
    const titles = rows.map((r, i) => r?.title ?? nowhere[i] ?? '').join(', ');
    const without = rows.map((r) => r?.without).find((w) => w !== undefined);
    const error = required.size > 0;
    out.push({
      code: NOT_ENFORCED_CODE,
      severity: error ? Severity.Error : Severity.Warning,
      tails: [
        `no target enforces ${titles} (${targets.join(', ')})${error ? ', and --require-enforced requires it' : ''}; ${without ?? 'kept in the manifests only'}`,
      ],
    });
  }
  // The other gaps, by target.
  const partial = assessed
    .map((a) => ({ target: a.target, gaps: a.gaps.filter((g) => !nowhere.includes(g.form)) }))
    .filter((a) => a.gaps.length > 0);
  // A rule whose kind no target enforces has its RT3016; its options do not matter anywhere.
  if (partial.length === 0 || nowhere.includes(forms[0] ?? '')) return out;
  const enforcedOn = assessed.filter((a) => a.level === EnforcementLevel.Enforced).map((a) => a.target);
  const failing = partial.filter((p) => required.has(p.target)).map((p) => p.target);
  const render = (detailed: boolean): string => {
    const parts: string[] = [];
    for (const level of [EnforcementLevel.NotEnforced, EnforcementLevel.AuditedOnly]) {
      const at = partial
        .map((p) => ({ target: p.target, gaps: p.gaps.filter((g) => g.level === level) }))
        .filter((p) => p.gaps.length > 0);
      if (at.length > 0) parts.push(`${LEVEL_TEXT[level]} on ${describeTargets(at, detailed)}`);
    }
    if (enforcedOn.length > 0) parts.push(`enforced on ${enforcedOn.join(', ')}`);
    if (failing.length > 0) parts.push(`--require-enforced requires ${failing.join(', ')}`);
    return parts.join('; ');
  };
  // Reasons when they fit: the API server may cut admission warnings longer than 256 characters.
  out.push({
    code: NOT_ENFORCED_ON_TARGET_CODE,
    severity: failing.length > 0 ? Severity.Error : Severity.Warning,
    tails: [
      render(true),
      render(false),
      `not fully enforced on ${partial.map((p) => p.target).join(', ')}; see docs/enforcement.md`,
    ],
  });
  return out;
}

/** The message of a template at a field path. */
function messageAt(path: string, tails: readonly string[]): string {
  for (const tail of tails) {
    if (path.length + 2 + tail.length <= MAX_DETAILED_MESSAGE) return `${path}: ${tail}`;
  }
  return `${path}: ${tails[0] ?? ''}`;
}

/** The targets that carry policies of each kind, in table order (the table is constant). */
const carryingTargets = new Map<PolicyIR['kind'], readonly EnforcementTarget[]>();
function targetsCarrying(kind: PolicyIR['kind']): readonly EnforcementTarget[] {
  let targets = carryingTargets.get(kind);
  if (targets === undefined) {
    targets = ENFORCEMENT_TARGETS.map((t) => t.target).filter((t) => isKindCarried(t, kind));
    carryingTargets.set(kind, targets);
  }
  return targets;
}

/** Whether every target carrying a kind enforces a form, by kind and form (few of each: computed once). */
const enforcedEverywhere = new Map<PolicyIR['kind'], Map<string, boolean>>();

/** True when every target in `targets` (those carrying `kind`) enforces `form`. */
function enforcedOnAll(form: string, kind: PolicyIR['kind'], targets: readonly EnforcementTarget[]): boolean {
  let byForm = enforcedEverywhere.get(kind);
  if (byForm === undefined) enforcedEverywhere.set(kind, (byForm = new Map<string, boolean>()));
  let enforced = byForm.get(form);
  if (enforced === undefined) {
    enforced = targets.every(
      (target) => getEnforcementCell(form, target).level === EnforcementLevel.Enforced,
    );
    byForm.set(form, enforced);
  }
  return enforced;
}

const NO_TARGETS: ReadonlySet<EnforcementTarget> = new Set();

/** The findings of one lowered policy. */
export function findEnforcementGaps(policy: PolicyIR, options: EnforcementFindingOptions = {}): Finding[] {
  const required =
    options.requireEnforced === undefined || options.requireEnforced.length === 0
      ? NO_TARGETS
      : new Set(options.requireEnforced);
  const requiredKey = [...required].join(',');
  const targets = targetsCarrying(policy.kind);
  const findings: Finding[] = [];
  for (const target of required) {
    if (isKindCarried(target, policy.kind)) continue;
    findings.push({
      code: NOT_ENFORCED_ON_TARGET_CODE,
      severity: Severity.Error,
      pointer: '/kind',
      message: `kind: ${policy.kind} is not enforced on ${target}, which --require-enforced requires (${getTargetInfo(target).kindsNote ?? 'not carried'})`,
    });
  }
  forEachRuleEntry(policy, (location, forms) => {
    // Most rules: every carrying target enforces every form, so there is nothing to say (and no key to build).
    if (targets.length > 0 && forms.every((form) => enforcedOnAll(form, policy.kind, targets))) return;
    const found = ruleTemplates(forms, policy.kind, targets, required, requiredKey);
    // The field path is only needed for a finding: most rules have none.
    if (found.length === 0) return;
    const { pointer } = location;
    const path = pointerToPath(pointer);
    for (const t of found) {
      findings.push({ code: t.code, severity: t.severity, pointer, message: messageAt(path, t.tails) });
    }
  });
  return findings;
}
