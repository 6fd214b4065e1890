// GitOps health of the policy kinds, one source for both tools: the Argo CD health.lua (argocd-health.lua
// beside this file) and the Flux Kustomization `healthCheckExprs` (CEL), with the cases both must satisfy.
// `npm run gen` writes them in the layouts the tools read (deploy/argocd/, deploy/flux/).
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import {
  NODE_STATUS_VERSION,
  type NodePolicyReport,
  type NodeStatusReport,
} from '../../compiler/model/node-status.js';
import { aggregatePolicyStatus, type NodeInfo } from '../../controller/aggregate-policy-status.js';

/** The policy kinds whose health is checked. */
export const POLICY_KINDS = ['RuntimePolicy', 'RuntimeHostPolicy'] as const;

/** Argo CD's health statuses used here. */
export const Health = { Healthy: 'Healthy', Progressing: 'Progressing', Degraded: 'Degraded' } as const;
export type Health = (typeof Health)[keyof typeof Health];

/** The Argo CD health script. */
export function readArgoHealthLua(): string {
  return readFileSync(fileURLToPath(new URL('./argocd-health.lua', import.meta.url)), 'utf8');
}

/**
 * Flux evaluates `inProgress`, then `failed`, then `current`, on the object's top-level fields; none true
 * (or a field missing, such as no status yet) leaves the object in progress.
 */
export const FLUX_EXPRESSIONS = {
  inProgress:
    "!has(status.observedGeneration) || status.observedGeneration != metadata.generation || !has(status.conditions) || !status.conditions.exists(c, c.type == 'Ready' && c.status != 'Unknown')",
  failed: "status.conditions.exists(c, c.type == 'Ready' && c.status == 'False')",
  current: "status.conditions.exists(c, c.type == 'Ready' && c.status == 'True')",
} as const;

/** The Flux snippet: one entry per kind. */
export function fluxHealthCheckExprs(): Array<Record<string, string>> {
  return POLICY_KINDS.map((kind) => ({ apiVersion: 'security.runtime.com/v1', kind, ...FLUX_EXPRESSIONS }));
}

/** A health case: an object's status and the health both tools must give. */
export interface HealthCase {
  name: string;
  generation: number;
  status?: Record<string, unknown>;
  health: Health;
  message: string;
}

// The statuses of the cases are produced by the controller's own aggregation from node reports, so the health
// checks read exactly what the controller writes (a new Ready reason without a case fails a test).
const NOW = Date.parse('2026-01-01T00:00:00Z');
const NODES: NodeInfo[] = ['node-a', 'node-b', 'node-c'].map((name) => ({
  name,
  labels: { role: 'worker' },
}));

function entry(generation: number, over: Partial<NodePolicyReport> = {}): NodePolicyReport {
  return {
    kind: 'RuntimePolicy',
    namespace: 'payments',
    name: 'block-shells',
    uid: 'case-uid',
    generation,
    workloads: 1,
    enforced: true,
    gaps: [],
    ...over,
  };
}

function nodeReport(
  node: string,
  policies: NodePolicyReport[],
  over: Partial<NodeStatusReport> = {},
): NodeStatusReport {
  return {
    version: NODE_STATUS_VERSION,
    node,
    plane: 'fanotify',
    rtctlVersion: '0.1.0',
    updatedAt: new Date(NOW - 10_000).toISOString(),
    released: false,
    policies,
    ...over,
  };
}

/** The controller's status for generation 2 of the case policy, given each node's entry (undefined: no report). */
function aggregated(
  perNode: Array<NodePolicyReport | 'none' | 'released' | undefined>,
  generationSeenAt = NOW - 600_000,
): Record<string, unknown> {
  const reports: NodeStatusReport[] = [];
  perNode.forEach((e, i) => {
    const node = NODES[i]?.name ?? `node-${i}`;
    if (e === undefined) return;
    if (e === 'none') reports.push(nodeReport(node, []));
    else if (e === 'released') reports.push(nodeReport(node, [entry(2)], { released: true }));
    else reports.push(nodeReport(node, [e]));
  });
  const status = aggregatePolicyStatus({
    policy: {
      kind: 'RuntimePolicy',
      namespace: 'payments',
      name: 'block-shells',
      uid: 'case-uid',
      generation: 2,
    },
    nodes: perNode.length === 0 ? [] : NODES.slice(0, perNode.length),
    reports,
    now: NOW,
    staleAfterMs: 180_000,
    generationSeenAt,
    pendingGraceMs: 60_000,
  });
  return JSON.parse(JSON.stringify(status)) as Record<string, unknown>;
}

