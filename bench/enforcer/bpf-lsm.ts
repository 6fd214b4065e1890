// BPF-LSM benchmark (host entry): builds the native artifacts, boots the test guest once and runs
// bench/enforcer/bpf-in-guest.ts inside it; prints its JSON result with the guest's boot time.
//   node --import tsx bench/enforcer/bpf-lsm.ts [--icount [shift]]
// --icount: the guest runs under qemu's instruction counting (single-threaded TCG, one vCPU, -icount
// shift=N,sleep=off,align=off; shift 0 unless given): its clocks advance 2^shift ns per guest instruction,
// so the ratios are instruction-count ratios, independent of the host's load, and blind to cache, TLB and
// branch effects (every instruction costs the same). The JSON says `clock: "icount"` and the shift.
import { execFileSync } from 'node:child_process';
import { loadavg } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { MAX_ICOUNT_SHIFT, runInGuest, type GuestIcount } from '../../test/guest/guest-vm.js';

/** `--icount [shift]` from the command line (shift 0 when the next word is not a number), or undefined. */
function icountOption(argv: readonly string[]): GuestIcount | undefined {
  const at = argv.indexOf('--icount');
  const unknown = argv.filter((a, i) => a !== '--icount' && !(i === at + 1 && /^\d+$/.test(a)));
  if (unknown.length > 0)
    throw new Error(`unknown arguments: ${unknown.join(' ')} (usage: [--icount [shift]])`);
  if (at < 0) return undefined;
  const next = argv[at + 1];
  const shift = next !== undefined && /^\d+$/.test(next) ? Number(next) : 0;
  if (shift > MAX_ICOUNT_SHIFT) throw new Error(`--icount shift must be 0-${MAX_ICOUNT_SHIFT}, got ${shift}`);
  return { shift };
}
const icount = icountOption(process.argv.slice(2));

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
execFileSync('npm', ['run', '--silent', 'build:native'], {
  cwd: repoRoot,
  stdio: ['ignore', 'ignore', 'inherit'],
});
const loadAtStart = loadavg();
const result = await runInGuest({
  repoRoot,
  command: 'node --import tsx bench/enforcer/bpf-in-guest.ts',
  // Single-threaded TCG with instruction counting runs the guest more slowly than multi-threaded TCG.
  timeoutMs: (icount === undefined ? 20 : 40) * 60_000,
  ...(icount === undefined ? {} : { icount, env: { RTCTL_BENCH_ICOUNT_SHIFT: String(icount.shift) } }),
});
const line = result.stdout.split('\n').find((l) => l.startsWith('{'));
if (result.exitCode !== 0 || line === undefined) {
  process.stderr.write(
    `bench failed in the guest (exit ${result.exitCode}):\n${result.stderr.slice(-3000)}\n`,
  );
  process.exit(1);
}
const parsed = JSON.parse(line) as Record<string, unknown>;
process.stdout.write(
  `${JSON.stringify(
    {
      ...parsed,
      // host: the guest's clocks follow the host's (TCG timings swing with its load); icount: they count
      // guest instructions, 2^icountShift ns each (bench/enforcer/bpf-lsm.ts --icount).
      clock: icount === undefined ? 'host' : 'icount',
      ...(icount === undefined ? {} : { icountShift: icount.shift }),
      guestBootMs: result.bootMs,
      guestTotalMs: result.totalMs,
      // The host's load averages (1, 5, 15 min) when the run started and ended: TCG timings swing with it.
      hostLoadAverage: { start: loadAtStart, end: loadavg() },
    },
    null,
    2,
  )}\n`,
);
