// The JSON Schema of a test suite document (kind RuntimePolicyTest): cases of expected decisions that
// `rtctl test` runs against the policies beside them. docs/policy-tests.md describes the format.

/** apiVersion of test suites: not the policies' group, so neither the API server nor the webhook meets them. */
export const TEST_SUITE_API_VERSION = 'test.security.runtime.com/v1';
/** kind of test suites. */
export const TEST_SUITE_KIND = 'RuntimePolicyTest';

const labels = {
  type: 'object',
  additionalProperties: { type: 'string' },
  propertyNames: { type: 'string', minLength: 1 },
} as const;
const absolutePath = { type: 'string', pattern: '^/' } as const;
const posture = { enum: ['audit', 'block'] } as const;

const container = {
  type: 'object',
  additionalProperties: false,
  properties: { namespace: { type: 'string', minLength: 1 }, labels },
} as const;
const host = {
  type: 'object',
  additionalProperties: false,
  required: ['host'],
  properties: { host: { const: true }, nodeLabels: labels },
} as const;

const operation = {
  type: 'object',
  additionalProperties: false,
  minProperties: 1,
  properties: {
    process: absolutePath,
    file: absolutePath,
    network: { type: 'string', minLength: 1 },
    capability: { type: 'string', minLength: 1 },
    source: absolutePath,
    write: { type: 'boolean' },
    owner: { type: 'boolean' },
    tty: { type: 'boolean' },
    args: { type: 'array', items: { type: 'string' } },
  },
} as const;

/** The schema of one RuntimePolicyTest document. */
export const TEST_SUITE_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  required: ['apiVersion', 'kind', 'metadata', 'cases'],
  properties: {
    apiVersion: { const: TEST_SUITE_API_VERSION },
    kind: { const: TEST_SUITE_KIND },
    metadata: {
      type: 'object',
      required: ['name'],
      properties: { name: { type: 'string', minLength: 1 } },
    },
    cases: {
      type: 'array',
      minItems: 1,
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['name', 'operation', 'expect'],
        properties: {
          name: { type: 'string', minLength: 1 },
          workload: { anyOf: [container, host] },
          postures: {
            type: 'object',
            additionalProperties: false,
            properties: { file: posture, network: posture, capabilities: posture },
          },
          operation,
          expect: {
            type: 'object',
            additionalProperties: false,
            required: ['allowed'],
            properties: {
              allowed: { type: 'boolean' },
              policy: { type: 'string', minLength: 1 },
              action: { enum: ['Block', 'Audit', 'none'] },
            },
          },
        },
      },
    },
  },
} as const;
