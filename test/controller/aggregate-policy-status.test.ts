// The status aggregation (pure), table-driven: node reports in, a policy's kstatus out.
import assert from 'node:assert/strict';
import { Ajv } from 'ajv';
import { POLICY_STATUS_SCHEMA } from '../../compiler/backends/crd/crd-status-schema.js';
import type { NodePolicyReport, NodeStatusReport } from '../../compiler/model/node-status.js';
import {
  aggregatePolicyStatus,
  formatConditionTime,
  type AggregateInput,
  type NodeInfo,
  type PolicyTarget,
} from '../../controller/aggregate-policy-status.js';
import { MAX_MESSAGE_LENGTH, MAX_RULES_LISTED, type PolicyStatus } from '../../controller/policy-status.js';

const NOW = Date.parse('2026-03-01T12:00:00Z');
const POLICY: PolicyTarget = {
  kind: 'RuntimePolicy',
  namespace: 'payments',
  name: 'block-shells',
  uid: 'u1',
  generation: 3,
};
const HOST: PolicyTarget = {
  kind: 'RuntimeHostPolicy',
  name: 'host-audit',
  uid: 'h1',
  generation: 2,
  nodeSelector: { role: 'worker' },
};

function entry(over: Partial<NodePolicyReport> = {}): NodePolicyReport {
  return {
    kind: 'RuntimePolicy',
    namespace: 'payments',
    name: 'block-shells',
    uid: 'u1',
    generation: 3,
    workloads: 2,
    enforced: true,
    gaps: [],
    ...over,
  };
}

function report(
  node: string,
  policies: NodePolicyReport[],
  over: Partial<NodeStatusReport> = {},
): NodeStatusReport {
  return {
    version: 1,
    node,
    plane: 'fanotify',
    rtctlVersion: '0.1.0',
    updatedAt: new Date(NOW - 5000).toISOString(),
    released: false,
    policies,
    ...over,
  };
}

const nodes = (...names: string[]): NodeInfo[] => names.map((name) => ({ name, labels: { role: 'worker' } }));

function run(over: Partial<AggregateInput>): PolicyStatus {
  return aggregatePolicyStatus({
    policy: POLICY,
    nodes: nodes('a', 'b'),
    reports: [],
    now: NOW,
    staleAfterMs: 180_000,
    generationSeenAt: NOW - 60_000,
    pendingGraceMs: 30_000,
    ...over,
  });
}

interface Case {
  name: string;
  input: Partial<AggregateInput>;
  ready: [string, string];
  counts: [number, number];
  message: RegExp;
  rules?: string[];
}

