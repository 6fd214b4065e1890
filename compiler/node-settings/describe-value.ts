// How admission messages show a value that was found: strings quoted and shortened, containers by shape.

/** A short, safe description of any JSON value for a diagnostic message. */
export function describeValue(v: unknown): string {
  if (typeof v === 'string') return JSON.stringify(v.length > 80 ? `${v.slice(0, 80)}…` : v);
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'a list';
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  return typeof v === 'object' ? 'an object' : typeof v;
}
