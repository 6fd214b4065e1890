// The rule table built from prepared policies (each policy's records and rule order computed once per lowered
// policy object, and merged at each build) against the table built from scratch: the enforcer rebuilds the
// table at every policy change from snapshots that keep the objects of unchanged policies, so a build may
// reuse work of builds of other rule sets. Fixed seeds.
import assert from 'node:assert/strict';
import fc from 'fast-check';
import '../../support/property-seed.js';
import {
  compareRulePrecedence,
  mergeRanked,
  rankRule,
  sortByPrecedence,
  sortRanked,
  type PolicyRule,
} from '../../../compiler/decide/precedence.js';
import { isMatcherForOperation } from '../../../compiler/decide/match-rule.js';
import type { PolicyIR, RuleSet } from '../../../compiler/ir/rule-set.js';
import {
  buildRuleTableImage,
  createRuleTableRecords,
  orderRuleTable,
} from '../../../compiler/rule-table/build-rule-table.js';
import { arbAddressRuleSet, arbRuleSet } from '../decide/arbitrary-rule-set.js';

/** A copy of a policy sharing no object with it: a build of it cannot reuse anything prepared before. */
function fresh(policy: PolicyIR): PolicyIR {
  return JSON.parse(JSON.stringify(policy)) as PolicyIR;
}

/** The table's rules of some policies in their order, each policy's in its own order. */
function tableRules(policies: readonly PolicyIR[]): PolicyRule[][] {
  return policies.map((policy) =>
    policy.rules
      .filter((rule) => isMatcherForOperation(rule.matcher, rule.operation))
      .map((rule) => ({ policy, rule })),
  );
}

/** A pool of policies and a list of rule sets drawn from it (subsets, in any order), sharing the objects. */
const arbBuilds = fc
  .tuple(arbRuleSet, arbAddressRuleSet, arbRuleSet)
  .map(([a, b, c]) => [...a.policies, ...b.policies, ...c.policies])
  .chain((pool) =>
    fc.record({
      pool: fc.constant(pool),
      builds: fc.array(fc.shuffledSubarray(pool, { minLength: 0 }), { minLength: 2, maxLength: 6 }),
    }),
  );

describe('rule table built from prepared policies', () => {
  it('sortByPrecedence and the merge of sorted runs give the order of sorting by compareRulePrecedence', () => {
    fc.assert(
      fc.property(arbBuilds, ({ builds }) => {
        // With each policy twice (a copy after the original), every rule ties with its copy's: the stable
        // order puts the original's first.
        for (const policies of [...builds, ...builds.map((b) => [...b, ...b.map(fresh)])]) {
          const runs = tableRules(policies);
          const reference = runs.flat().sort(compareRulePrecedence);
          assert.deepEqual(sortByPrecedence(runs.flat()), reference);
          const merged = mergeRanked(runs.map((run) => sortRanked(run.map(rankRule)))).map((r) => r.item);
          assert.equal(merged.length, reference.length);
          merged.forEach((item, i) => {
            assert.equal(item.rule, reference[i]?.rule, `rule ${i} of ${merged.length}`);
            assert.equal(item.policy, reference[i]?.policy);
          });
        }
      }),
      { numRuns: 150, seed: 0x1b2d },
    );
  });

  it('successive builds sharing policy objects give the records and bytes of builds from fresh copies', () => {
    fc.assert(
      fc.property(arbBuilds, ({ pool, builds }) => {
        // Every policy of the pool prepared once, in a build of its own order, before the builds compared.
        buildRuleTableImage({ policies: pool });
        for (const policies of builds) {
          const shared: RuleSet = { policies };
          const copies: RuleSet = { policies: policies.map(fresh) };
          const warm = buildRuleTableImage(shared);
          const cold = buildRuleTableImage(copies);
          assert.deepEqual(warm.records, cold.records);
          assert.deepEqual(Buffer.from(warm.bytes), Buffer.from(cold.bytes));
          assert.deepEqual(createRuleTableRecords(shared), cold.records);
          const order = orderRuleTable(shared);
          assert.deepEqual(
            order.rules.map((r) => r.rule),
            tableRules(order.policies)
              .flat()
              .sort(compareRulePrecedence)
              .map((r) => r.rule),
          );
        }
      }),
      { numRuns: 150, seed: 0x1b2e },
    );
  });

  it('a policy whose index moves gets records with its new index', () => {
    fc.assert(
      fc.property(arbRuleSet, arbRuleSet, (a, b) => {
        const first = buildRuleTableImage({ policies: a.policies });
        const both = buildRuleTableImage({ policies: [...b.policies, ...a.policies] });
        const reference = buildRuleTableImage({ policies: [...b.policies, ...a.policies].map(fresh) });
        assert.deepEqual(both.records.rules, reference.records.rules);
        assert.deepEqual(
          buildRuleTableImage({ policies: a.policies }).records,
          first.records,
          'the first set again, after the second',
        );
      }),
      { numRuns: 100, seed: 0x1b2f },
    );
  });
});
