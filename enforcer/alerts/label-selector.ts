// Label selectors of `rtctl logs -l` in the Kubernetes syntax, parsed as data: requirements separated by
// commas, each `key`, `!key`, `key=value`, `key==value`, `key!=value`, `key in (v1,v2)` or
// `key notin (v1,v2)`. As in Kubernetes, `!=` and `notin` also match when the key is absent. Matched against
// an alert's `Labels` (`k=v,k2=v2`, sorted, as enforcer/workload.ts formats them).

/** One requirement. */
export type LabelRequirement =
  { key: string; op: 'exists' | 'absent' } | { key: string; op: 'in' | 'notin'; values: string[] };

/** A parse result: the requirements, or what is wrong and where (1-based column). */
export type ParsedSelector =
  { ok: true; value: LabelRequirement[] } | { ok: false; error: string; column: number };

// Kubernetes label keys: an optional DNS-subdomain prefix and `/`, then a name of at most 63 characters.
const KEY = /^(?:[a-z0-9](?:[-a-z0-9.]{0,251}[a-z0-9])?\/)?[A-Za-z0-9](?:[-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$/;
const VALUE = /^(?:[A-Za-z0-9](?:[-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?)?$/;

/** Splits on commas outside parentheses, keeping each part's start column. */
function splitTop(text: string): { part: string; column: number }[] | { error: string; column: number } {
  const parts: { part: string; column: number }[] = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i <= text.length; i++) {
    const c = text[i];
    if (c === '(') {
      if (depth > 0) return { error: 'nested "("', column: i + 1 };
      depth++;
    } else if (c === ')') {
      if (depth === 0) return { error: 'unbalanced ")"', column: i + 1 };
      depth--;
    } else if ((c === ',' && depth === 0) || c === undefined) {
      if (c === undefined && depth > 0) return { error: 'missing ")"', column: i + 1 };
      parts.push({ part: text.slice(start, i), column: start + 1 });
      start = i + 1;
    }
  }
  return parts;
}

/** Parses a selector. An empty text selects everything. */
export function parseLabelSelector(text: string): ParsedSelector {
  if (text.trim() === '') return { ok: true, value: [] };
  if (text.length > 4096) return { ok: false, error: 'longer than 4096 characters', column: 4097 };
  const parts = splitTop(text);
  if (!Array.isArray(parts)) return { ok: false, ...parts };
  const out: LabelRequirement[] = [];
  for (const { part, column } of parts) {
    const lead = part.length - part.trimStart().length;
    const p = part.trim();
    const at = column + lead;
    if (p === '') return { ok: false, error: 'empty requirement', column: at };
    const badKey = (key: string): ParsedSelector => ({
      ok: false,
      error: `"${key}" is not a label key (name of at most 63 characters [A-Za-z0-9-_.], optionally prefix/)`,
      column: at,
    });
    const badValue = (value: string): ParsedSelector => ({
      ok: false,
      error: `"${value}" is not a label value (at most 63 characters [A-Za-z0-9-_.])`,
      column: at,
    });
    let m = /^!\s*(\S+)$/.exec(p);
    if (m?.[1] !== undefined) {
      if (!KEY.test(m[1])) return badKey(m[1]);
      out.push({ key: m[1], op: 'absent' });
      continue;
    }
    m = /^(\S+?)\s+(in|notin)\s*\(([^)]*)\)$/.exec(p);
    if (m?.[1] !== undefined && m[2] !== undefined && m[3] !== undefined) {
      if (!KEY.test(m[1])) return badKey(m[1]);
      const values = m[3].split(',').map((v) => v.trim());
      if (values.length === 0 || (values.length === 1 && values[0] === ''))
        return { ok: false, error: `${m[2]} needs at least one value`, column: at };
      for (const v of values) if (!VALUE.test(v)) return badValue(v);
      out.push({ key: m[1], op: m[2] === 'notin' ? 'notin' : 'in', values });
      continue;
    }
    m = /^([^=!\s]+)\s*(==|=|!=)\s*(\S*)$/.exec(p);
    if (m?.[1] !== undefined && m[2] !== undefined && m[3] !== undefined) {
      if (!KEY.test(m[1])) return badKey(m[1]);
      if (!VALUE.test(m[3])) return badValue(m[3]);
      out.push({ key: m[1], op: m[2] === '!=' ? 'notin' : 'in', values: [m[3]] });
      continue;
    }
    if (KEY.test(p)) {
      out.push({ key: p, op: 'exists' });
      continue;
    }
    return {
      ok: false,
      error: `"${p}" is not a requirement (key, !key, key=value, key!=value, key in (a,b), key notin (a,b))`,
      column: at,
    };
  }
  return { ok: true, value: out };
}

/** The labels of an alert's `Labels` field. */
export function parseAlertLabels(text: string): Map<string, string> {
  const labels = new Map<string, string>();
  if (typeof text !== 'string' || text === '') return labels;
  for (const pair of text.split(',')) {
    const eq = pair.indexOf('=');
    if (eq > 0) labels.set(pair.slice(0, eq), pair.slice(eq + 1));
  }
  return labels;
}

/** True when the labels meet every requirement. */
export function matchesLabelSelector(
  labels: ReadonlyMap<string, string>,
  selector: readonly LabelRequirement[],
): boolean {
  return selector.every((r) => {
    const v = labels.get(r.key);
    switch (r.op) {
      case 'exists':
        return v !== undefined;
      case 'absent':
        return v === undefined;
      case 'in':
        return v !== undefined && r.values.includes(v);
      case 'notin':
        return v === undefined || !r.values.includes(v);
    }
  });
}
