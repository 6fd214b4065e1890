// GitOps health of the policy kinds, one source for both tools: the Argo CD health.lua (argocd-health.lua
// beside this file) and the Flux Kustomization `healthCheckExprs` (CEL), with the cases both must satisfy.
// `npm run gen` writes them in the layouts the tools read (deploy/argocd/, deploy/flux/).
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

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

const ready = (status: string, message: string, reason: string): Record<string, unknown> => ({
  type: 'Ready',
  status,
  reason,
  message,
  observedGeneration: 2,
  lastTransitionTime: '2026-01-01T00:00:00Z',
});

/** The cases (testdata of health_test.yaml and of the CEL test). */
export const HEALTH_CASES: readonly HealthCase[] = [
  {
    name: 'no-status',
    generation: 1,
    health: Health.Progressing,
    message: 'Waiting for the enforcers to report',
  },
  {
    name: 'generation-behind',
    generation: 3,
    status: { observedGeneration: 2, conditions: [ready('True', 'Enforced on 3 of 3 nodes', 'Enforced')] },
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
    name: 'ready-unknown',
    generation: 2,
    status: { observedGeneration: 2, conditions: [ready('Unknown', 'Waiting for 1 node', 'Pending')] },
    health: Health.Progressing,
    message: 'Waiting for 1 node',
  },
  {
    name: 'ready-true',
    generation: 2,
    status: {
      observedGeneration: 2,
      enforcedNodes: 3,
      expectedNodes: 3,
      conditions: [ready('True', 'Enforced on 3 of 3 nodes', 'Enforced')],
    },
    health: Health.Healthy,
    message: 'Enforced on 3 of 3 nodes',
  },
  {
    name: 'ready-false',
    generation: 2,
    status: {
      observedGeneration: 2,
      enforcedNodes: 2,
      expectedNodes: 3,
      conditions: [
        ready(
          'False',
          'Enforced on 2 of 3 nodes; node-c (fanotify) cannot enforce rule network[0]',
          'PartiallyEnforced',
        ),
      ],
    },
    health: Health.Degraded,
    message: 'Enforced on 2 of 3 nodes; node-c (fanotify) cannot enforce rule network[0]',
  },
];

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
