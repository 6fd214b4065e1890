// The machine's cost of the kernel work the fanotify plane is made of (machine-costs.c): a bare system call,
// a /proc link read, an open+close and a wake-up round trip between two processes, in µs. The benchmarks
// print it beside their figures, so that a figure measured on another machine can be told apart from a
// change in the code (a system call cost 0.11 µs on the machine of the 2026-11 figures and 1.0 µs on the
// one of 2026-12). Built with the machine's C compiler into a temporary folder; nothing here is shipped.
// Run alone: `node --import tsx bench/support/machine-costs.ts [FILE]` (FILE: what the open+close opens).
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** µs per operation, each the median of the tool's rounds. */
export interface MachineCosts {
  syscallMicros: number;
  procReadlinkMicros: number;
  openCloseMicros: number;
  wakeRoundTripMicros: number;
  rounds: number;
}

const SOURCE = join(dirname(fileURLToPath(import.meta.url)), 'machine-costs.c');

/** Parses the tool's one JSON line; throws on anything else (a figure is never made up). */
export function parseMachineCosts(text: string): MachineCosts {
  const raw = JSON.parse(text) as Record<string, unknown>;
  const keys = ['syscallMicros', 'procReadlinkMicros', 'openCloseMicros', 'wakeRoundTripMicros', 'rounds'];
  for (const k of keys) {
    const v = raw[k];
    if (typeof v !== 'number' || !Number.isFinite(v) || v <= 0)
      throw new Error(`machine-costs: ${k} is not a positive number: ${JSON.stringify(v)}`);
  }
  return raw as unknown as MachineCosts;
}

/** Builds and runs the tool; `{ error }` when it cannot (no C compiler, a measure failed). */
export function machineCosts(openFile?: string): MachineCosts | { error: string } {
  const dir = mkdtempSync(join(tmpdir(), 'rtctl-machine-costs-'));
  try {
    const bin = join(dir, 'machine-costs');
    let built: string | undefined;
    for (const cc of ['cc', 'gcc', 'clang']) {
      try {
        execFileSync(cc, ['-O2', '-o', bin, SOURCE], { stdio: ['ignore', 'ignore', 'pipe'] });
        built = cc;
        break;
      } catch {
        // try the next compiler
      }
    }
    if (built === undefined) return { error: 'no C compiler (cc, gcc, clang) could build machine-costs.c' };
    const out = execFileSync(bin, openFile === undefined ? [] : [openFile], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
      timeout: 120_000,
    });
    return parseMachineCosts(out.trim());
  } catch (err) {
    return { error: err instanceof Error ? err.message : String(err) };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) {
  process.stdout.write(`${JSON.stringify(machineCosts(process.argv[2]), null, 2)}\n`);
}
