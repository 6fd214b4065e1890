// RT3003 duplicate rules and RT3004 conflicting actions: the same matcher (operation, resource, sources and
// exemptions) written twice for workloads that may overlap. Both places of a conflict are reported.
import { Code } from '../../diagnostics/codes/code.js';
import { formatAddressMatcher, type Rule } from '../../ir/rule-set.js';
import { describeLocation } from './cross-rule.js';
import type { CrossFinding, CrossRule, LocatedPolicy } from './cross-rule.js';
import { targetKey, targetsOverlap } from './target-overlap.js';

/** The value a matcher compares on, as one string. */
function matcherValue(r: Rule): string {
  const m = r.matcher;
  switch (m.kind) {
    case 'path':
      return m.path;
    case 'execname':
      return m.name;
    case 'directory':
      return `${m.dir}\u0001${m.recursive ? 'r' : ''}`;
    case 'pattern':
      return m.pattern;
    case 'protocol':
      return m.protocol;
    case 'capability':
      return m.capability;
    case 'address':
      return formatAddressMatcher(m);
  }
}

/** Rules with equal keys match exactly the same operations. */
function matcherKey(r: Rule): string {
  const sources =
    r.fromSource.length === 0
      ? ''
      : r.fromSource
          .map((s) => (s.kind === 'path' ? `p${s.path}` : `d${s.dir}${s.recursive ? '*' : ''}`))
          .sort()
          .join('\u0002');
  const flags = `${r.readOnly ? 'R' : ''}${r.ownerOnly ? 'O' : ''}${r.pts ? 'T' : ''}`;
  const args = r.allowedArgs.length === 0 ? '' : JSON.stringify(r.allowedArgs);
  return `${r.operation}\u0000${r.matcher.kind}\u0000${matcherValue(r)}\u0000${sources}\u0000${flags}\u0000${args}`;
}

function describeMatcher(r: Rule): string {
  const m = r.matcher;
  const what =
    m.kind === 'path'
      ? m.path
      : m.kind === 'execname'
        ? m.name
        : m.kind === 'directory'
          ? m.dir
          : m.kind === 'pattern'
            ? m.pattern
            : m.kind === 'protocol'
              ? m.protocol
              : m.kind === 'address'
                ? formatAddressMatcher(m)
                : m.capability;
  return `${r.operation} ${m.kind} ${JSON.stringify(what)}`;
}

function where(p: LocatedPolicy, r: Rule): string {
  return `${p.policy.kind} ${p.policy.namespace === '' ? '' : `${p.policy.namespace}/`}${p.policy.name} (${describeLocation(r.location)})`;
}

interface Entry {
  p: LocatedPolicy;
  r: Rule;
}

/** The resource a rule names, as a string it already holds: rules that differ here never conflict. */
function resourceOf(r: Rule): string {
  const m = r.matcher;
  switch (m.kind) {
    case 'path':
      return m.path;
    case 'execname':
      return m.name;
    case 'directory':
      return m.dir;
    case 'pattern':
      return m.pattern;
    case 'protocol':
      return m.protocol;
    case 'capability':
      return m.capability;
    case 'address':
      return m.cidr;
  }
}

export const checkConflictingRules: CrossRule = (policies) => {
  // Most rules name a resource no other rule names: every rule is listed by resource in one pass (by its
  // number in input order: nothing is built per rule), and the full key is built only for rules that share
  // their resource with another.
  const located: LocatedPolicy[] = [];
  const rules: Rule[] = [];
  const byResource = new Map<string, number | number[]>();
  for (const p of policies) {
    for (const r of p.policy.rules) {
      const n = rules.length;
      located.push(p);
      rules.push(r);
      const resource = resourceOf(r);
      const seen = byResource.get(resource);
      if (seen === undefined) byResource.set(resource, n);
      else if (typeof seen === 'number') byResource.set(resource, [seen, n]);
      else seen.push(n);
    }
  }
  const shared: number[] = [];
  for (const list of byResource.values()) if (typeof list !== 'number') for (const n of list) shared.push(n);
  // In input order, as the groups were formed when every rule was visited in turn.
  shared.sort((a, b) => a - b);
  // Group by matcher and by coarse target (namespace, or node labels): overlap is only possible inside a group.
  const groups = new Map<string, Entry[]>();
  const targetKeys = new Map<LocatedPolicy, string>();
  for (const n of shared) {
    const p = located[n];
    const r = rules[n];
    if (p === undefined || r === undefined) continue;
    let tk = targetKeys.get(p);
    if (tk === undefined) {
      tk = p.policy.target.kind === 'host' ? 'host' : targetKey(p.policy.target);
      targetKeys.set(p, tk);
    }
    const key = `${tk}\u0000${matcherKey(r)}`;
    let g = groups.get(key);
    if (g === undefined) groups.set(key, (g = []));
    g.push({ p, r });
  }
  const out: CrossFinding[] = [];
  for (const g of groups.values()) {
    for (let i = 1; i < g.length; i++) {
      const b = g[i];
      if (b === undefined) continue;
      for (let j = 0; j < i; j++) {
        const a = g[j];
        if (a === undefined || !targetsOverlap(a.p.policy.target, b.p.policy.target)) continue;
        if (a.r.action === b.r.action) {
          out.push({
            file: b.p.file,
            document: b.p.document,
            finding: {
              code: Code.duplicateRule,
              severity: 'warning',
              pointer: b.r.location.pointer,
              message: `${describeMatcher(b.r)} with action ${b.r.action} is already written in ${where(a.p, a.r)} for overlapping workloads`,
              related: [
                {
                  message: 'first written here',
                  pointer: a.r.location.pointer,
                  file: a.p.file,
                  document: a.p.document,
                },
              ],
            },
          });
          break;
        }
        for (const [x, y] of [
          [a, b],
          [b, a],
        ] as const) {
          out.push({
            file: x.p.file,
            document: x.p.document,
            finding: {
              code: Code.conflictingActions,
              severity: 'error',
              pointer: x.r.location.pointer,
              message: `${describeMatcher(x.r)} is ${x.r.action} here but ${y.r.action} in ${where(y.p, y.r)}, and both policies can select the same workloads; the stricter action would win (Block > Audit > Allow): make them agree`,
              related: [
                {
                  message: `the ${y.r.action} rule`,
                  pointer: y.r.location.pointer,
                  file: y.p.file,
                  document: y.p.document,
                },
              ],
            },
          });
        }
      }
    }
  }
  return out;
};
