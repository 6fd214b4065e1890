// RT3006: a fromSource executable that the same workloads are blocked from running can never act, so the rule
// that names it can never match. Blocking exec rules are indexed by path, base name and directory, so each
// source is checked against only the rules that could block it (O(path depth) lookups, not a scan), and the
// first that does is taken without listing the others.
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

const NONE: readonly Blocker[] = [];

/**
 * The first blocking exec rule that matches `path` and that `accept` takes: by exact path, then base name, then
 * containing directory from the deepest up. Nothing is allocated unless a directory rule exists.
 */
function findBlocker(
  path: string,
  byPath: Map<string, Blocker[]>,
  byName: Map<string, Blocker[]>,
  byDir: Map<string, Blocker[]>,
  accept: (b: Blocker) => boolean,
): Blocker | undefined {
  for (const b of byPath.get(path) ?? NONE) if (accept(b)) return b;
  const last = path.lastIndexOf('/');
  if (byName.size > 0) for (const b of byName.get(path.slice(last + 1)) ?? NONE) if (accept(b)) return b;
  if (byDir.size === 0) return undefined;
  for (let i = last; i >= 0; i = path.lastIndexOf('/', i - 1)) {
    const dir = path.slice(0, i + 1);
    const direct = dir.length === last + 1;
    for (const b of byDir.get(dir) ?? NONE) {
      if (b.rule.matcher.kind === 'directory' && (direct || b.rule.matcher.recursive) && accept(b)) return b;
    }
    if (i === 0) break;
  }
  return undefined;
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
      if (r.fromSource.length === 0) continue;
      const accept = (x: Blocker): boolean =>
        x.rule !== r && targetsOverlap(x.policy.target, p.policy.target);
      r.fromSource.forEach((s, i) => {
        if (s.kind !== 'path') return;
        const b = findBlocker(s.path, byPath, byName, byDir, accept);
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
