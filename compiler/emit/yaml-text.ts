// Deterministic YAML text for emitted manifests, written by a small emitter of our own: block style, keys in
// the order built, two-space indentation, no anchors, no folding. Strings are plain only when every YAML 1.1
// and 1.2 reader takes them as the same string; otherwise they are double-quoted with JSON escapes (a subset
// of YAML's), so user text (newlines, quotes, `: `, `#`, unicode) can never change the document's structure.
// Emission is on the hot path of `rtctl compile`: this is several times faster than a general dumper.

type Value = unknown;

/** Plain-safe: starts with a letter, digit, `/`, `.` or `_`; only safe characters; no `: ` or ` #`. */
const PLAIN = /^[A-Za-z0-9_./][A-Za-z0-9_./@%+=, -]*$/;
/** Words some YAML reader resolves to a non-string (YAML 1.1 booleans, null, numbers of any base). */
const AMBIGUOUS =
  /^(?:y|Y|yes|Yes|YES|n|N|no|No|NO|true|True|TRUE|false|False|FALSE|on|On|ON|off|Off|OFF|null|Null|NULL|~|[-+]?(?:\.inf|\.Inf|\.INF)|\.nan|\.NaN|\.NAN)$/;
const NUMBERISH = /^[-+]?(?:[0-9][0-9_]*(?:\.[0-9_]*)?|\.[0-9_]+)(?:[eE][-+]?[0-9]+)?$|^0[xob]|^[0-9]+:[0-9]/;

/** The YAML text of a scalar string. */
export function yamlString(s: string): string {
  if (
    s !== '' &&
    PLAIN.test(s) &&
    !AMBIGUOUS.test(s) &&
    !NUMBERISH.test(s) &&
    !s.endsWith(' ') &&
    !s.includes(' #') &&
    !s.includes(': ') &&
    !s.endsWith(':')
  ) {
    return s;
  }
  return JSON.stringify(s);
}

function scalar(v: Value): string {
  if (v === null || v === undefined) return 'null';
  if (typeof v === 'string') return yamlString(v);
  if (typeof v === 'boolean') return v ? 'true' : 'false';
  if (typeof v === 'number') {
    if (!Number.isFinite(v)) return Number.isNaN(v) ? '.nan' : v > 0 ? '.inf' : '-.inf';
    return String(v);
  }
  if (typeof v === 'bigint') return v.toString();
  // Functions and symbols have no YAML form; manifests are built from JSON data and never hold them.
  return 'null';
}

function isCollection(v: Value): v is Record<string, Value> | Value[] {
  return typeof v === 'object' && v !== null;
}

function isEmpty(v: Record<string, Value> | Value[]): boolean {
  return Array.isArray(v) ? v.length === 0 : Object.keys(v).length === 0;
}

function write(out: string[], v: Value, indent: string): void {
  if (Array.isArray(v)) {
    for (const item of v) {
      if (isCollection(item) && !isEmpty(item)) {
        // The first line of a collection item sits after "- ".
        const inner: string[] = [];
        write(inner, item, `${indent}  `);
        const first = inner[0] ?? '';
        out.push(`${indent}- ${first.slice(indent.length + 2)}`);
        for (let i = 1; i < inner.length; i++) out.push(inner[i] ?? '');
      } else {
        out.push(`${indent}- ${isCollection(item) ? (Array.isArray(item) ? '[]' : '{}') : scalar(item)}`);
      }
    }
    return;
  }
  for (const [k, child] of Object.entries(v as Record<string, Value>)) {
    if (child === undefined) continue;
    const key = yamlString(k);
    if (isCollection(child)) {
      if (isEmpty(child)) out.push(`${indent}${key}: ${Array.isArray(child) ? '[]' : '{}'}`);
      else {
        out.push(`${indent}${key}:`);
        write(out, child, Array.isArray(child) ? `${indent}  ` : `${indent}  `);
      }
    } else {
      out.push(`${indent}${key}: ${scalar(child)}`);
    }
  }
}

/** Serializes one value as a YAML document (no leading `---`), ending with a newline. */
export function toYaml(value: Value): string {
  if (!isCollection(value)) return `${scalar(value)}\n`;
  if (isEmpty(value)) return Array.isArray(value) ? '[]\n' : '{}\n';
  const out: string[] = [];
  write(out, value, '');
  return `${out.join('\n')}\n`;
}

/** Serializes several values as a multi-document YAML stream. */
export function toYamlStream(values: readonly Value[]): string {
  return values.map((v) => `---\n${toYaml(v)}`).join('');
}
