// The CRD backend writes each policy's normalized manifest in one walk (emitNormalizedPolicy); it must be, byte
// for byte, the normalized object (normalizePolicy) through the YAML emitter: on every policy of the repository
// and the fixtures, and on those policies mutated (fields removed, replaced, unknown fields and items added,
// free-form maps, integer-like keys).
import assert from 'node:assert/strict';
import fc from 'fast-check';
import '../../../support/property-seed.js';
import { emitNormalizedPolicy, normalizePolicy } from '../../../../compiler/backends/crd/normalize-policy.js';
import { toYaml } from '../../../../compiler/emit/yaml-text.js';
import type { PolicyDocument } from '../../../../compiler/model/policy-document.js';
import { mutate, mutation } from '../../../support/mutate-json.js';
import { loadSeedPolicies } from '../../../support/seed-policies.js';

/** The document of an object, when it has what normalization reads (a metadata and a spec mapping). */
function documentOf(object: unknown): PolicyDocument | undefined {
  if (typeof object !== 'object' || object === null || Array.isArray(object)) return undefined;
  const o = object as Record<string, unknown>;
  const isMap = (v: unknown): boolean => typeof v === 'object' && v !== null && !Array.isArray(v);
  if (!isMap(o['metadata']) || !isMap(o['spec'])) return undefined;
  const kind = o['kind'] === 'RuntimeHostPolicy' ? 'RuntimeHostPolicy' : 'RuntimePolicy';
  return { kind, object, file: 'p.yaml', index: 0, line: 1 } as PolicyDocument;
}

function assertSame(object: unknown): boolean {
  const doc = documentOf(object);
  if (doc === undefined) return false;
  assert.equal(emitNormalizedPolicy(doc), toYaml(normalizePolicy(doc)), JSON.stringify(object));
  return true;
}

const seeds = loadSeedPolicies();

describe('crd backend: normalized manifests written in one walk', function () {
  // Thousands of generated cases: bounded by count, not by the time a loaded machine takes.
  this.timeout(120_000);

  it('are the normalized objects through the emitter, on every policy of the repository', () => {
    let checked = 0;
    for (const seed of seeds) if (assertSame(seed)) checked++;
    assert.ok(checked > 40, `${checked} policies`);
  });

  it('are the normalized objects through the emitter, on mutated policies', () => {
    let checked = 0;
    fc.assert(
      fc.property(
        fc.nat({ max: seeds.length - 1 }),
        fc.array(mutation, { minLength: 1, maxLength: 4 }),
        (i, mutations) => {
          if (assertSame(mutations.reduce((v, m) => mutate(v, m), seeds[i]))) checked++;
        },
      ),
      { numRuns: 4000 },
    );
    assert.ok(checked > 2000, `${checked} mutated policies`);
  });

  it('keeps the emitter order of integer-like and unnamed keys', () => {
    const object = {
      apiVersion: 'security.runtime.com/v1',
      kind: 'RuntimePolicy',
      metadata: { name: 'p', labels: { '10': 'a', '9': 'b', x: 'c' } },
      spec: {
        selector: { matchLabels: { '2': 'x', '10': 'y', a: 'z' } },
        process: { matchPaths: [{ path: '/a', '7': 1, extra: { '3': 1, b: 2 } }, {}], zz: 1 },
        '5': 'unnamed',
      },
    };
    assert.ok(assertSame(object));
  });
});
