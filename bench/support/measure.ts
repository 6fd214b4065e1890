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
