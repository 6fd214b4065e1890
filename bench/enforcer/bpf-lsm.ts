// BPF-LSM benchmark (host entry): builds the native artifacts, boots the test guest once and runs
// bench/enforcer/bpf-in-guest.ts inside it; prints its JSON result with the guest's boot time.
//   node --import tsx bench/enforcer/bpf-lsm.ts
import { execFileSync } from 'node:child_process';
import { loadavg } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { runInGuest } from '../../test/guest/guest-vm.js';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
execFileSync('npm', ['run', '--silent', 'build:native'], {
  cwd: repoRoot,
  stdio: ['ignore', 'ignore', 'inherit'],
});
const loadAtStart = loadavg();
const result = await runInGuest({
  repoRoot,
  command: 'node --import tsx bench/enforcer/bpf-in-guest.ts',
  timeoutMs: 20 * 60_000,
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
      guestBootMs: result.bootMs,
      guestTotalMs: result.totalMs,
      // The host's load averages (1, 5, 15 min) when the run started and ended: TCG timings swing with it.
      hostLoadAverage: { start: loadAtStart, end: loadavg() },
    },
    null,
    2,
  )}\n`,
);
