// RT3006: a fromSource executable that the same workloads are blocked from running can never act, so the rule
// that names it can never match.
import type { PolicyIR, Rule } from '../../ir/rule-set.js';
import type { CrossFinding, CrossRule } from './cross-rule.js';
import { targetsOverlap } from './target-overlap.js';

function blocksExec(rule: Rule, path: string): boolean {
  if (rule.operation !== 'Process' || rule.action !== 'Block' || rule.fromSource.length > 0) return false;
  const m = rule.matcher;
  if (m.kind === 'path') return m.path === path;
  if (m.kind === 'execname') return path.slice(path.lastIndexOf('/') + 1) === m.name;
  if (m.kind === 'directory') {
    if (!path.startsWith(m.dir)) return false;
    return m.recursive || !path.slice(m.dir.length).includes('/');
  }
  return false;
}

export const checkUnreachableSources: CrossRule = (policies) => {
  const blockers: Array<{ policy: PolicyIR; rule: Rule }> = [];
  for (const p of policies) {
    for (const r of p.policy.rules) {
      if (r.operation === 'Process' && r.action === 'Block' && r.fromSource.length === 0)
        blockers.push({ policy: p.policy, rule: r });
    }
  }
  if (blockers.length === 0) return [];
  const out: CrossFinding[] = [];
  for (const p of policies) {
    for (const r of p.policy.rules) {
      r.fromSource.forEach((s, i) => {
        if (s.kind !== 'path') return;
        const b = blockers.find(
          (x) =>
            x.rule !== r && targetsOverlap(x.policy.target, p.policy.target) && blocksExec(x.rule, s.path),
        );
        if (b === undefined) return;
        out.push({
          file: p.file,
          document: p.document,
          finding: {
            code: 'RT3006',
            severity: 'warning',
            pointer: `${r.location.pointer}/fromSource/${i}/path`,
            message: `fromSource ${JSON.stringify(s.path)} can never run: ${b.policy.name} blocks executing it for the same workloads (${b.rule.location.file}:${b.rule.location.line}), so this rule never matches`,
          },
        });
      });
    }
  }
  return out;
};
