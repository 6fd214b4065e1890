// The normalized manifest of one policy: keys in schema order (maps sorted), metadata reduced to what the
// policy owns, and defaults written out (booleans of rules, spec.severity), so a diff shows meaning, not style.
import { fitFileName } from '../../emit/file-name.js';
import { appendYamlCollection, isCollection, yamlKey, yamlScalar, yamlString } from '../../emit/yaml-text.js';
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

/** The schema of a document's kind, its metadata and its spec (severity written out), as normalization reads them. */
function readPolicy(doc: PolicyDocument): {
  schema: SchemaNode;
  metadata: { [k: string]: Json };
  spec: { [k: string]: Json };
} {
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
  return { schema, metadata, spec };
}

/** The normalized object of a policy document. */
export function normalizePolicy(doc: PolicyDocument): Record<string, unknown> {
  const { schema, metadata, spec } = readPolicy(doc);
  return {
    apiVersion: doc.object.apiVersion,
    kind: doc.kind,
    metadata,
    spec: order(spec, schema.properties?.['spec'], false),
  };
}

/** True when the normalized form of a collection has nothing in it (order() would give [] or {}). */
function isNormalizedEmpty(
  value: Json[] | { [k: string]: Json },
  schema: SchemaNode | undefined,
  isRule: boolean,
) {
  if (Array.isArray(value)) return value.length === 0;
  const props = schema?.properties;
  if (props !== undefined)
    for (const k of propertyNames(props))
      if (k in value || (isRule && (EXPLICIT_FALSE as readonly string[]).includes(k))) return false;
  return countKeys(value) === 0;
}

/** Indentations (`n` spaces) and list item leads (`n` spaces and `- `), made once per width. */
const indentations: string[] = [];
const itemLeads: string[] = [];
function spaces(n: number): string {
  return (indentations[n] ??= ' '.repeat(n));
}
function itemLead(n: number): string {
  return (itemLeads[n] ??= `${spaces(n)}- `);
}

/** How one property of a schema mapping is written: what writing a key needs, worked out once. */
interface PropertyPlan {
  name: string;
  /** The key's text (yamlKey). */
  key: string;
  schema: SchemaNode | undefined;
  /** Items of the property's lists are rules (`match*`). */
  rule: boolean;
  /** A rule boolean written out as false where a rule omits it. */
  explicitFalse: boolean;
}

/** The property plans of a schema mapping, in schema order, made once per node (the schema is constant). */
const propertyPlans = new WeakMap<object, readonly PropertyPlan[]>();
function planOf(props: Record<string, SchemaNode>): readonly PropertyPlan[] {
  let plan = propertyPlans.get(props);
  if (plan === undefined) {
    plan = propertyNames(props).map((name) => ({
      name,
      key: yamlKey(name),
      schema: props[name],
      rule: name.startsWith('match'),
      explicitFalse: (EXPLICIT_FALSE as readonly string[]).includes(name),
    }));
    propertyPlans.set(props, plan);
  }
  return plan;
}

/** Appends the free-form mapping `value` (no schema properties): order() then the emitter; one scalar entry directly. */
function appendFreeForm(out: string[], value: { [k: string]: Json }, indent: string, lead: string): void {
  let only: string | undefined;
  for (const k in value) {
    if (!Object.hasOwn(value, k)) continue;
    if (only !== undefined) {
      only = undefined;
      break;
    }
    only = k;
  }
  const v = only === undefined ? undefined : value[only];
  if (only === undefined || v === undefined || isCollection(v))
    appendYamlCollection(out, order(value, undefined, false) as { [k: string]: Json }, indent, lead);
  else out.push(lead, yamlKey(only), ': ', yamlScalar(v), '\n');
}

/**
 * Appends the YAML of order(value, schema, isRule), a non-empty collection, without building it: keys in schema
 * order (per-node plans), rule booleans written out. What the schema does not describe (free-form maps,
 * unnamed keys) goes through order() and the generic emitter, so the text is the same byte for byte
 * (test/compiler/backends/crd/normalized-manifest.test.ts holds it to that).
 */
