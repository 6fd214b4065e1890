// Writes one AppArmor profile for a workload set: posture lines per operation class, deny/audit/allow
// rules for exec, files, network and capabilities, and a child profile per fromSource executable.
// All user text goes through escape-apparmor.ts.
import { Code } from '../../diagnostics/codes/code.js';
import { createHash } from 'node:crypto';
import type { Diagnostic } from '../../diagnostics/diagnostic.js';
import {
  Action,
  Operation,
  type PolicyIR,
  type Rule,
  type SourceLocation,
  type SourceMatcher,
} from '../../ir/rule-set.js';
import {
  describeBackendGaps,
  dropsSourceDirectories,
  isLeftOut,
  listBackendGaps,
  type BackendGap,
} from '../../enforcement/backend-gaps.js';
import { EnforcementTarget } from '../../enforcement/enforcement-table.js';
import { listRuleEntries, listRuleForms } from '../../enforcement/rule-forms.js';
import type { PolicyDocument } from '../../model/policy-document.js';
import { isMatcherForOperation } from '../../decide/match-rule.js';
import { getBaseName, isInDirectory, matchesGlob, normalizeDirectory } from '../../decide/path-match.js';
import { compareRulePrecedence, type PolicyRule } from '../../decide/precedence.js';
import { createBackendDiagnostic, findDocumentIndex } from './backend-diagnostic.js';
import {
  escapeApparmorComment,
  isSafeApparmorName,
  quoteApparmorGlob,
  quoteApparmorPath,
} from './escape-apparmor.js';
import type { WorkloadSet } from './group-workload-sets.js';

/** Mediated classes that are not policy subjects; allowed so that profiles do not break workloads. */
const BASELINE = ['signal,', 'unix,', 'ptrace,', 'dbus,', 'mount,', 'umount,'];

const INDENT = '  ';

/** The blanket rule that allows a whole class: what an `audit` posture include contains. */
export const POSTURE_AUDIT_RULES = {
  file: '"/{,**}" rwlkm,',
  process: '"/{,**}" ix,',
  network: 'network,',
  capabilities: 'capability,',
} as const;

/** What emitting one profile produced. */
export interface ApparmorProfile {
  name: string;
  text: string;
  diagnostics: Diagnostic[];
}

/** The quoted AppArmor expression of a directory (and everything directly or recursively in it). */
function quoteDirectory(dir: string, recursive: boolean): string {
  const literal = quoteApparmorPath(normalizeDirectory(dir));
  return `${literal.slice(0, -1)}${recursive ? '**' : '*'}"`;
}

function quoteSource(source: SourceMatcher): string {
  return source.kind === 'path'
    ? quoteApparmorPath(source.path)
    : quoteDirectory(source.dir, source.recursive);
}

function describeSource(source: SourceMatcher): string {
  return source.kind === 'path'
    ? source.path
    : `${normalizeDirectory(source.dir)}${source.recursive ? '**' : '*'}`;
}

/** The path expressions a path-class matcher covers. */
function quoteResources(rule: Rule): string[] {
  const m = rule.matcher;
  switch (m.kind) {
    case 'path':
      return [quoteApparmorPath(m.path)];
    case 'directory':
      return [quoteDirectory(m.dir, m.recursive)];
    case 'pattern':
      return [quoteApparmorGlob(m.pattern)];
    case 'execname':
      return [`"/{,**/}${quoteApparmorPath(m.name).slice(1)}`];
    default:
      return [];
  }
}

/** The AppArmor lines of one rule (without indentation). */
function renderRule(rule: Rule): string[] {
  const lines: string[] = [];
  const prefix = rule.action === Action.Block ? 'deny ' : rule.action === Action.Audit ? 'audit ' : '';
  if (rule.operation === Operation.Network && rule.matcher.kind === 'protocol') {
    const p = rule.matcher.protocol.toLowerCase();
    lines.push(p === 'all' ? `${prefix}network,` : `${prefix}network ${p},`);
    return lines;
  }
  if (rule.operation === Operation.Capabilities && rule.matcher.kind === 'capability') {
    lines.push(`${prefix}capability ${rule.matcher.capability.toLowerCase().replace(/^cap_/, '')},`);
    return lines;
  }
  for (const e of quoteResources(rule)) {
    if (rule.operation === Operation.Process) {
      const perms = rule.action === Action.Block ? 'x' : 'ix';
      const owner = rule.ownerOnly ? (rule.action === Action.Allow ? 'owner ' : 'other ') : '';
      lines.push(`${prefix}${owner}${e} ${perms},`);
      continue;
    }
    if (rule.action === Action.Allow) {
      lines.push(`${rule.ownerOnly ? 'owner ' : ''}${e} ${rule.readOnly ? 'r' : 'rw'},`);
    } else if (rule.readOnly && rule.ownerOnly) {
      lines.push(`${prefix}${e} w,`, `${prefix}other ${e} r,`);
    } else {
      lines.push(`${prefix}${rule.ownerOnly ? 'other ' : ''}${e} ${rule.readOnly ? 'w' : 'rw'},`);
    }
  }
  return lines;
}

