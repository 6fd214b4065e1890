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

/** Blocking exec rules, by exact path, base name and directory. */
interface Blockers {
  byPath: Map<string, Blocker[]>;
  byName: Map<string, Blocker[]>;
  byDir: Map<string, Blocker[]>;
}

/** True when `b` is another rule than `rule`, for workloads `policy` may select too. */
function blocks(b: Blocker, rule: Rule, policy: PolicyIR): boolean {
  return b.rule !== rule && targetsOverlap(b.policy.target, policy.target);
}

/**
 * The first blocking exec rule that matches `path` and blocks it for `rule` of `policy`: by exact path, then
 * base name, then containing directory from the deepest up. Nothing is allocated unless a directory rule
 * exists.
 */
function findBlocker(path: string, blockers: Blockers, rule: Rule, policy: PolicyIR): Blocker | undefined {
  const { byPath, byName, byDir } = blockers;
  for (const b of byPath.get(path) ?? NONE) if (blocks(b, rule, policy)) return b;
  const last = path.lastIndexOf('/');
  if (byName.size > 0)
    for (const b of byName.get(path.slice(last + 1)) ?? NONE) if (blocks(b, rule, policy)) return b;
  if (byDir.size === 0) return undefined;
  for (let i = last; i >= 0; i = path.lastIndexOf('/', i - 1)) {
    const dir = path.slice(0, i + 1);
    const direct = dir.length === last + 1;
    for (const b of byDir.get(dir) ?? NONE) {
      const m = b.rule.matcher;
      if (m.kind === 'directory' && (direct || m.recursive) && blocks(b, rule, policy)) return b;
    }
    if (i === 0) break;
  }
  return undefined;
}

export const checkUnreachableSources: CrossRule = (policies) => {
  const blockers: Blockers = { byPath: new Map(), byName: new Map(), byDir: new Map() };
  for (const p of policies) {
    for (const rule of p.policy.rules) {
      if (rule.operation !== 'Process' || rule.action !== 'Block' || rule.fromSource.length > 0) continue;
      const b = { policy: p.policy, rule };
      const m = rule.matcher;
      if (m.kind === 'path') push(blockers.byPath, m.path, b);
      else if (m.kind === 'execname') push(blockers.byName, m.name, b);
      else if (m.kind === 'directory') push(blockers.byDir, m.dir, b);
    }
  }
  if (blockers.byPath.size + blockers.byName.size + blockers.byDir.size === 0) return [];
  const out: CrossFinding[] = [];
  for (const p of policies) {
    for (const r of p.policy.rules) {
      for (let i = 0; i < r.fromSource.length; i++) {
        const s = r.fromSource[i];
        if (s?.kind !== 'path') continue;
        const b = findBlocker(s.path, blockers, r, p.policy);
        if (b === undefined) continue;
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
      }
    }
  }
  return out;
};
