// Property: the oracle answers the same for the same input whatever the order of policies and rules.
import assert from 'node:assert/strict';
import fc from 'fast-check';
import '../../support/property-seed.js';
import { decideOperation } from '../../../compiler/decide/decide.js';
import type { RuleSet } from '../../../compiler/ir/rule-set.js';
import { arbScenario } from './arbitrary-rule-set.js';

function permute<T>(items: readonly T[], keys: readonly number[]): T[] {
  return items
    .map((item, i) => ({ item, key: keys[i % Math.max(keys.length, 1)] ?? 0, i }))
    .sort((a, b) => a.key - b.key || b.i - a.i)
    .map((x) => x.item);
}

describe('decision oracle: order independence (fast-check)', () => {
  it('gives the same decision when policies and their rules are reordered', () => {
    fc.assert(
      fc.property(
        arbScenario,
        fc.array(fc.integer({ min: 0, max: 100 }), { minLength: 1, maxLength: 10 }),
        ({ ruleSet, workload, operations, postures }, keys) => {
          const shuffled: RuleSet = {
            policies: permute(ruleSet.policies, keys).map((p) => ({
              ...p,
              rules: permute(p.rules, [...keys].reverse()),
            })),
          };
          for (const op of operations) {
            assert.deepEqual(
              decideOperation(shuffled, workload, op, postures),
              decideOperation(ruleSet, workload, op, postures),
            );
          }
        },
      ),
      { numRuns: 400 },
    );
  });
});
