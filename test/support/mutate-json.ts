// Random mutations of JSON values for differential tests: a field removed, replaced by another value, or an
// unknown field (or list item) added, at a node chosen among all nodes of the value.
import fc from 'fast-check';
import './property-seed.js';

type Key = string | number;

/** Every path to a node of a JSON value (the root is []). */
function pathsOf(value: unknown, prefix: Key[] = []): Key[][] {
  const out: Key[][] = [prefix];
  if (Array.isArray(value)) value.forEach((v, i) => out.push(...pathsOf(v, [...prefix, i])));
  else if (typeof value === 'object' && value !== null)
    for (const [k, v] of Object.entries(value)) out.push(...pathsOf(v, [...prefix, k]));
  return out;
}

function nodeAt(root: unknown, at: readonly Key[]): unknown {
  let node = root;
  for (const k of at) node = (node as Record<Key, unknown>)[k];
  return node;
}

/** One mutation: what to do, at which node (an index into the nodes, modulo their count), with what. */
export interface Mutation {
  op: 'delete' | 'replace' | 'add';
  at: number;
  key: string;
  value: unknown;
}

/** Applies a mutation to a copy; the path is chosen among the nodes of the value as it is then. */
export function mutate(value: unknown, m: Mutation): unknown {
  const root = structuredClone(value);
  const paths = pathsOf(root);
  const at = paths[m.at % paths.length] ?? [];
  if (at.length === 0) return m.op === 'replace' ? m.value : root;
  const parent = nodeAt(root, at.slice(0, -1)) as Record<Key, unknown> | unknown[];
  const last = at[at.length - 1] as Key;
  const node = nodeAt(root, at);
  if (m.op === 'delete') {
    if (Array.isArray(parent)) parent.splice(Number(last), 1);
    else delete parent[last];
  } else if (m.op === 'replace') (parent as Record<Key, unknown>)[last] = m.value;
  else if (Array.isArray(node)) node.push(m.value);
  else if (typeof node === 'object' && node !== null) (node as Record<string, unknown>)[m.key] = m.value;
  else (parent as Record<Key, unknown>)[last] = m.value;
  return root;
}

const values = fc.oneof(
  fc.jsonValue({ maxDepth: 2 }),
  fc.constantFrom(
    'Block',
    'Audit',
    'Allow',
    'block',
    '/etc/app/',
    '/etc/app',
    'relative/path',
    'net_raw',
    'CAP_NET_RAW',
    'tcp',
    'bogus',
    '10.0.0.0/8',
    0,
    5,
    11,
    -1,
    2 ** 31,
    1.5,
    true,
    false,
    null,
    [],
    {},
    [{ path: '/bin/sh' }],
    { matchLabels: {} },
  ),
);
const keys = fc.constantFrom(
  'action',
  'severity',
  'path',
  'dir',
  'execname',
  'recursive',
  'readOnly',
  'ownerOnly',
  'fromSource',
  'matchPaths',
  'matchDirectories',
  'selector',
  'nodeSelector',
  'tags',
  'message',
  'unknownField',
  'presets',
);
/** A random mutation. */
export const mutation = fc.record({
  op: fc.constantFrom('delete', 'replace', 'add'),
  at: fc.nat(),
  key: keys,
  value: values,
}) as fc.Arbitrary<Mutation>;