const CASES: Case[] = [
  {
    name: 'every selecting node enforces the current generation',
    input: { reports: [report('a', [entry()]), report('b', [entry({ workloads: 0 })])] },
    ready: ['True', 'Enforced'],
    counts: [1, 1],
    message: /^Enforced on 1 of 1 node$/,
  },
  {
    name: 'a policy selecting nothing on any node is Ready with expectedNodes 0',
    input: { reports: [report('a', [entry({ workloads: 0 })]), report('b', [entry({ workloads: 0 })])] },
    ready: ['True', 'Enforced'],
    counts: [0, 0],
    message: /^Selects no workloads on the 2 reporting nodes$/,
  },
  {
    name: 'a node whose plane does not have the policy in force',
    input: { reports: [report('a', [entry()]), report('b', [entry({ enforced: false })])] },
    ready: ['False', 'NotEnforced'],
    counts: [1, 2],
    message: /^Enforced on 1 of 2 nodes; not enforced on b$/,
  },
  {
    name: 'a node whose plane cannot enforce a rule',
    input: {
      reports: [
        report('a', [entry()]),
        report('b', [
          entry({
            gaps: [
              {
                rule: '/spec/network/matchProtocols/0',
                level: 'not-enforced',
                reason: 'fanotify has no network hook',
              },
            ],
          }),
        ]),
      ],
    },
    ready: ['False', 'RulesNotEnforced'],
    counts: [1, 2],
    message:
      /rules not enforced on b: \/spec\/network\/matchProtocols\/0 \(fanotify has no network hook\) on b$/,
    rules: ['/spec/network/matchProtocols/0'],
  },
  {
    name: 'rules only audited keep Ready True and are listed',
    input: {
      reports: [
        report('a', [
          entry({ gaps: [{ rule: '/spec/syscalls/0', level: 'audited', reason: 'tracepoints audit only' }] }),
        ]),
        report('b', [entry()]),
      ],
    },
    ready: ['True', 'Enforced'],
    counts: [2, 2],
    message: /^Enforced on 2 of 2 nodes; audited only: \/spec\/syscalls\/0 \(tracepoints audit only\) on a$/,
    rules: ['/spec/syscalls/0'],
  },
  {
    name: 'a node still on the previous generation within the grace period',
    input: {
      reports: [report('a', [entry()]), report('b', [entry({ generation: 2 })])],
      generationSeenAt: NOW - 10_000,
    },
    ready: ['Unknown', 'Pending'],
    counts: [1, 1],
    message: /^Waiting for b to report generation 3$/,
  },
  {
    name: 'a node still on the previous generation after the grace period',
    input: { reports: [report('a', [entry()]), report('b', [entry({ generation: 2 })])] },
    ready: ['False', 'StaleGeneration'],
    counts: [1, 1],
    message: /b still on an older generation than 3$/,
  },
  {
    name: 'a node that has not seen the policy yet is pending, not enforcing',
    input: { reports: [report('a', [entry()]), report('b', [])], generationSeenAt: NOW - 1000 },
    ready: ['Unknown', 'Pending'],
    counts: [1, 1],
    message: /^Waiting for b to report generation 3$/,
  },
  {
    name: 'a node without a report',
    input: { reports: [report('a', [entry()])] },
    ready: ['False', 'NodeNotReporting'],
    counts: [1, 1],
    message: /^Enforced on 1 of 1 node; no recent report from b$/,
  },
  {
    name: 'a report older than the staleness threshold counts as none',
    input: {
      reports: [
        report('a', [entry()]),
        report('b', [entry()], { updatedAt: new Date(NOW - 200_000).toISOString() }),
      ],
    },
    ready: ['False', 'NodeNotReporting'],
    counts: [1, 1],
    message: /no recent report from b$/,
  },
  {
    name: 'a node that released enforcement',
    input: { reports: [report('a', [entry()]), report('b', [entry()], { released: true })] },
    ready: ['False', 'Released'],
    counts: [1, 1],
    message: /enforcement released on b$/,
  },
  {
    name: 'the enforcers refuse the generation',
    input: {
      reports: [
        report('a', [
          entry({
            workloads: 0,
            enforced: false,
            errors: ['RT2003 /spec/process/matchPaths/0/path: not absolute'],
          }),
        ]),
        report('b', [entry()]),
      ],
    },
    ready: ['False', 'Invalid'],
    counts: [1, 1],
    message: /^Generation 3 is refused by a: RT2003 \/spec\/process\/matchPaths\/0\/path: not absolute$/,
  },
  {
    name: 'no nodes and no reports',
    input: { nodes: [], reports: [] },
    ready: ['Unknown', 'NoReports'],
    counts: [0, 0],
    message: /^No enforcer has reported yet$/,
  },
  {
    name: 'node list unknown: the reporting nodes are the nodes',
    input: { nodes: undefined, reports: [report('a', [entry()])] },
    ready: ['True', 'Enforced'],
    counts: [1, 1],
    message: /^Enforced on 1 of 1 node$/,
  },
  {
    name: 'a report of a node that is gone is ignored',
    input: {
      nodes: nodes('a'),
      reports: [report('a', [entry()]), report('gone', [entry({ enforced: false })])],
    },
    ready: ['True', 'Enforced'],
    counts: [1, 1],
    message: /^Enforced on 1 of 1 node$/,
  },
  {
    name: 'an entry of a deleted policy of the same name (another uid) is not this policy',
    input: {
      reports: [report('a', [entry()]), report('b', [entry({ uid: 'old' })])],
      generationSeenAt: NOW - 1000,
    },
    ready: ['Unknown', 'Pending'],
    counts: [1, 1],
    message: /^Waiting for b/,
  },
  {
    name: 'a host policy does not expect a silent node whose labels it does not select',
    input: {
      policy: HOST,
      nodes: [
        { name: 'a', labels: { role: 'worker' } },
        { name: 'b', labels: { role: 'control-plane' } },
      ],
      reports: [
        report('a', [
          entry({ kind: 'RuntimeHostPolicy', name: 'host-audit', uid: 'h1', generation: 2, workloads: 1 }),
        ]),
      ],
    },
    ready: ['True', 'Enforced'],
    counts: [1, 1],
    message: /^Enforced on 1 of 1 node$/,
  },
  {
    name: 'a host policy expects a silent node its labels select',
    input: {
      policy: HOST,
      nodes: nodes('a', 'b'),
      reports: [
        report('a', [
          entry({ kind: 'RuntimeHostPolicy', name: 'host-audit', uid: 'h1', generation: 2, workloads: 1 }),
        ]),
      ],
    },
    ready: ['False', 'NodeNotReporting'],
    counts: [1, 2],
    message: /^Enforced on 1 of 2 nodes; no recent report from b$/,
  },
];

