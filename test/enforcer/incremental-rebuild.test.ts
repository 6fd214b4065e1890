// Incremental rebuild on a policy change (issue 13): the directory source lints only the files whose text
// changed (compiler/front-end/lint-texts-incremental.ts) and the enforcer's node-state builder rebuilds the
// table only for a new rule set and selects workloads only against policies it has not seen. Property: over
// any sequence of edits, each incremental result equals the one built from scratch (lintTexts, buildSnapshot,
// buildNodeState), byte for byte where bytes are concerned.
import assert from 'node:assert/strict';
import fc from 'fast-check';
import '../support/property-seed.js';
import { lintTexts } from '../../compiler/lint.js';
import { createIncrementalLinter } from '../../compiler/front-end/lint-texts-incremental.js';
import { buildNodeState, createNodeStateBuilder } from '../../enforcer/node-state.js';
import { buildSnapshot, createSnapshotBuilder } from '../../enforcer/policy-snapshot.js';
import { describeContainer, describeHost, type Workload } from '../../enforcer/workload.js';

const FILES = ['a.yaml', 'b.yaml', 'c.yaml', 'sub/d.yaml'];

function policy(name: string, ns: string, app: string, path: string, action: string): string {
  return `apiVersion: security.runtime.com/v1
kind: RuntimePolicy
metadata:
  name: ${name}
  namespace: ${ns}
spec:
  selector:
    matchLabels:
      app: ${app}
  process:
    matchPaths:
    - path: ${path}
  file:
    matchDirectories:
    - dir: /data/${name}/
      recursive: true
  action: ${action}
`;
}

/** Texts a file may hold: valid policies (names repeat across files: cross findings), a host policy, a
 * Namespace with postures, a policy with a schema error, YAML that does not parse, an empty file. */
const textArb: fc.Arbitrary<string> = fc.oneof(
  fc
    .tuple(
      fc.constantFrom('p1', 'p2', 'p3'),
      fc.constantFrom('ns-a', 'ns-b'),
      fc.constantFrom('web', 'db'),
      fc.constantFrom('/bin/sleep', '/usr/bin/curl', '/bin/sh'),
      fc.constantFrom('Block', 'Audit', 'Allow'),
    )
    .map(([n, ns, app, p, a]) => policy(n, ns, app, p, a)),
  fc
    .tuple(fc.constantFrom('p1', 'p4'), fc.constantFrom('web', 'db'))
    .map(
      ([n, app]) =>
        `${policy(n, 'ns-a', app, '/bin/cat', 'Block')}---\n${policy('p5', 'ns-b', app, '/bin/ls', 'Audit')}`,
    ),
  fc.constant(`apiVersion: security.runtime.com/v1
kind: RuntimeHostPolicy
metadata:
  name: host-block
spec:
  nodeSelector:
    matchLabels:
      kubernetes.io/hostname: node-1
  process:
    matchPaths:
    - path: /usr/bin/diff
  action: Block
`),
  fc
    .tuple(fc.constantFrom('ns-a', 'ns-b'), fc.constantFrom('audit', 'block', 'nonsense'))
    .map(
      ([ns, p]) =>
        `apiVersion: v1\nkind: Namespace\nmetadata:\n  name: ${ns}\n  annotations:\n    runtime-file-posture: ${p}\n`,
    ),
  fc.constant('apiVersion: security.runtime.com/v1\nkind: RuntimePolicy\nmetadata:\n  name: broken\n'),
  fc.constant('apiVersion: [unclosed\n  : :\n'),
  fc.constant(''),
);

/** One edit: a file gets a text, or is removed (undefined). */
const editArb = fc.tuple(fc.constantFrom(...FILES), fc.option(textArb, { nil: undefined }));

const WORKLOADS: Workload[] = [
  describeHost(),
  ...['web', 'db', 'other'].flatMap((app) =>
    ['ns-a', 'ns-b'].map((ns) =>
      describeContainer({
        id: `${app}-${ns}`,
        labels: { 'io.kubernetes.pod.namespace': ns, 'io.kubernetes.pod.name': `${app}-pod`, app },
        image: 'i',
        pid: 100,
        cgroupPath: `/k8s.io/${app}-${ns}`,
      }),
    ),
  ),
];

function sourcesOf(files: ReadonlyMap<string, string>): { file: string; text: string }[] {
  return [...files.keys()].sort().map((file) => ({ file, text: files.get(file) ?? '' }));
}

/**
 * A value with every function replaced by its name: two lints of the same text build their own locator
 * closures (positions are computed on demand from the text), which deepStrictEqual would compare by reference.
 * Objects with a JSON form are compared by it; everything else (maps, sets, own fields) as it is.
 */
