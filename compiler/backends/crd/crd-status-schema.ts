// The structural schema of a policy's `status` in the CRDs: what the status controller writes (kstatus
// conventions: observedGeneration, conditions[type=Ready], node counts, the rules not enforced). Declared in
// full because the API server prunes status fields a structural schema does not name.

const count = { type: 'integer', format: 'int64', minimum: 0 } as const;

/** The `status` property of both CRDs. */
export const POLICY_STATUS_SCHEMA = {
  type: 'object',
  description:
    'Written by rtctl-controller from the reports of the enforcers (docs/install.md, "Policy status").',
  properties: {
    status: { type: 'string', description: 'Free-form status of the seed format (not written by rtctl).' },
    observedGeneration: { ...count, description: 'metadata.generation the status describes.' },
    enforcedNodes: { ...count, description: 'Selected nodes enforcing every rule of observedGeneration.' },
    expectedNodes: { ...count, description: 'Nodes where the policy selects workloads.' },
    rulesNotEnforced: {
      type: 'array',
      maxItems: 20,
      description: 'Rules some nodes do not enforce or only audit (at most 20).',
      items: {
        type: 'object',
        required: ['rule', 'level', 'nodes', 'nodeCount'],
        properties: {
          rule: { type: 'string', maxLength: 512, description: 'JSON pointer of the rule in the policy.' },
          level: { type: 'string', enum: ['audited', 'not-enforced'] },
          reason: { type: 'string', maxLength: 1024 },
          nodes: { type: 'array', maxItems: 5, items: { type: 'string', maxLength: 253 } },
          nodeCount: count,
        },
      },
    },
    conditions: {
      type: 'array',
      maxItems: 8,
      'x-kubernetes-list-type': 'map',
      'x-kubernetes-list-map-keys': ['type'],
      items: {
        type: 'object',
        required: ['type', 'status', 'lastTransitionTime', 'reason', 'message'],
        properties: {
          type: { type: 'string', maxLength: 316 },
          status: { type: 'string', enum: ['True', 'False', 'Unknown'] },
          reason: { type: 'string', maxLength: 1024 },
          message: { type: 'string', maxLength: 32768 },
          observedGeneration: count,
          lastTransitionTime: { type: 'string', format: 'date-time' },
        },
      },
    },
  },
} as const;

/** Printer columns of the status (after Action). */
export const STATUS_PRINTER_COLUMNS = [
  { name: 'Ready', type: 'string', jsonPath: '.status.conditions[?(@.type=="Ready")].status' },
  {
    name: 'Enforced',
    type: 'integer',
    jsonPath: '.status.enforcedNodes',
    description: 'Nodes enforcing the policy',
  },
  {
    name: 'Expected',
    type: 'integer',
    jsonPath: '.status.expectedNodes',
    description: 'Nodes where the policy selects workloads',
  },
  {
    name: 'Reason',
    type: 'string',
    jsonPath: '.status.conditions[?(@.type=="Ready")].reason',
    priority: 10,
  },
] as const;
