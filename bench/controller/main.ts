// bench/controller: one status pass of the controller (the pure aggregation for every policy over every node's
// report) for doubling policy counts at a fixed node count, every report listing every policy. A pass is
// O(policies × nodes), so `ratio` (time at P over time at P/2) stays near 2 (a scan of each report per policy
// would give about 4). Run with `node --expose-gc --import tsx bench/controller/main.ts`. Prints JSON.
import type { NodePolicyReport, NodeStatusReport } from '../../compiler/model/node-status.js';
import { aggregatePolicyStatus, type PolicyTarget } from '../../controller/aggregate-policy-status.js';
import { median, time } from '../support/measure.js';

const NODES = Number(process.env['BENCH_NODES'] ?? 300);
const SIZES = (process.env['BENCH_POLICIES'] ?? '100,200,400').split(',').map(Number);
const RUNS = Number(process.env['BENCH_RUNS'] ?? 3);
const NOW = Date.parse('2026-01-01T00:00:00Z');

function settle(): void {
  (globalThis as { gc?: () => void }).gc?.();
}

function world(policies: number): {
  targets: PolicyTarget[];
  reports: NodeStatusReport[];
  nodes: { name: string; labels: Record<string, string> }[];
} {
  const targets: PolicyTarget[] = Array.from({ length: policies }, (_, i) => ({
    kind: 'RuntimePolicy',
    namespace: `ns-${i % 20}`,
    name: `policy-${i}`,
    uid: `uid-${i}`,
    generation: 3,
  }));
  const nodes = Array.from({ length: NODES }, (_, n) => ({ name: `node-${n}`, labels: { role: 'worker' } }));
  const reports = nodes.map((node, n): NodeStatusReport => ({
    version: 1,
    node: node.name,
    plane: 'fanotify',
    rtctlVersion: '0.1.0',
    updatedAt: new Date(NOW - 1000).toISOString(),
    released: false,
    policies: targets.map((t, i): NodePolicyReport => ({
      kind: 'RuntimePolicy',
      namespace: t.namespace ?? '',
      name: t.name,
      uid: t.uid ?? '',
      generation: 3,
      workloads: (i + n) % 3,
      enforced: true,
      gaps:
        (i + n) % 50 === 0
          ? [{ rule: '/spec/network/matchProtocols/0', level: 'not-enforced', reason: 'no hook' }]
          : [],
    })),
  }));
  return { targets, reports, nodes };
}

const rows: { policies: number; nodes: number; ms: number; ratio?: number }[] = [];
for (const p of SIZES) {
  const w = world(p);
  const pass = (): void => {
    for (const policy of w.targets)
      aggregatePolicyStatus({
        policy,
        nodes: w.nodes,
        reports: w.reports,
        now: NOW,
        staleAfterMs: 180_000,
        generationSeenAt: NOW - 600_000,
        pendingGraceMs: 60_000,
      });
  };
  pass();
  const runs: number[] = [];
  for (let r = 0; r < RUNS; r++) {
    settle();
    runs.push(time(pass));
  }
  const ms = Math.round(median(runs));
  const previous = rows.at(-1);
  const row: { policies: number; nodes: number; ms: number; ratio?: number } = {
    policies: p,
    nodes: NODES,
    ms,
  };
  if (previous !== undefined && previous.ms > 0) row.ratio = Number((ms / previous.ms).toFixed(2));
  rows.push(row);
}
process.stdout.write(
  `${JSON.stringify({ bench: 'controller', runs: RUNS, results: { statusPass: rows } }, null, 2)}\n`,
);