// The status the aggregation writes must be what the CRDs declare (the API server prunes the rest).
const validateStatus = new Ajv({ strict: false, allErrors: true }).compile(POLICY_STATUS_SCHEMA);

describe('controller: policy status aggregation (pure)', () => {
  for (const c of CASES) {
    it(c.name, () => {
      const s = run(c.input);
      const ready = s.conditions[0];
      assert.equal(s.conditions.length, 1);
      assert.deepEqual([ready?.status, ready?.reason], c.ready);
      assert.deepEqual([s.enforcedNodes, s.expectedNodes], c.counts);
      assert.match(ready?.message ?? '', c.message);
      assert.equal(s.observedGeneration, (c.input.policy ?? POLICY).generation);
      assert.equal(ready?.observedGeneration, s.observedGeneration);
      assert.deepEqual(
        s.rulesNotEnforced.map((r) => r.rule),
        c.rules ?? [],
      );
      assert.ok(validateStatus(s), JSON.stringify(validateStatus.errors));
    });
  }

  it('keeps lastTransitionTime while Ready keeps its status, and sets it when the status changes', () => {
    const first = run({
      reports: [report('a', [entry()]), report('b', [entry()])],
      now: NOW - 100_000,
      generationSeenAt: NOW - 200_000,
    });
    assert.equal(first.conditions[0]?.lastTransitionTime, formatConditionTime(NOW - 100_000));
    const same = run({
      reports: [report('a', [entry()]), report('b', [entry({ workloads: 0 })])],
      previous: first,
    });
    assert.equal(same.conditions[0]?.status, 'True');
    assert.equal(same.conditions[0]?.lastTransitionTime, first.conditions[0]?.lastTransitionTime);
    const changed = run({ reports: [report('a', [entry()])], previous: same });
    assert.equal(changed.conditions[0]?.status, 'False');
    assert.equal(changed.conditions[0]?.lastTransitionTime, '2026-03-01T12:00:00Z');
  });

  it('is deterministic: the same reports in any order give the same status', () => {
    const reports = [
      report('a', [entry()]),
      report('b', [entry({ enforced: false })]),
      report('c', [entry()]),
    ];
    const all = nodes('a', 'b', 'c');
    const one = JSON.stringify(run({ nodes: all, reports }));
    assert.equal(JSON.stringify(run({ nodes: [...all].reverse(), reports: [...reports].reverse() })), one);
  });

  it('bounds the message and the rule list for many nodes and rules', () => {
    const names = Array.from(
      { length: 300 },
      (_, i) => `node-${String(i).padStart(3, '0')}-${'x'.repeat(40)}`,
    );
    const gaps = Array.from({ length: 60 }, (_, i) => ({
      rule: `/spec/network/matchProtocols/${i}`,
      level: 'not-enforced' as const,
      reason: 'r'.repeat(200),
    }));
    const s = run({
      nodes: nodes(...names),
      reports: names.slice(0, 150).map((n) => report(n, [entry({ gaps })])),
    });
    const ready = s.conditions[0];
    assert.equal(ready?.reason, 'RulesNotEnforced');
    assert.ok((ready?.message.length ?? 0) <= MAX_MESSAGE_LENGTH, String(ready?.message.length));
    assert.equal(s.rulesNotEnforced.length, MAX_RULES_LISTED);
    assert.equal(s.rulesNotEnforced[0]?.nodes.length, 5);
    assert.equal(s.rulesNotEnforced[0]?.nodeCount, 150);
    assert.equal(s.expectedNodes, 150);
    assert.ok(validateStatus(s), JSON.stringify(validateStatus.errors));
  });

  it('names five nodes and counts the rest', () => {
    const names = Array.from({ length: 12 }, (_, i) => `n${String(i).padStart(2, '0')}`);
    const s = run({ nodes: nodes(...names), reports: [] });
    assert.match(s.conditions[0]?.message ?? '', /no recent report from n00, n01, n02, n03, n04 and 7 more$/);
  });
});
