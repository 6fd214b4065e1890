// Measurement helpers shared by the benchmark scripts.

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
