// Properties of the status aggregation (fast-check, fixed seed): for any reports, the counts are consistent,
// Ready True never hides a node that does not enforce or does not report, the message stays bounded, and the
// result does not depend on the order of nodes or reports.
import assert from 'node:assert/strict';
import fc from 'fast-check';
import type { NodePolicyReport, NodeStatusReport } from '../../compiler/model/node-status.js';
import { aggregatePolicyStatus, type PolicyTarget } from '../../controller/aggregate-policy-status.js';
import { MAX_MESSAGE_LENGTH, MAX_RULES_LISTED } from '../../controller/policy-status.js';
import '../support/property-seed.js';

const NOW = Date.parse('2026-03-01T00:00:00Z');
const POLICY: PolicyTarget = { kind: 'RuntimePolicy', namespace: 'ns', name: 'p', uid: 'u', generation: 5 };

const entry = fc.record({
  generation: fc.integer({ min: 3, max: 6 }),
  workloads: fc.integer({ min: 0, max: 3 }),
  enforced: fc.boolean(),
  uid: fc.constantFrom('u', 'other'),
  gaps: fc.array(
    fc.record({
      rule: fc.constantFrom(
        '/spec/network/matchProtocols/0',
        '/spec/syscalls/0',
        '/spec/process/matchPaths/1',
      ),
      level: fc.constantFrom('audited' as const, 'not-enforced' as const),
      reason: fc.string({ maxLength: 40 }),
    }),
    { maxLength: 3 },
  ),
  errors: fc.option(fc.array(fc.string({ maxLength: 30 }), { minLength: 1, maxLength: 2 }), {
    nil: undefined,
  }),
});

const anyNode = fc.record({
  report: fc.option(
    fc.record({
      ageMs: fc.integer({ min: 0, max: 400_000 }),
      released: fc.boolean(),
      entry: fc.option(entry, { nil: undefined }),
    }),
    { nil: undefined },
  ),
});

/** A node that enforces the current generation (most generated nodes, so Ready True is reached too). */
const goodNode = fc.record({
  report: fc.record({
    ageMs: fc.integer({ min: 0, max: 60_000 }),
    released: fc.constant(false),
    entry: fc.record({
      generation: fc.constant(5),
      workloads: fc.integer({ min: 0, max: 3 }),
      enforced: fc.constant(true),
      uid: fc.constant('u'),
      gaps: fc.array(
        fc.record({
          rule: fc.constant('/spec/syscalls/0'),
          level: fc.constant('audited' as const),
          reason: fc.string({ maxLength: 40 }),
        }),
        { maxLength: 1 },
      ),
      errors: fc.constant(undefined),
    }),
  }),
});

const node = fc.oneof({ arbitrary: goodNode, weight: 4 }, { arbitrary: anyNode, weight: 1 });

type NodeCase = typeof anyNode extends fc.Arbitrary<infer T> ? T : never;

function build(nodes: NodeCase[]): {
  names: string[];
  reports: NodeStatusReport[];
} {
  const names = nodes.map((_, i) => `node-${i}`);
  const reports: NodeStatusReport[] = [];
  nodes.forEach((n, i) => {
    if (n.report === undefined) return;
    const e = n.report.entry;
    reports.push({
      version: 1,
      node: names[i] ?? '',
      plane: 'fanotify',
      rtctlVersion: '0.1.0',
      updatedAt: new Date(NOW - n.report.ageMs).toISOString(),
      released: n.report.released,
      policies:
        e === undefined
          ? []
          : [
              {
                kind: 'RuntimePolicy',
                namespace: 'ns',
                name: 'p',
                generation: e.generation,
                workloads: e.workloads,
                enforced: e.enforced,
                uid: e.uid,
                gaps: e.gaps,
                ...(e.errors === undefined ? {} : { errors: e.errors }),
              } satisfies NodePolicyReport,
            ],
    });
  });
  return { names, reports };
}

describe('controller: status aggregation properties (fast-check)', () => {
  it('counts are consistent, Ready True hides nothing, the message is bounded, order does not matter', () => {
    const seen = new Set<string>();
    fc.assert(
      fc.property(fc.array(node, { maxLength: 12 }), fc.integer({ min: 0, max: 120_000 }), (nodes, since) => {
        const { names, reports } = build(nodes);
        const input = {
          policy: POLICY,
          nodes: names.map((name) => ({ name, labels: {} })),
          reports,
          now: NOW,
          staleAfterMs: 180_000,
          generationSeenAt: NOW - since,
          pendingGraceMs: 60_000,
        };
        const s = aggregatePolicyStatus(input);
        const ready = s.conditions[0];
        assert.ok(ready !== undefined);
        seen.add(ready.reason);
        assert.ok(s.enforcedNodes <= s.expectedNodes);
        assert.ok(ready.message.length <= MAX_MESSAGE_LENGTH);
        assert.ok(s.rulesNotEnforced.length <= MAX_RULES_LISTED);
        assert.equal(s.observedGeneration, POLICY.generation);
        if (ready.status === 'True') {
          assert.equal(s.enforcedNodes, s.expectedNodes);
          // Every node has a fresh, unreleased report of the current generation of this policy.
          for (const name of names) {
            const r = reports.find((x) => x.node === name);
            assert.ok(r !== undefined && !r.released && NOW - Date.parse(r.updatedAt) <= 180_000, name);
            const e = r.policies[0];
            assert.ok(e !== undefined && e.generation === 5 && e.uid === 'u' && e.errors === undefined, name);
            if (e.workloads > 0) {
              assert.ok(e.enforced, name);
              assert.ok(!e.gaps.some((g) => g.level === 'not-enforced'), name);
            }
          }
        }
        const reversed = aggregatePolicyStatus({
          ...input,
          nodes: [...input.nodes].reverse(),
          reports: [...reports].reverse(),
        });
        assert.deepEqual(reversed, s);
      }),
      { numRuns: 500 },
    );
    // The generated cases reach Ready True and the failing reasons, so the checks above were exercised.
    for (const reason of [
      'Enforced',
      'NotEnforced',
      'NodeNotReporting',
      'Pending',
      'StaleGeneration',
      'Released',
    ])
      assert.ok(seen.has(reason), `${reason} never generated (${[...seen].join(', ')})`);
  });
});
