// Mocha reporter for the in-guest run: mocha's JSON report (written to --reporter-option output=...), plus the
// wall time of each top-level suite, hooks included, written to $RTCTL_GUEST_OUT/timings.json, so the host can
// say where the guest's time goes.
'use strict';
const { writeFileSync } = require('node:fs');
const path = require('node:path');
const Mocha = require('mocha');
const { EVENT_SUITE_BEGIN, EVENT_SUITE_END, EVENT_RUN_END } = Mocha.Runner.constants;

class TimedJsonReporter extends Mocha.reporters.JSON {
  constructor(runner, options) {
    super(runner, options);
    const started = new Map();
    const timings = [];
    runner.on(EVENT_SUITE_BEGIN, (suite) => {
      if (suite.parent !== undefined && suite.parent.root) started.set(suite, Date.now());
    });
    runner.on(EVENT_SUITE_END, (suite) => {
      const begin = started.get(suite);
      if (begin === undefined) return;
      timings.push({ file: path.basename(suite.file ?? ''), suite: suite.title, ms: Date.now() - begin });
    });
    runner.once(EVENT_RUN_END, () => {
      const out = process.env.RTCTL_GUEST_OUT;
      if (out !== undefined && out !== '')
        writeFileSync(path.join(out, 'timings.json'), JSON.stringify(timings));
    });
  }
}
module.exports = TimedJsonReporter;
