// The schema split into one function per section (compiler/schema/validate.ts) accepts exactly what the schema
// as written accepts: every policy of the repository and the fixtures, then those policies mutated (fields
// removed, replaced by other values, unknown fields added), each against both kinds' schemas.
import assert from 'node:assert/strict';
import fc from 'fast-check';
import '../../support/property-seed.js';
import { PolicyKind } from '../../../compiler/ir/rule-set.js';
import { getSchemaValidators } from '../../../compiler/schema/validate.js';
import { mutation, mutate } from '../../support/mutate-json.js';
import { loadSeedPolicies } from '../../support/seed-policies.js';

const seeds = loadSeedPolicies();

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
