// sortPolicies puts policies in buckets by kind and namespace and sorts each by name: it must give exactly the
// order of one stable sort by comparePolicies' key (kind, namespace, name), equal keys in input order, on
// random policy sets with few kinds, namespaces and names (so that every field ties often).
import assert from 'node:assert/strict';
import fc from 'fast-check';
import '../../support/property-seed.js';
import type { PolicyIR } from '../../../compiler/ir/rule-set.js';
import { comparePolicies, sortPolicies } from '../../../compiler/lower/lower.js';

/** A policy with only what the order reads, and its input position (to see the order of equal keys). */
function policy(kind: string, namespace: string, name: string, position: number): PolicyIR {
  return { kind, namespace, name, apparmor: String(position) } as PolicyIR;
}

const word = fc.constantFrom('', 'a', 'b', 'a-b', 'ab', 'B', 'team-1', 'team-10', 'team-2', 'é', 'z.y');
const policies = fc
  .array(fc.tuple(fc.constantFrom('RuntimePolicy', 'RuntimeHostPolicy'), word, word), { maxLength: 60 })
  .map((list) =>
    list.map(([kind, ns, name], i) => policy(kind, kind === 'RuntimePolicy' ? ns : '', name, i)),
  );

describe('lower: sortPolicies', () => {
  it('gives the order of one stable sort by kind, namespace and name', () => {
    fc.assert(
      fc.property(policies, (list) => {
        const expected = [...list].sort(comparePolicies).map((p) => p.apparmor);
        assert.deepEqual(
          sortPolicies(list).map((p) => p.apparmor),
          expected,
        );
      }),
      { numRuns: 3000 },
    );
  });

  it('leaves its input as it was', () => {
    const list = [policy('RuntimePolicy', 'b', 'x', 0), policy('RuntimeHostPolicy', '', 'y', 1)];
    const copy = [...list];
    sortPolicies(list);
    assert.deepEqual(list, copy);
  });
});
