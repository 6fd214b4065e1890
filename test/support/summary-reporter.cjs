// Mocha reporter: the spec reporter's output, then one closing line `N passed, N failed[, N skipped]`
// that CI reads (mocha's own summary is not read there).
'use strict';
const Mocha = require('mocha');
const { Spec } = Mocha.reporters;
const { EVENT_RUN_END } = Mocha.Runner.constants;

class SummaryReporter extends Spec {
  constructor(runner, options) {
    super(runner, options);
    runner.once(EVENT_RUN_END, () => {
      const s = runner.stats ?? { passes: 0, failures: 0, pending: 0 };
      const parts = [`${s.passes} passed`, `${s.failures} failed`];
      if (s.pending > 0) parts.push(`${s.pending} skipped`);
      // Printed after the spec reporter's epilogue.
      process.stdout.write('\n' + parts.join(', ') + '\n');
    });
  }
}
module.exports = SummaryReporter;
