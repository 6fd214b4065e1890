// Locating findings is linear in their number (issue 12 item 8): before, each finding scanned the event list
// of its file, and 40 000 unknown keys took 34 s to lint on an idle machine. The bound here is mocha's own
// timeout (20 s), set explicitly: the linear locator takes about 1 s for this size on an idle machine and
// about 4 s on two loaded cores, so a return of the quadratic scan fails the test and machine noise does not.
// bench/lint-findings measures the time per size.
import assert from 'node:assert/strict';
import { lintTexts } from '../../../compiler/lint.js';
import { policyWithRelativePaths, policyWithUnknownKeys } from '../../support/many-findings.js';

/** The documented size: as many findings as the reproduction. */
const COUNT = 40_000;

describe('locating many findings (bounded size: 40 000 findings in one file)', function () {
  this.timeout(20_000);

  it('places 40 000 unknown keys of one mapping, each on its own line', () => {
    const { diagnostics } = lintTexts([{ file: 'keys.yaml', text: policyWithUnknownKeys(COUNT) }]);
    assert.equal(diagnostics.length, COUNT);
    const lines = new Set(diagnostics.map((d) => d.start?.line));
    assert.equal(lines.size, COUNT, 'every finding has its own line');
    const last = diagnostics.find((d) => d.pointer === `/spec/unknown${COUNT - 1}`);
    assert.equal(last?.start?.line, 7 + COUNT, 'the last key is on the last line');
  });

  it('places 40 000 relative paths of one list, each on its own line', () => {
    const { diagnostics } = lintTexts([{ file: 'paths.yaml', text: policyWithRelativePaths(COUNT) }]);
    assert.equal(diagnostics.length, COUNT);
    const last = diagnostics.find((d) => d.pointer === `/spec/file/matchPaths/${COUNT - 1}/path`);
    assert.equal(last?.start?.line, 8 + COUNT, 'the last item is on the last line');
  });
});
