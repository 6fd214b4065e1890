// The conflict, unreachable-source and duplicate-policy checks give, finding for finding and in the same order,
// what their earlier implementations gave (kept below as the oracles): the faster ones build keys only for rules
// that share a resource, look blockers up without listing candidates, and find duplicates by name without a key
// per policy. Random rule sets of the decision oracle's generators, with many shared paths, names and addresses.
import assert from 'node:assert/strict';
import fc from 'fast-check';
import '../../support/property-seed.js';
import { checkConflictingRules } from '../../../compiler/checks/cross/conflicting-rules.js';
import { checkDuplicatePolicies } from '../../../compiler/checks/cross/duplicate-policies.js';
import {
  describeLocation,
  type CrossFinding,
  type LocatedPolicy,
} from '../../../compiler/checks/cross/cross-rule.js';
import { targetKey, targetsOverlap } from '../../../compiler/checks/cross/target-overlap.js';
import { checkUnreachableSources } from '../../../compiler/checks/cross/unreachable-sources.js';
import { Code } from '../../../compiler/diagnostics/codes/code.js';
import {
  Action,
  formatAddressMatcher,
  Operation,
  type PolicyIR,
  type Rule,
  type RuleSet,
} from '../../../compiler/ir/rule-set.js';
import { arbAddressRuleSet, arbRuleSet } from '../decide/arbitrary-rule-set.js';
import { dir, execname, makePodPolicy, path, type RuleSpec } from '../decide/rule-set-builder.js';

// ------------------------------------------------------------------ the earlier conflict check (RT3003/RT3004)

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

function referenceConflicts(policies: readonly LocatedPolicy[]): CrossFinding[] {
  const groups = new Map<string, Array<{ p: LocatedPolicy; r: Rule }>>();
  for (const p of policies) {
    const tk = p.policy.target.kind === 'host' ? 'host' : targetKey(p.policy.target);
    for (const r of p.policy.rules) {
      const key = `${tk}\u0000${matcherKey(r)}`;
      let g = groups.get(key);
      if (g === undefined) groups.set(key, (g = []));
      g.push({ p, r });
    }
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
}

// ------------------------------------------------------------------ the earlier unreachable-source check (RT3006)

interface Blocker {
  policy: PolicyIR;
  rule: Rule;
}

function referenceUnreachable(policies: readonly LocatedPolicy[]): CrossFinding[] {
  const byPath = new Map<string, Blocker[]>();
  const byName = new Map<string, Blocker[]>();
  const byDir = new Map<string, Blocker[]>();
  const push = (map: Map<string, Blocker[]>, key: string, b: Blocker): void => {
    map.set(key, [...(map.get(key) ?? []), b]);
  };
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
  const candidates = (path: string): Blocker[] => {
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
  };
  const out: CrossFinding[] = [];
  for (const p of policies) {
    for (const r of p.policy.rules) {
      r.fromSource.forEach((s, i) => {
        if (s.kind !== 'path') return;
        const b = candidates(s.path).find(
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
}

// ------------------------------------------------------------------ the earlier duplicate-policy check (RT3012)

function referenceDuplicates(policies: readonly LocatedPolicy[]): CrossFinding[] {
  const seen = new Map<string, LocatedPolicy>();
  const out: CrossFinding[] = [];
  for (const p of policies) {
    const key = `${p.policy.kind}/${p.policy.namespace}/${p.policy.name}`;
    const first = seen.get(key);
    if (first === undefined) {
      seen.set(key, p);
      continue;
    }
    out.push({
      file: p.file,
      document: p.document,
      finding: {
        code: Code.duplicatePolicy,
        severity: 'error',
        pointer: '/metadata/name',
        message: `metadata.name: ${p.policy.kind} ${p.policy.namespace === '' ? '' : `${p.policy.namespace}/`}${p.policy.name} is already defined in ${first.file}:${first.policy.location.line}; one would replace the other`,
        related: [
          {
            message: 'first defined here',
            pointer: '/metadata/name',
            file: first.file,
            document: first.document,
          },
        ],
      },
    });
  }
  return out;
}

// ------------------------------------------------------------------ the property

/** The policies of two rule sets (more rules in common), placed in a few files. */
function locate(sets: readonly RuleSet[]): LocatedPolicy[] {
  return sets
    .flatMap((s) => s.policies)
    .map((policy, i) => ({ policy, file: `f${i % 3}.yaml`, document: i }));
}

const context = { namespacePostures: new Map() };

/** Executables, and the exec rules that may block them (by path, name, and direct or recursive directory). */
const EXECUTABLES = ['/bin/sh', '/bin/a/sh', '/usr/bin/sh', '/a/b/c', '/a/c'];
const arbExecRule: fc.Arbitrary<RuleSpec> = fc.record({
  operation: fc.constant(Operation.Process),
  matcher: fc.oneof(
    fc.constantFrom(...EXECUTABLES).map(path),
    fc.constantFrom('sh', 'c').map(execname),
    fc.tuple(fc.constantFrom('/', '/bin/', '/a/', '/a/b/', '/usr/'), fc.boolean()).map(([d, r]) => dir(d, r)),
  ),
  action: fc.constantFrom(Action.Block, Action.Audit),
  fromSource: fc.array(
    fc.constantFrom(...EXECUTABLES).map((p) => ({ kind: 'path' as const, path: p })),
    { maxLength: 2 },
  ),
});
/** One to four pod policies of exec rules, in two namespaces, selecting overlapping or disjoint pods. */
const arbExecPolicies: fc.Arbitrary<RuleSet> = fc
  .array(
    fc.record({
      rules: fc.array(arbExecRule, { minLength: 1, maxLength: 4 }),
      namespace: fc.constantFrom('a', 'b'),
      app: fc.constantFrom('web', 'db'),
    }),
    { minLength: 1, maxLength: 4 },
  )
  .map((ps) => ({
    policies: ps.map((p, i) =>
      makePodPolicy(`p${i}`, p.rules, { namespace: p.namespace, labels: { app: p.app } }),
    ),
  }));

describe('cross checks against their earlier implementations', function () {
  // Thousands of generated cases: bounded by count, not by the time a loaded machine takes.
  this.timeout(120_000);

  for (const [name, arb] of [
    ['rule sets', arbRuleSet],
    ['rule sets with address rules', arbAddressRuleSet],
    ['exec rules and sources', arbExecPolicies],
  ] as const) {
    it(`RT3003/RT3004, RT3006 and RT3012 findings are the same, in the same order (${name})`, () => {
      let conflicts = 0;
      let unreachable = 0;
      let duplicates = 0;
      fc.assert(
        fc.property(fc.array(arb, { minLength: 1, maxLength: 3 }), (sets) => {
          const located = locate(sets);
          const c = checkConflictingRules(located, context);
          assert.equal(JSON.stringify(c), JSON.stringify(referenceConflicts(located)));
          const u = checkUnreachableSources(located, context);
          assert.equal(JSON.stringify(u), JSON.stringify(referenceUnreachable(located)));
          const d = checkDuplicatePolicies(located, context);
          assert.equal(JSON.stringify(d), JSON.stringify(referenceDuplicates(located)));
          conflicts += c.length;
          unreachable += u.length;
          duplicates += d.length;
        }),
        { numRuns: 1500 },
      );
      // The generated sets do produce both kinds of findings.
      assert.ok(
        conflicts > 0 && unreachable > 0 && duplicates > 0,
        `${conflicts} conflicts, ${unreachable} unreachable, ${duplicates} duplicates`,
      );
    });
  }
});