function readyMessage(status: Record<string, unknown> | undefined): string {
  const conditions = (status?.['conditions'] ?? []) as Array<{ type: string; message: string }>;
  return conditions.find((c) => c.type === 'Ready')?.message ?? '';
}

const GAP = {
  rule: '/spec/network/matchProtocols/0',
  level: 'not-enforced',
  reason: 'fanotify has no network hook',
} as const;

const BUILT: ReadonlyArray<Omit<HealthCase, 'message'> & { message?: string }> = [
  {
    name: 'no-status',
    generation: 1,
    health: Health.Progressing,
    message: 'Waiting for the enforcers to report',
  },
  {
    name: 'generation-behind',
    generation: 3,
    status: aggregated([entry(2), entry(2), entry(2)]),
    health: Health.Progressing,
    message: 'Waiting for the enforcers to report generation 3',
  },
  {
    name: 'no-conditions-yet',
    generation: 2,
    status: { observedGeneration: 2 },
    health: Health.Progressing,
    message: 'Waiting for the enforcers to report',
  },
  {
    name: 'ready-true',
    generation: 2,
    status: aggregated([entry(2), entry(2), entry(2)]),
    health: Health.Healthy,
  },
  {
    name: 'ready-true-selects-nothing',
    generation: 2,
    status: aggregated([entry(2, { workloads: 0 }), entry(2, { workloads: 0 }), entry(2, { workloads: 0 })]),
    health: Health.Healthy,
  },
  {
    name: 'ready-unknown-pending',
    generation: 2,
    status: aggregated([entry(2), entry(1), 'none'], NOW - 5_000),
    health: Health.Progressing,
  },
  { name: 'ready-unknown-no-reports', generation: 2, status: aggregated([]), health: Health.Progressing },
  {
    name: 'ready-false-not-enforced',
    generation: 2,
    status: aggregated([entry(2), entry(2, { enforced: false }), entry(2)]),
    health: Health.Degraded,
  },
  {
    name: 'ready-false-rules-not-enforced',
    generation: 2,
    status: aggregated([entry(2), entry(2), entry(2, { gaps: [GAP] })]),
    health: Health.Degraded,
  },
  {
    name: 'ready-false-stale-generation',
    generation: 2,
    status: aggregated([entry(2), entry(1), entry(2)]),
    health: Health.Degraded,
  },
  {
    name: 'ready-false-node-not-reporting',
    generation: 2,
    status: aggregated([entry(2), entry(2), undefined]),
    health: Health.Degraded,
  },
  {
    name: 'ready-false-released',
    generation: 2,
    status: aggregated([entry(2), 'released', entry(2)]),
    health: Health.Degraded,
  },
  {
    name: 'ready-false-invalid',
    generation: 2,
    status: aggregated([
      entry(2, {
        workloads: 0,
        enforced: false,
        errors: ['RT2003 /spec/process/matchPaths/0/path: not absolute'],
      }),
      entry(2),
      entry(2),
    ]),
    health: Health.Degraded,
  },
];

/** The cases (testdata of health_test.yaml and of the CEL test); the message is the Ready condition's unless given. */
export const HEALTH_CASES: readonly HealthCase[] = BUILT.map((c) => ({
  ...c,
  message: c.message ?? readyMessage(c.status),
}));

/** The object of a case, for a kind. */
export function caseObject(kind: (typeof POLICY_KINDS)[number], c: HealthCase): Record<string, unknown> {
  return {
    apiVersion: 'security.runtime.com/v1',
    kind,
    metadata: {
      name: 'block-shells',
      ...(kind === 'RuntimePolicy' ? { namespace: 'payments' } : {}),
      generation: c.generation,
    },
    spec: { action: 'Block', process: { matchPaths: [{ path: '/bin/sh' }] } },
    ...(c.status === undefined ? {} : { status: c.status }),
  };
}
