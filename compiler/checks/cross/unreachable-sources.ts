// RT3006: a fromSource executable that the same workloads are blocked from running can never act, so the rule
// that names it can never match. Blocking exec rules are indexed by path, base name and directory, so each
// source is checked against only the rules that could block it (O(path depth) lookups, not a scan).
import { Code } from '../../diagnostics/codes/code.js';
import type { PolicyIR, Rule } from '../../ir/rule-set.js';
import { describeLocation } from './cross-rule.js';
import type { CrossFinding, CrossRule } from './cross-rule.js';
import { targetsOverlap } from './target-overlap.js';

interface Blocker {
  policy: PolicyIR;
  rule: Rule;
}

function push(map: Map<string, Blocker[]>, key: string, b: Blocker): void {
  const list = map.get(key);
  if (list === undefined) map.set(key, [b]);
  else list.push(b);
}

/** Blocking exec rules that match `path`, by exact path, base name, or containing directory. */
function candidates(
  path: string,
  byPath: Map<string, Blocker[]>,
  byName: Map<string, Blocker[]>,
  byDir: Map<string, Blocker[]>,
): Blocker[] {
  const out = [...(byPath.get(path) ?? []), ...(byName.get(path.slice(path.lastIndexOf('/') + 1)) ?? [])];
  for (let i = path.lastIndexOf('/'); i >= 0; i = path.lastIndexOf('/', i - 1)) {
    const dir = path.slice(0, i + 1);
    const direct = dir.length === path.lastIndexOf('/') + 1;
    for (const b of byDir.get(dir) ?? []) {
      if (b.rule.matcher.kind === 'directory' && (direct || b.rule.matcher.recursive)) out.push(b);
    }
    if (i === 0) break;
  }
  return out;
}

export const checkUnreachableSources: CrossRule = (policies) => {
  const byPath = new Map<string, Blocker[]>();
  const byName = new Map<string, Blocker[]>();
  const byDir = new Map<string, Blocker[]>();
  for (const p of policies) {
    for (const rule of p.policy.rules) {
      if (rule.operation !== 'Process' || rule.action !== 'Block' || rule.fromSource.length > 0) continue;
      const b = { policy: p.policy, rule };
      const m = rule.matcher;
      if (m.kind === 'path') push(byPath, m.path, b);
      else if (m.kind === 'execname') push(byName, m.name, b);
      else if (m.kind === 'directory') push(byDir, m.dir, b);
    }
  }
  if (byPath.size + byName.size + byDir.size === 0) return [];
  const out: CrossFinding[] = [];
  for (const p of policies) {
    for (const r of p.policy.rules) {
      r.fromSource.forEach((s, i) => {
        if (s.kind !== 'path') return;
        const b = candidates(s.path, byPath, byName, byDir).find(
          (x) => x.rule !== r && targetsOverlap(x.policy.target, p.policy.target),
        );
        if (b === undefined) return;
        out.push({
          file: p.file,
          document: p.document,
          finding: {
            code: Code.unreachableFromSource,
            severity: 'warning',
            pointer: `${r.location.pointer}/fromSource/${i}/path`,
            message: `fromSource ${JSON.stringify(s.path)} can never run: ${b.policy.name} blocks executing it for the same workloads (${describeLocation(b.rule.location)}), so this rule never matches`,
          },
        });
      });
    }
  }
  return out;
};