function appendOrdered(
  out: string[],
  value: Json[] | { [k: string]: Json },
  schema: SchemaNode | undefined,
  isRule: boolean,
  indent: string,
  lead: string,
): void {
  const inner = spaces(indent.length + 2);
  let prefix = lead;
  if (Array.isArray(value)) {
    const items = schema?.items;
    const itemRule = items?.properties !== undefined && isRule;
    for (const item of value) {
      if (isCollection(item) && !isNormalizedEmpty(item, items, itemRule))
        appendOrdered(
          out,
          item,
          items,
          itemRule,
          inner,
          prefix === indent ? itemLead(indent.length) : `${prefix}- `,
        );
      else
        out.push(
          prefix,
          '- ',
          isCollection(item) ? (Array.isArray(item) ? '[]' : '{}') : yamlScalar(item),
          '\n',
        );
      prefix = indent;
    }
    return;
  }
  const props = schema?.properties;
  if (props === undefined) {
    appendFreeForm(out, value, indent, lead);
    return;
  }
  const start = out.length;
  let known = 0;
  for (const p of planOf(props)) {
    let child: Json;
    if (p.name in value) {
      child = value[p.name] ?? null;
      if (Object.hasOwn(value, p.name)) known++;
    } else if (isRule && p.explicitFalse) child = false;
    else continue;
    if (!isCollection(child)) out.push(prefix, p.key, ': ', yamlScalar(child), '\n');
    else if (isNormalizedEmpty(child, p.schema, p.rule))
      out.push(prefix, p.key, Array.isArray(child) ? ': []\n' : ': {}\n');
    else {
      out.push(prefix, p.key, ':\n');
      appendOrdered(out, child, p.schema, p.rule, inner, inner);
    }
    prefix = indent;
  }
  // Keys the schema does not name: what was written is taken back, and order() places them.
  if (known < countKeys(value)) {
    out.length = start;
    appendYamlCollection(out, order(value, schema, isRule) as { [k: string]: Json }, indent, lead);
  }
}

/** Appends the head of a manifest (apiVersion, kind, metadata); directly when metadata is a name and a namespace. */
function appendHead(out: string[], apiVersion: unknown, kind: string, metadata: { [k: string]: Json }): void {
  const { name, namespace } = metadata;
  if (
    typeof apiVersion !== 'string' ||
    (name !== null && typeof name !== 'string') ||
    countKeys(metadata) !== (namespace === undefined ? 1 : 2) ||
    (namespace !== undefined && typeof namespace !== 'string')
  ) {
    appendYamlCollection(out, { apiVersion: apiVersion as Json, kind, metadata }, '', '');
    return;
  }
  out.push('apiVersion: ', yamlString(apiVersion), '\nkind: ', yamlString(kind), '\nmetadata:\n  name: ');
  out.push(yamlScalar(name), '\n');
  if (namespace !== undefined) out.push('  namespace: ', yamlString(namespace), '\n');
}

/**
 * The YAML text of a policy's normalized manifest: toYaml(normalizePolicy(doc)) byte for byte, written in one
 * walk of the spec (a compile writes one per policy; the normalized copy of each spec is not built).
 */
export function emitNormalizedPolicy(doc: PolicyDocument): string {
  const { schema, metadata, spec } = readPolicy(doc);
  const out: string[] = [];
  appendHead(out, doc.object.apiVersion, doc.kind, metadata);
  const specSchema = schema.properties?.['spec'];
  if (isNormalizedEmpty(spec, specSchema, false)) out.push('spec: {}\n');
  else {
    out.push('spec:\n');
    appendOrdered(out, spec, specSchema, false, '  ', '  ');
  }
  return out.join('');
}

/** The artifact path of a policy's normalized manifest. */
export function policyManifestPath(doc: PolicyDocument): string {
  // A name of up to 253 characters plus ".yaml" can pass the 255-byte file name limit: long ones are hashed.
  const file = fitFileName(doc.object.metadata.name, '.yaml');
  if (doc.kind === 'RuntimeHostPolicy') return `policies/runtimehostpolicy/${file}`;
  return `policies/runtimepolicy/${doc.object.metadata.namespace ?? 'default'}/${file}`;
}
