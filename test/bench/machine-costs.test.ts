// The benchmarks' machine calibration (bench/support/machine-costs.ts): the tool builds with the machine's C
// compiler and reports every figure, and a reply that is not the tool's is refused, never read as a figure.
import assert from 'node:assert/strict';
import { machineCosts, parseMachineCosts } from '../../bench/support/machine-costs.js';

describe('bench machine costs', () => {
  it('builds and measures: a bare system call costs less than a /proc link read and a wake-up round trip', function () {
    this.timeout(120_000);
    const costs = machineCosts();
    if ('error' in costs) assert.fail(costs.error);
    assert.equal(costs.rounds, 5);
    assert.ok(
      costs.syscallMicros > 0 && costs.syscallMicros < costs.procReadlinkMicros,
      JSON.stringify(costs),
    );
    assert.ok(costs.syscallMicros < costs.wakeRoundTripMicros, JSON.stringify(costs));
    assert.ok(costs.openCloseMicros > costs.syscallMicros, JSON.stringify(costs));
  });

  it('refuses a reply with a missing, zero or non-numeric figure', () => {
    const good = {
      syscallMicros: 0.1,
      procReadlinkMicros: 1.2,
      openCloseMicros: 2,
      wakeRoundTripMicros: 5,
      rounds: 5,
    };
    assert.deepEqual(parseMachineCosts(JSON.stringify(good)), good);
    for (const key of Object.keys(good)) {
      for (const bad of [undefined, 0, -1, 'fast', null]) {
        const reply = { ...good, [key]: bad };
        assert.throws(() => parseMachineCosts(JSON.stringify(reply)), new RegExp(key));
      }
    }
    assert.throws(() => parseMachineCosts('not json'));
  });
});
