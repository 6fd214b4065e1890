// Turns a policy JSON Schema into a CRD's structural openAPIV3Schema: Kubernetes forbids
// `additionalProperties: false` beside `properties` and restricts what metadata may declare, so those are
// dropped (the webhook and `rtctl lint` enforce them with the full schema); everything else carries over.
type Json = null | boolean | number | string | Json[] | { [k: string]: Json };

function isObject(v: Json): v is { [k: string]: Json } {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function convert(node: Json, key: string | undefined): Json {
  if (Array.isArray(node)) return node.map((n) => convert(n, undefined));
  if (!isObject(node)) return node;
  const out: { [k: string]: Json } = {};
  for (const [k, v] of Object.entries(node)) {
    if (k === 'additionalProperties' && v === false) continue;
    if (k === 'properties' && isObject(v)) {
      const props: { [k: string]: Json } = {};
      for (const [pk, pv] of Object.entries(v)) {
        props[pk] = pk === 'metadata' && key === undefined ? { type: 'object' } : convert(pv, pk);
      }
      out[k] = props;
      continue;
    }
    out[k] = convert(v, k);
  }
  return out;
}

/** The structural openAPIV3Schema of a policy kind. */
export function toStructuralSchema(schema: object): Json {
  const root = convert(JSON.parse(JSON.stringify(schema)) as Json, undefined);
  if (isObject(root)) delete root['required'];
  if (isObject(root)) root['required'] = ['spec'];
  return root;
}
