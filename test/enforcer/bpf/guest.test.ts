// Host side of the BPF-LSM tests: the host kernel refuses LSM programs, so the in-guest test files
// (test/enforcer/bpf/in-guest/*.guest.ts) run inside a Debian 6.1 guest booted once under qemu TCG
// with the host's root shared read-only. Each in-guest test result becomes one `it` here, so the
// host's mocha run counts them; a guest that fails to boot or to report fails this suite.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import Mocha from 'mocha';
import { NativeArtifact, requireNativeArtifact } from '../../support/native.js';
import { hasCommand, isRoot, requirePrereqs } from '../../support/prereq.js';
import { quoteShell, runInGuest, type GuestResult } from '../../guest/guest-vm.js';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const inGuestDir = path.join(repoRoot, 'test', 'enforcer', 'bpf', 'in-guest');

/** One test of mocha's JSON report. */
interface ReportedTest {
  fullTitle: string;
  duration?: number;
  err?: { message?: string; stack?: string };
}
interface MochaJsonReport {
  stats: { tests: number; passes: number; failures: number; pending: number };
  passes: ReportedTest[];
  failures: ReportedTest[];
  pending: ReportedTest[];
}

function isReport(value: unknown): value is MochaJsonReport {
  if (typeof value !== 'object' || value === null) return false;
  const r = value as Record<string, unknown>;
  return Array.isArray(r['passes']) && Array.isArray(r['failures']) && Array.isArray(r['pending']);
}

/** In-guest files to run: all of them, or those named (comma-separated basenames) in RTCTL_GUEST_FILES. */
function selectGuestFiles(): string[] {
  const only = (process.env['RTCTL_GUEST_FILES'] ?? '').split(',').filter((s) => s !== '');
  return readdirSync(inGuestDir)
    .filter((f) => f.endsWith('.guest.ts'))
    .filter((f) => only.length === 0 || only.some((o) => f.startsWith(o)))
    .sort()
    .map((f) => path.join('test', 'enforcer', 'bpf', 'in-guest', f));
}

describe('BPF-LSM data plane inside a guest kernel (qemu TCG, Debian 6.1)', function () {
  this.timeout(20 * 60_000);
  let result: GuestResult | undefined;
  let report: MochaJsonReport | undefined;
  let reportError = '';

  before(async function () {
    requirePrereqs(this, [
      [isRoot(), 'root (BPF, qemu with 9p as root)'],
      [hasCommand('qemu-system-x86_64'), 'qemu-system-x86_64 (Debian qemu-system-x86)'],
      [hasCommand('busybox'), 'busybox (Debian busybox-static)'],
      [hasCommand('cpio'), 'cpio'],
    ]);
    // The guest sees the repository read-only and runs the loader `npm run build:native` built here.
    requireNativeArtifact(this, NativeArtifact.bpfLoader);
    const files = selectGuestFiles();
    const command = [
      'node --import tsx node_modules/mocha/bin/mocha.js --no-config --exit --timeout 300000',
      '--reporter json --reporter-option "output=$RTCTL_GUEST_OUT/report.json"',
      ...files.map(quoteShell),
    ].join(' ');
    result = await runInGuest({ repoRoot, command, timeoutMs: 18 * 60_000 });
    // In-guest tests print `[report] ...` lines (case counts, bench figures) for the host's log.
    for (const line of result.stdout.split('\n'))
      if (line.startsWith('[report] ')) process.stdout.write(`    ${line}\n`);
    const reportFile = path.join(result.outDir, 'report.json');
    if (!existsSync(reportFile)) {
      reportError = `guest wrote no report (exit ${result.exitCode})\nstderr:\n${result.stderr.slice(-3000)}`;
      return;
    }
    const parsed: unknown = JSON.parse(readFileSync(reportFile, 'utf8'));
    if (!isReport(parsed)) {
      reportError = 'guest report is not a mocha JSON report';
      return;
    }
    report = parsed;
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
    assert.equal(reportError, '', reportError);
    assert.ok(report !== undefined && report.passes.length + report.failures.length > 0, 'guest ran no test');
  });
});
