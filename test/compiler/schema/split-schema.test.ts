// The schema split into one function per section (compiler/schema/validate.ts) accepts exactly what the schema
// as written accepts: every policy of the repository and the fixtures, then those policies mutated (fields
// removed, replaced by other values, unknown fields added), each against both kinds' schemas.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import fc from 'fast-check';
import { loadAll } from 'js-yaml';
import '../../support/property-seed.js';
import { generateCorpus } from '../../../bench/compile/generate-corpus.js';
import { PolicyKind } from '../../../compiler/ir/rule-set.js';
import { getSchemaValidators } from '../../../compiler/schema/validate.js';
import { REPO_ROOT } from '../../support/paths.js';

function yamlFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = path.join(dir, name);
    return statSync(p).isDirectory() ? yamlFiles(p) : /\.ya?ml$/.test(name) ? [p] : [];
  });
}

function policiesOf(text: string): unknown[] {
  try {
    return loadAll(text).filter(
      (d) =>
        typeof d === 'object' &&
        d !== null &&
        ((d as { kind?: unknown }).kind === PolicyKind.RuntimePolicy ||
          (d as { kind?: unknown }).kind === PolicyKind.RuntimeHostPolicy),
    );
  } catch {
    return [];
  }
}

const seeds = [
  ...['policies', 'test/fixtures/compiler', 'test/fixtures/conformance'].flatMap((d) =>
    yamlFiles(path.join(REPO_ROOT, d)).flatMap((f) => policiesOf(readFileSync(f, 'utf8'))),
  ),
  ...generateCorpus(40, 4).flatMap((s) => policiesOf(s.text)),
];

/** Both verdicts of both kinds' validators on one object, as text for a readable failure. */
function verdicts(object: unknown): { split: string; asWritten: string } {
  const split: boolean[] = [];
  const asWritten: boolean[] = [];
  for (const kind of [PolicyKind.RuntimePolicy, PolicyKind.RuntimeHostPolicy]) {
    const v = getSchemaValidators(kind);
    split.push(v.check(object));
    asWritten.push(v.first(object));
  }
  return { split: split.join(','), asWritten: asWritten.join(',') };
}

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

interface Mutation {
  op: 'delete' | 'replace' | 'add';
  at: number;
  key: string;
  value: unknown;
}

/** Applies a mutation to a copy; the path is chosen among the nodes of the value as it is then. */
function mutate(value: unknown, m: Mutation): unknown {
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
const mutation = fc.record({
  op: fc.constantFrom('delete', 'replace', 'add'),
  at: fc.nat(),
  key: keys,
  value: values,
}) as fc.Arbitrary<Mutation>;

describe('schema split into functions per section', function () {
  // Thousands of generated cases: bounded by count, not by the time a loaded machine takes.
  this.timeout(120_000);

  it('has policies to start from', () => {
    assert.ok(seeds.length > 40, `${seeds.length} seed policies`);
  });

  it('gives the verdict of the schema as written on every policy of the repository and the fixtures', () => {
    let rejected = 0;
    for (const seed of seeds) {
      const v = verdicts(seed);
      assert.equal(v.split, v.asWritten, JSON.stringify(seed));
      if (v.asWritten !== 'true,false' && v.asWritten !== 'false,true') rejected++;
    }
    // The fixtures include schema errors: both verdicts false on some policies.
    assert.ok(rejected > 0);
  });

  it('gives the verdict of the schema as written on mutated policies', () => {
    let accepted = 0;
    let runs = 0;
    fc.assert(
      fc.property(
        fc.nat({ max: seeds.length - 1 }),
        fc.array(mutation, { minLength: 1, maxLength: 3 }),
        (i, mutations) => {
          const object = mutations.reduce((v, m) => mutate(v, m), seeds[i]);
          const v = verdicts(object);
          assert.equal(v.split, v.asWritten, JSON.stringify(object));
          runs++;
          if (v.asWritten !== 'false,false') accepted++;
        },
      ),
      { numRuns: 4000 },
    );
    // Both outcomes occur: the mutations do not only break policies.
    assert.ok(accepted > runs / 20 && accepted < runs, `${accepted} of ${runs} accepted`);
  });
});