/** True when Block rule `b` covers resources that the more specific rule `a` decides. */
/** File accesses a rule's AppArmor lines cover (`r`, `w`). */
function getFileAccesses(rule: Rule): string[] {
  if (rule.action === Action.Allow) return rule.readOnly ? ['r'] : ['r', 'w'];
  return rule.readOnly ? ['w'] : ['r', 'w'];
}

function isShadowedByDeny(a: Rule, b: Rule): boolean {
  if (a.operation !== b.operation) return false;
  if (a.operation === Operation.File) {
    const bAccess = getFileAccesses(b);
    if (!getFileAccesses(a).some((x) => bAccess.includes(x))) return false;
  }
  // `deny other …` and `owner …` never meet.
  if (b.ownerOnly && a.ownerOnly && a.action === Action.Allow) return false;
  const am = a.matcher;
  const bm = b.matcher;
  if (am.kind === 'path') {
    if (bm.kind === 'directory') return isInDirectory(am.path, bm.dir, bm.recursive);
    if (bm.kind === 'pattern') return matchesGlob(bm.pattern, am.path);
    if (bm.kind === 'execname') return getBaseName(am.path) === bm.name;
    return false;
  }
  if (am.kind === 'directory' && bm.kind === 'directory') {
    const ad = normalizeDirectory(am.dir);
    return bm.recursive && ad !== normalizeDirectory(bm.dir) && isInDirectory(ad, bm.dir, true);
  }
  if (am.kind === 'protocol' && bm.kind === 'protocol') return bm.protocol === 'all' && am.protocol !== 'all';
  return false;
}

function sourceKey(s: SourceMatcher): string {
  return describeSource(s);
}

function validateSnippet(snippet: string): boolean {
  for (const raw of snippet.split('\n')) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) continue;
    if (!/^[A-Za-z0-9 _/.*?,:=@()+-]+,$/.test(line)) return false;
    if (/\b(include|profile|hat|abi)\b/.test(line)) return false;
  }
  return true;
}

