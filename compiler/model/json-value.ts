// Reading untyped JSON values (parsed YAML, admission objects): the record test and how messages show a value
// that was found (strings quoted and shortened, containers by shape).

/** True for a JSON object (not null, not a list). */
export function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** A short, safe description of any JSON value for a diagnostic message. */
export function describeValue(v: unknown): string {
  if (typeof v === 'string') return JSON.stringify(v.length > 80 ? `${v.slice(0, 80)}…` : v);
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'a list';
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  return typeof v === 'object' ? 'an object' : typeof v;
}
