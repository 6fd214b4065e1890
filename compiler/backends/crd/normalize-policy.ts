// The normalized manifest of one policy: keys in schema order (maps sorted), metadata reduced to what the
// policy owns, and defaults written out (booleans of rules, spec.severity), so a diff shows meaning, not style.
import { fitFileName } from '../../emit/file-name.js';
import { RUNTIME_HOST_POLICY_SCHEMA, RUNTIME_POLICY_SCHEMA } from '../../schema/policy-schema.js';
import { DEFAULT_SEVERITY } from '../../lower/lower-policy.js';
import type { PolicyDocument } from '../../model/policy-document.js';

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };
interface SchemaNode {
  properties?: Record<string, SchemaNode>;
  items?: SchemaNode;
  type?: string;
}

/** Rule booleans made explicit when the rule's schema has them. */
const EXPLICIT_FALSE = ['recursive', 'ownerOnly', 'readOnly'] as const;

function isObject(v: Json): v is { [k: string]: Json } {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** The property names of a schema node, in schema order, listed once per node (the schema is constant). */
const propertyNameLists = new WeakMap<object, readonly string[]>();
function propertyNames(props: Record<string, SchemaNode>): readonly string[] {
  let names = propertyNameLists.get(props);
  if (names === undefined) {
    names = Object.keys(props);
    propertyNameLists.set(props, names);
  }
  return names;
}

/** The number of own enumerable keys of an object, without listing them. */
function countKeys(value: { [k: string]: Json }): number {
  let n = 0;
  for (const k in value) if (Object.hasOwn(value, k)) n++;
  return n;
}

function order(value: Json, schema: SchemaNode | undefined, isRule: boolean): Json {
  if (Array.isArray(value)) {
    return value.map((v) => order(v, schema?.items, schema?.items?.properties !== undefined && isRule));
  }
  if (!isObject(value)) return value;
  const out: { [k: string]: Json } = {};
  const props = schema?.properties;
  if (props === undefined) {
    for (const k of Object.keys(value).sort()) out[k] = order(value[k] ?? null, undefined, false);
    return out;
  }
  let known = 0;
  for (const k of propertyNames(props)) {
    if (k in value) {
      out[k] = order(value[k] ?? null, props[k], k.startsWith('match'));
      if (Object.hasOwn(value, k)) known++;
    } else if (isRule && (EXPLICIT_FALSE as readonly string[]).includes(k)) out[k] = false;
  }
  // Keys the schema does not name (none in a schema-valid policy but for free-form maps) follow, sorted.
  if (known < countKeys(value))
    for (const k of Object.keys(value).sort())
      if (!(k in out)) out[k] = order(value[k] ?? null, undefined, false);
  return out;
}

/** The normalized object of a policy document. */
export function normalizePolicy(doc: PolicyDocument): Record<string, unknown> {
  const schema = (doc.kind === 'RuntimePolicy'
    ? RUNTIME_POLICY_SCHEMA
    : RUNTIME_HOST_POLICY_SCHEMA) as unknown as SchemaNode;
  const src = doc.object as unknown as { metadata: Record<string, Json>; spec: { [k: string]: Json } };
  const metadata: { [k: string]: Json } = { name: src.metadata['name'] ?? null };
  if (doc.kind === 'RuntimePolicy' && typeof src.metadata['namespace'] === 'string')
    metadata['namespace'] = src.metadata['namespace'];
  for (const k of ['labels', 'annotations']) {
    const v = src.metadata[k];
    if (v !== undefined && isObject(v) && Object.keys(v).length > 0) metadata[k] = order(v, undefined, false);
  }
  const spec = src.spec['severity'] === undefined ? { ...src.spec, severity: DEFAULT_SEVERITY } : src.spec;
  return {
    apiVersion: doc.object.apiVersion,
    kind: doc.kind,
    metadata,
    spec: order(spec, schema.properties?.['spec'], false),
  };
}

/** The artifact path of a policy's normalized manifest. */
export function policyManifestPath(doc: PolicyDocument): string {
  // A name of up to 253 characters plus ".yaml" can pass the 255-byte file name limit: long ones are hashed.
  const file = fitFileName(doc.object.metadata.name, '.yaml');
  if (doc.kind === 'RuntimeHostPolicy') return `policies/runtimehostpolicy/${file}`;
  return `policies/runtimepolicy/${doc.object.metadata.namespace ?? 'default'}/${file}`;
}
