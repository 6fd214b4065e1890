// Measurement helpers shared by the benchmark scripts.
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';

/** The median of a list of numbers (NaN for an empty list). */
export function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)] ?? NaN;
}

/** Milliseconds `fn` takes, from the monotonic clock. */
export function time(fn: () => void): number {
  const t = process.hrtime.bigint();
  fn();
  return Number(process.hrtime.bigint() - t) / 1e6;
}

/** Milliseconds of CPU time (user and system, every thread of the process) `fn` takes: less sensitive than wall
 * time to other processes on a shared machine. */
export function cpuTime(fn: () => void): number {
  const before = process.cpuUsage();
  fn();
  const used = process.cpuUsage(before);
  return (used.user + used.system) / 1000;
}

/** Prints a benchmark's result as JSON, and writes the same text to `out` (its folder made) when given. */
export function printResult(result: unknown, out?: string): void {
  const json = `${JSON.stringify(result, null, 2)}\n`;
  process.stdout.write(json);
  if (out) {
    mkdirSync(dirname(out), { recursive: true });
    writeFileSync(out, json);
  }
}
