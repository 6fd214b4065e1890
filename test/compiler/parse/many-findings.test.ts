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
/** Findings per document, within the schema's bounds (maxProperties 256 for a mapping, maxItems 1024 for a list). */
const KEYS_PER_DOCUMENT = 200;
const PATHS_PER_DOCUMENT = 1000;

/** The number of the last line of a text that ends in a newline. */
function lastLine(text: string): number {
  return text.split('\n').length - 1;
}

describe('locating many findings (bounded size: 40 000 findings in one file)', function () {
  this.timeout(20_000);

  it('places 40 000 unknown keys (200 per mapping), each on its own line', () => {
    const text = policyWithUnknownKeys(COUNT, KEYS_PER_DOCUMENT);
    const { diagnostics } = lintTexts([{ file: 'keys.yaml', text }]);
    assert.equal(diagnostics.length, COUNT);
    const lines = new Set(diagnostics.map((d) => d.start?.line));
    assert.equal(lines.size, COUNT, 'every finding has its own line');
    const last = diagnostics.find((d) => d.pointer === `/spec/unknown${COUNT - 1}`);
    assert.equal(last?.start?.line, lastLine(text), 'the last key is on the last line');
  });

  it('places 40 000 relative paths (1 000 per list), each on its own line', () => {
    const text = policyWithRelativePaths(COUNT, PATHS_PER_DOCUMENT);
    const { diagnostics } = lintTexts([{ file: 'paths.yaml', text }]);
    assert.equal(diagnostics.length, COUNT);
    const lines = new Set(diagnostics.map((d) => d.start?.line));
    assert.equal(lines.size, COUNT, 'every finding has its own line');
    const last = diagnostics.find(
      (d) => d.pointer === `/spec/file/matchPaths/${PATHS_PER_DOCUMENT - 1}/path`,
    );
    assert.ok(last, 'the last item of a document is reported');
    const maxLine = Math.max(...diagnostics.map((d) => d.start?.line ?? 0));
    assert.equal(maxLine, lastLine(text), 'the last item is on the last line');
  });
});
