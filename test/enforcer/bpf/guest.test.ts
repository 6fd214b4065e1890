// Host side of the BPF-LSM tests: the host kernel refuses LSM programs, so the in-guest test files
// (test/enforcer/bpf/in-guest/*.guest.ts) run inside a Debian 6.1 guest booted once under qemu TCG
// with the host's root shared read-only (test/guest/in-guest-suite.ts; the run starts when mocha starts, see
// test/support/root-hooks.ts). Each in-guest test result becomes one `it` here, so the host's mocha run
// counts them; a guest that fails to boot or to report fails this suite.
import assert from 'node:assert/strict';
import Mocha from 'mocha';
import { NativeArtifact, requireNativeArtifact } from '../../support/native.js';
import { requirePrereqs } from '../../support/prereq.js';
import {
  describeTimings,
  listGuestPrereqs,
  startInGuestSuite,
  type InGuestSuiteResult,
} from '../../guest/in-guest-suite.js';

describe('BPF-LSM data plane inside a guest kernel (qemu TCG, Debian 6.1)', function () {
  // Only catches a hung guest (the guest run has its own, shorter, limit).
  this.timeout(50 * 60_000);
  let result: InGuestSuiteResult | undefined;

  before(async function () {
    requirePrereqs(this, listGuestPrereqs());
    // The guest sees the repository read-only and runs the loader `npm run build:native` built here.
    requireNativeArtifact(this, NativeArtifact.bpfLoader);
    result = await startInGuestSuite();
    // In-guest tests print `[report] ...` lines (case counts, bench figures) for the host's log.
    for (const line of result.guest.stdout.split('\n'))
      if (line.startsWith('[report] ')) process.stdout.write(`    ${line}\n`);
    for (const line of describeTimings(result)) process.stdout.write(`    [report] ${line}\n`);
    const report = result.report;
    if (report === undefined) return;
    const suite = this.test?.parent;
    if (suite === undefined) throw new Error('no parent suite for the in-guest results');
    for (const t of report.passes) suite.addTest(new Mocha.Test(`[guest] ${t.fullTitle}`, () => undefined));
    for (const t of report.failures) {
      suite.addTest(
        new Mocha.Test(`[guest] ${t.fullTitle}`, () => {
          throw new Error(t.err?.stack ?? t.err?.message ?? 'failed in the guest');
        }),
      );
    }
    for (const t of report.pending) suite.addTest(new Mocha.Test(`[guest] ${t.fullTitle}`));
  });

  it('boots the guest and gets a mocha report back', () => {
    assert.ok(result !== undefined, 'guest did not run');
    assert.equal(result.reportError, '', result.reportError);
    const report = result.report;
    assert.ok(report !== undefined && report.passes.length + report.failures.length > 0, 'guest ran no test');
  });
});
