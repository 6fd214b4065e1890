// TypeScript types of the two policy kinds, derived from the JSON Schemas so that the two cannot drift.
import type { FromSchema } from 'json-schema-to-ts';
import type { RUNTIME_HOST_POLICY_SCHEMA, RUNTIME_POLICY_SCHEMA } from '../schema/policy-schema.js';

/** A RuntimePolicy object that passed schema validation. */
export type RuntimePolicy = FromSchema<typeof RUNTIME_POLICY_SCHEMA>;
/** A RuntimeHostPolicy object that passed schema validation. */
export type RuntimeHostPolicy = FromSchema<typeof RUNTIME_HOST_POLICY_SCHEMA>;

/** The spec of either kind. */
export type PolicySpec = RuntimePolicy['spec'] | RuntimeHostPolicy['spec'];
