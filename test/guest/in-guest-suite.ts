// The one guest boot of a test run: boots the qemu guest once (the BPF loader comes prebuilt from
// `npm run build:native`) and runs every in-guest
// test file (test/enforcer/bpf/in-guest/*.guest.ts) inside it with mocha, then reads back mocha's JSON report
// and the time of each file. Memoised: the root hook (test/support/root-hooks.ts) starts it when the run begins,
// so the guest works while the host runs its other tests, and test/enforcer/bpf/guest.test.ts awaits the same
// run and turns each in-guest result into a host test.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { hasCommand, isRoot } from '../support/prereq.js';
import { REPO_ROOT } from '../support/paths.js';
import { quoteShell, runInGuest, type GuestResult } from './guest-vm.js';

/** The in-guest test files' folder, relative to the repository. */
const IN_GUEST_DIR = path.join('test', 'enforcer', 'bpf', 'in-guest');

/** Kill the guest after this long: catches a hung guest only (a TCG guest on two busy cores is slow). */
const GUEST_TIMEOUT_MS = 45 * 60_000;

/** What the guest run needs on the host, as [ok, reason] pairs for requirePrereqs. */
export function listGuestPrereqs(): ReadonlyArray<readonly [boolean, string]> {
  return [
    [isRoot(), 'root (BPF, qemu with 9p as root)'],
    [hasCommand('qemu-system-x86_64'), 'qemu-system-x86_64 (Debian qemu-system-x86)'],
    [hasCommand('busybox'), 'busybox (Debian busybox-static)'],
    [hasCommand('cpio'), 'cpio'],
  ];
}

/** One test of mocha's JSON report. */
export interface ReportedTest {
  fullTitle: string;
  file?: string;
  duration?: number;
  err?: { message?: string; stack?: string };
}

/** Mocha's JSON report. */
export interface MochaJsonReport {
  stats: { tests: number; passes: number; failures: number; pending: number };
  passes: ReportedTest[];
  failures: ReportedTest[];
  pending: ReportedTest[];
}

/** Wall time of one top-level in-guest suite, hooks included. */
export interface SuiteTiming {
  file: string;
  suite: string;
  ms: number;
}

/** The outcome of the guest run: the report, or why there is none. */
export interface InGuestSuiteResult {
  guest: GuestResult;
  report: MochaJsonReport | undefined;
  reportError: string;
  timings: SuiteTiming[];
}

function isReport(value: unknown): value is MochaJsonReport {
  if (typeof value !== 'object' || value === null) return false;
  const r = value as Record<string, unknown>;
  return Array.isArray(r['passes']) && Array.isArray(r['failures']) && Array.isArray(r['pending']);
}

function isTimings(value: unknown): value is SuiteTiming[] {
  return Array.isArray(value) && value.every((t) => typeof t === 'object' && t !== null && 'ms' in t);
}

/** In-guest files to run: all of them, or those named (comma-separated basenames) in RTCTL_GUEST_FILES. */
export function selectGuestFiles(): string[] {
  const only = (process.env['RTCTL_GUEST_FILES'] ?? '').split(',').filter((s) => s !== '');
  return readdirSync(path.join(REPO_ROOT, IN_GUEST_DIR))
    .filter((f) => f.endsWith('.guest.ts'))
    .filter((f) => only.length === 0 || only.some((o) => f.startsWith(o)))
    .sort()
    .map((f) => path.join(IN_GUEST_DIR, f));
}

async function runSuite(): Promise<InGuestSuiteResult> {
  const command = [
    'node --import tsx node_modules/mocha/bin/mocha.js --no-config --exit --timeout 300000',
    '--reporter test/guest/timed-json-reporter.cjs --reporter-option "output=$RTCTL_GUEST_OUT/report.json"',
    ...selectGuestFiles().map(quoteShell),
  ].join(' ');
  const guest = await runInGuest({ repoRoot: REPO_ROOT, command, timeoutMs: GUEST_TIMEOUT_MS });
  const read = (name: string): unknown => {
    const file = path.join(guest.outDir, name);
    return existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as unknown) : undefined;
  };
  const timingsValue = read('timings.json');
  const timings = isTimings(timingsValue) ? timingsValue : [];
  const parsed = read('report.json');
  if (parsed === undefined) {
    const reportError = `guest wrote no report (exit ${guest.exitCode})\nstderr:\n${guest.stderr.slice(-3000)}`;
    return { guest, report: undefined, reportError, timings };
  }
  if (!isReport(parsed))
    return {
      guest,
      report: undefined,
      reportError: 'guest report is not a mocha JSON report',
      timings,
    };
  return { guest, report: parsed, reportError: '', timings };
}

let running: Promise<InGuestSuiteResult> | undefined;

/** Starts the guest run, or returns the one already started. */
export function startInGuestSuite(): Promise<InGuestSuiteResult> {
  running ??= runSuite();
  return running;
}

/** Lines for the host's log: where the guest's time went. */
export function describeTimings(result: InGuestSuiteResult): string[] {
  const s = (ms: number): string => `${(ms / 1000).toFixed(1)} s`;
  return [
    `guest: boot ${s(result.guest.bootMs)}, total ${s(result.guest.totalMs)} (one boot for ${result.timings.length} suites)`,
    ...result.timings.map((t) => `guest suite ${t.file}: ${s(t.ms)} (${t.suite})`),
  ];
}