/** Emits the profile of one workload set. */
export function emitApparmorProfile(set: WorkloadSet, documents: readonly PolicyDocument[]): ApparmorProfile {
  const diagnostics: Diagnostic[] = [];
  const warned = new Set<string>();
  const warn = (
    code: string,
    message: string,
    policy: PolicyIR,
    rule?: { location: SourceLocation },
  ): void => {
    const loc = rule?.location ?? policy.location;
    const key = `${code}\u0000${loc.file}\u0000${loc.line}\u0000${loc.column}\u0000${message}`;
    if (warned.has(key)) return;
    warned.add(key);
    diagnostics.push(createBackendDiagnostic(code, message, loc, findDocumentIndex(documents, policy)));
  };

  const all: PolicyRule[] = [];
  // What AppArmor cannot express comes from the enforcement table (compiler/enforcement): the warnings and
  // what is left out or written without a condition follow its cells.
  const gapsOf = (
    policy: PolicyIR,
    forms: readonly string[],
    rule: { location: SourceLocation },
  ): BackendGap[] => {
    const gaps = listBackendGaps(forms, EnforcementTarget.Apparmor);
    for (const d of describeBackendGaps(gaps, EnforcementTarget.Apparmor, `profile ${set.name}`, policy.kind))
      warn(d.code, d.message, policy, rule);
    return gaps;
  };
  for (const policy of set.policies) {
    for (const rule of policy.rules) {
      if (!isMatcherForOperation(rule.matcher, rule.operation)) continue;
      const gaps = gapsOf(policy, listRuleForms(rule), rule);
      if (isLeftOut(gaps)) continue;
      if (dropsSourceDirectories(gaps)) {
        const pathSources = rule.fromSource.filter((x) => x.kind === 'path');
        if (pathSources.length === 0) continue;
        all.push({ policy, rule: { ...rule, fromSource: pathSources } });
        continue;
      }
      all.push({ policy, rule });
    }
    for (const entry of listRuleEntries({ ...policy, rules: [] }))
      if (!isLeftOut(gapsOf(policy, entry.forms, entry)))
        throw new Error(`AppArmor cannot write ${entry.forms.join(', ')}; the enforcement table says it can`);
  }
  all.sort(compareRulePrecedence);
  const unscoped = all.filter((r) => r.rule.fromSource.length === 0);
  const sources = new Map<string, SourceMatcher>();
  for (const r of all) for (const s of r.rule.fromSource) sources.set(sourceKey(s), s);
  const sourceList = [...sources.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  const isSourceExec = (rule: Rule): boolean =>
    rule.operation === Operation.Process &&
    rule.action !== Action.Block &&
    rule.matcher.kind === 'path' &&
    sources.has(rule.matcher.path);
  const auditedSources = new Set(
    unscoped
      .filter((r) => isSourceExec(r.rule) && r.rule.action === Action.Audit)
      .map((r) => (r.rule.matcher.kind === 'path' ? r.rule.matcher.path : '')),
  );

  // Deny-wins warnings: a rule that takes precedence over a Block rule that covers it.
  const checkShadowing = (rules: readonly PolicyRule[]): void => {
    for (const a of rules) {
      if (a.rule.action === Action.Block) continue;
      for (const b of rules) {
        if (b.rule.action !== Action.Block || compareRulePrecedence(a, b) > 0) continue;
        if (isShadowedByDeny(a.rule, b.rule)) {
          warn(
            Code.apparmorDenyWins,
            `${a.rule.action} rule is more specific than the Block rule of policy ${b.policy.name} at ${b.rule.location.file}:${b.rule.location.line}; AppArmor profile ${set.name} denies it anyway`,
            a.policy,
            a.rule,
          );
        }
      }
    }
  };
  checkShadowing(unscoped);

  const posture = (rules: readonly PolicyRule[], indent: string): string[] => {
    const lp = (op: Operation): boolean =>
      rules.some((r) => r.rule.action === Action.Allow && r.rule.operation === op);
    const ns = isSafeApparmorName(set.namespace)
      ? set.namespace
      : createHash('sha256').update(set.namespace).digest('hex').slice(0, 16);
    const include = (cls: string): string => `${indent}include if exists <rtctl/posture/${ns}/${cls}>`;
    return [
      `${indent}## postures: a class with Allow rules is least-permissive; the enforcer writes the include for the namespace posture`,
      lp(Operation.File) ? include('file') : `${indent}${POSTURE_AUDIT_RULES.file}`,
      lp(Operation.Process) ? include('process') : `${indent}${POSTURE_AUDIT_RULES.process}`,
      lp(Operation.Network) ? include('network') : `${indent}${POSTURE_AUDIT_RULES.network}`,
      lp(Operation.Capabilities) ? include('capabilities') : `${indent}${POSTURE_AUDIT_RULES.capabilities}`,
      ...BASELINE.map((b) => `${indent}${b}`),
    ];
  };
  const body = (rules: readonly PolicyRule[], indent: string): string[] => {
    const out: string[] = [];
    const seen = new Set<string>();
    let lastPolicy = '';
    for (const r of rules) {
      const lines = renderRule(r.rule).filter((l) => !seen.has(l));
      if (lines.length === 0) continue;
      const where = `${indent}# ${escapeApparmorComment(`${r.policy.name} ${r.rule.location.file}:${r.rule.location.line}`)}`;
      if (where !== lastPolicy) out.push(where);
      lastPolicy = where;
      for (const l of lines) {
        seen.add(l);
        out.push(`${indent}${l}`);
      }
    }
    return out;
  };

  const lines: string[] = [
    '# rtctl AppArmor profile (generated by `rtctl compile --target apparmor`; do not edit)',
    `# namespace: ${escapeApparmorComment(set.namespace)}`,
    `# selector: ${escapeApparmorComment(JSON.stringify({ matchLabels: set.matchLabels, matchExpressions: set.matchExpressions }))}`,
    `# policies: ${escapeApparmorComment(set.policies.map((p) => p.name).join(', '))}`,
    'abi <abi/3.0>,',
    'include <tunables/global>',
    '',
    `profile ${set.name} flags=(attach_disconnected,mediate_deleted) {`,
    `${INDENT}include <abstractions/base>`,
    '',
    ...posture(unscoped, INDENT),
    '',
    // An exact exec rule on a source path would conflict with its `cx` transition: the transition
    // grants the exec (audited when an Audit rule asked for it), so such ix rules are left out here.
    ...body(
      unscoped.filter((r) => !isSourceExec(r.rule)),
      INDENT,
    ),
  ];
  for (const policy of set.policies) {
    if (policy.apparmor.trim() === '') continue;
    if (!validateSnippet(policy.apparmor)) {
      warn(
        Code.apparmorSnippetRejected,
        `spec.apparmor of policy ${policy.name} holds more than rule lines; it is left out of profile ${set.name}`,
        policy,
      );
      continue;
    }
    lines.push('', `${INDENT}# spec.apparmor of ${escapeApparmorComment(policy.name)}`);
    for (const raw of policy.apparmor.split('\n'))
      if (raw.trim() !== '') lines.push(`${INDENT}${raw.trim()}`);
  }
  const children: string[] = [];
  sourceList.forEach(([key, source]) => {
    const child = `rtctl-src-${createHash('sha256').update(key).digest('hex').slice(0, 12)}`;
    const scoped = all.filter((r) => r.rule.fromSource.some((s) => sourceKey(s) === key));
    const rules = [...scoped, ...unscoped].sort(compareRulePrecedence);
    checkShadowing(rules);
    lines.push(
      `${INDENT}# fromSource ${escapeApparmorComment(describeSource(source))}`,
      `${INDENT}${auditedSources.has(key) ? 'audit ' : ''}${quoteSource(source)} cx -> ${child},`,
    );
    children.push(
      '',
      `${INDENT}profile ${child} flags=(attach_disconnected,mediate_deleted) {`,
      `${INDENT}${INDENT}include <abstractions/base>`,
      ...posture(rules, INDENT + INDENT),
      ...body(rules, INDENT + INDENT),
      `${INDENT}}`,
    );
  });
  lines.push(...children, '}', '');
  return { name: set.name, text: lines.join('\n'), diagnostics };
}