function comparable(value: unknown, seen = new Map<object, unknown>()): unknown {
  if (typeof value === 'function') return `[function ${value.name}]`;
  if (value === null || typeof value !== 'object') return value;
  const done = seen.get(value);
  if (done !== undefined) return done;
  if (value instanceof Uint8Array) return value;
  if (Array.isArray(value)) {
    const out: unknown[] = [];
    seen.set(value, out);
    for (const v of value) out.push(comparable(v, seen));
    return out;
  }
  if (value instanceof Map) {
    const out = new Map<unknown, unknown>();
    seen.set(value, out);
    for (const [k, v] of value) out.set(comparable(k, seen), comparable(v, seen));
    return out;
  }
  if (value instanceof Set) {
    const out = new Set<unknown>();
    seen.set(value, out);
    for (const v of value) out.add(comparable(v, seen));
    return out;
  }
  // A class with its own JSON form (lazy source locations: their memo of line and column is filled on first use).
  const toJSON = (value as { toJSON?: unknown }).toJSON;
  if (typeof toJSON === 'function') return comparable(toJSON.call(value), seen);
  const out: Record<string, unknown> = { '[class]': value.constructor?.name };
  seen.set(value, out);
  for (const [k, v] of Object.entries(value)) out[k] = comparable(v, seen);
  return out;
}

describe('incremental rebuild equals a full one (property, fixed seed)', () => {
  it('lint of the changed files only gives lintTexts over all of them, and relints only what changed', () => {
    fc.assert(
      fc.property(fc.array(editArb, { minLength: 1, maxLength: 12 }), (edits) => {
        const linter = createIncrementalLinter();
        const files = new Map<string, string>();
        let previous = new Map<string, string>();
        for (const [file, text] of edits) {
          if (text === undefined) files.delete(file);
          else files.set(file, text);
          const sources = sourcesOf(files);
          assert.deepStrictEqual(comparable(linter.lint(sources)), comparable(lintTexts(sources)));
          const changed = sources.filter((s) => previous.get(s.file) !== s.text).map((s) => s.file);
          assert.deepEqual([...linter.lastRelinted], changed, 'only the files whose text changed');
          previous = new Map(files);
        }
      }),
      { numRuns: 60 },
    );
  });

  it('the node state of successive snapshots and workload lists equals buildNodeState of each', () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.tuple(
            editArb,
            fc.subarray(WORKLOADS, { minLength: 0 }),
            fc.constantFrom({}, { 'kubernetes.io/hostname': 'node-1' }),
            fc.boolean(),
          ),
          { minLength: 1, maxLength: 10 },
        ),
        (steps) => {
          const snapshots = createSnapshotBuilder();
          const nodeStates = createNodeStateBuilder();
          const files = new Map<string, string>();
          let snapshot = snapshots([]);
          let generation = 0;
          for (const [[file, text], workloads, nodeLabels, policiesChanged] of steps) {
            // Some steps are a workload poll only: the same snapshot (the same rule set object) again.
            if (policiesChanged) {
              if (text === undefined) files.delete(file);
              else files.set(file, text);
              snapshot = snapshots(sourcesOf(files));
              assert.deepStrictEqual(comparable(snapshot), comparable(buildSnapshot(sourcesOf(files))));
            }
            generation++;
            const inputs = {
              ruleSet: snapshot.ruleSet,
              workloads,
              postures: snapshot.postures,
              nodeLabels,
            };
            const incremental = nodeStates(inputs, generation);
            const full = buildNodeState(inputs, generation);
            assert.equal(incremental.fingerprint, full.fingerprint);
            assert.deepStrictEqual(comparable(incremental.state.workloads), comparable(full.state.workloads));
            assert.deepStrictEqual(
              Buffer.from(incremental.state.table.bytes),
              Buffer.from(full.state.table.bytes),
            );
            assert.deepStrictEqual(comparable(incremental.policies), comparable(full.policies));
            assert.deepStrictEqual([...incremental.workloads.keys()], [...full.workloads.keys()]);
          }
        },
      ),
      { numRuns: 60 },
    );
  });

  it('a workload poll with the same rule set builds no table', () => {
    const snapshot = buildSnapshot([
      { file: 'a.yaml', text: policy('p1', 'ns-a', 'web', '/bin/sh', 'Block') },
    ]);
    const build = createNodeStateBuilder();
    const inputs = {
      ruleSet: snapshot.ruleSet,
      workloads: WORKLOADS,
      postures: snapshot.postures,
      nodeLabels: {},
    };
    const first = build(inputs, 1);
    const poll = build({ ...inputs, workloads: WORKLOADS.slice(0, 3) }, 2);
    assert.equal(poll.state.table, first.state.table, 'the same table image object');
    const changed = buildSnapshot([
      { file: 'a.yaml', text: policy('p1', 'ns-a', 'web', '/bin/ls', 'Block') },
    ]);
    const next = build({ ...inputs, ruleSet: changed.ruleSet }, 3);
    assert.notEqual(next.state.table, first.state.table, 'a new rule set: a new table');
    assert.notDeepEqual(Buffer.from(next.state.table.bytes), Buffer.from(first.state.table.bytes));
  });
});
