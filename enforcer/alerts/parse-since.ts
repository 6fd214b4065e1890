// `rtctl logs --since`: a duration back from now (`30s`, `10m`, `2h`, `1d`, `1h30m`, `500ms`) or an RFC 3339
// time (`2026-11-22T07:38:50Z`), as ms since the epoch. Parsed as data: an error names what was expected.

const UNIT_MS: Readonly<Record<string, number>> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** The start time, or what is wrong with the text. */
export function parseSince(
  text: string,
  nowMs: number,
): { ok: true; ms: number } | { ok: false; error: string } {
  const t = text.trim();
  if (/^\d{4}-\d\d-\d\dT/.test(t)) {
    const ms = Date.parse(t);
    if (!Number.isFinite(ms) || !/(Z|[+-]\d\d:\d\d)$/.test(t))
      return { ok: false, error: `"${text}" is not an RFC 3339 time with a zone (2026-11-22T07:38:50Z)` };
    return { ok: true, ms };
  }
  if (!/^(\d{1,9}(ms|s|m|h|d))+$/.test(t))
    return {
      ok: false,
      error: `"${text}" is neither a duration (30s, 10m, 2h, 1d, 1h30m) nor an RFC 3339 time`,
    };
  let total = 0;
  for (const [, n, unit] of t.matchAll(/(\d+)(ms|s|m|h|d)/g)) total += Number(n) * (UNIT_MS[unit ?? ''] ?? 0);
  if (total > 3650 * 86_400_000) return { ok: false, error: `"${text}" is more than ten years` };
  return { ok: true, ms: nowMs - total };
}
