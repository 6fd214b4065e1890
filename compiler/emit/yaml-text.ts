// Deterministic YAML text for emitted manifests, written by a small emitter of our own: block style, keys in
// the order built, two-space indentation, no anchors, no folding. Strings are plain only when every YAML 1.1
// and 1.2 reader takes them as the same string; otherwise they are double-quoted with JSON escapes (a subset
// of YAML's), so user text (newlines, quotes, `: `, `#`, unicode) can never change the document's structure.
// Emission is on the hot path of `rtctl compile`: this is several times faster than a general dumper (pieces joined
// once into a flat string, key texts cached).

type Value = unknown;

/** Words some YAML reader resolves to a non-string (YAML 1.1 booleans, null, numbers of any base). */
const AMBIGUOUS =
  /^(?:y|Y|yes|Yes|YES|n|N|no|No|NO|true|True|TRUE|false|False|FALSE|on|On|ON|off|Off|OFF|null|Null|NULL|~|[-+]?(?:\.inf|\.Inf|\.INF)|\.nan|\.NaN|\.NAN)$/;
const NUMBERISH = /^[-+]?(?:[0-9][0-9_]*(?:\.[0-9_]*)?|\.[0-9_]+)(?:[eE][-+]?[0-9]+)?$|^0[xob]|^[0-9]+:[0-9]/;

/**
 * Plain-safe text (PLAIN, `^[A-Za-z0-9_./][A-Za-z0-9_./@%+=, -]*$`: no `: ` or ` #` can occur) by character
 * class, per UTF-16 code unit below 128: 1 may start a plain string (a letter, a digit, `/`, `.`, `_`), 2 may
 * only follow (`@`, `%`, `+`, `=`, `,`, ` `, `-`). Everything else is quoted.
 */
const PLAIN_CLASS = new Uint8Array(128);
for (const c of 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_./')
  PLAIN_CLASS[c.charCodeAt(0)] = 1;
for (const c of '@%+=, -') PLAIN_CLASS[c.charCodeAt(0)] = 2;

/** True when `s` is PLAIN: one scan of its code units, no regular expression. */
function isPlainText(s: string): boolean {
  const n = s.length;
  if (n === 0 || PLAIN_CLASS[s.charCodeAt(0)] !== 1) return false;
  for (let i = 1; i < n; i++) {
    const c = s.charCodeAt(i);
    if (c >= 128 || PLAIN_CLASS[c] === 0) return false;
  }
  return true;
}

/**
 * True when a plain-safe string some reader would not take as this string: a word of AMBIGUOUS (the only ones
 * PLAIN lets through are at most five characters long or start with `.`) or a number of NUMBERISH (PLAIN lets
 * through only those that start with a digit or `.`). The regular expressions run only on those candidates.
 */
function isAmbiguousPlain(s: string): boolean {
  const c = s.charCodeAt(0);
  const numeric = c === 46 || (c >= 48 && c <= 57);
  if (numeric && NUMBERISH.test(s)) return true;
  return (numeric || s.length <= 5) && AMBIGUOUS.test(s);
}

/**
 * The YAML text of a scalar string: the string itself when it is plain-safe (PLAIN, not AMBIGUOUS or
 * NUMBERISH, no trailing space; PLAIN already excludes `: `, ` #` and a trailing `:`), else JSON-quoted. A
 * manifest writes thousands of strings: the test is one scan (isPlainText), not three regular expressions.
 */
export function yamlString(s: string): string {
  if (isPlainText(s) && s.charCodeAt(s.length - 1) !== 32 && !isAmbiguousPlain(s)) return s;
  return JSON.stringify(s);
}

/**
 * The text of mapping keys, by key. Manifests repeat a few hundred key names thousands of times; the cache is
 * bounded so that odd input costs time, not memory.
 */
const keyTexts = new Map<string, string>();
const MAX_KEY_TEXTS = 4096;

/** The text of a mapping key (cached). */
export function yamlKey(k: string): string {
  let text = keyTexts.get(k);
  if (text === undefined) {
    text = yamlString(k);
    if (keyTexts.size >= MAX_KEY_TEXTS) keyTexts.clear();
    keyTexts.set(k, text);
  }
  return text;
}

/** The text of a scalar value. */
export function yamlScalar(v: Value): string {
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

/** True for a mapping or a list. */
export function isCollection(v: Value): v is Record<string, Value> | Value[] {
  return typeof v === 'object' && v !== null;
}

function isEmpty(v: Record<string, Value> | Value[]): boolean {
  if (Array.isArray(v)) return v.length === 0;
  for (const k in v) if (Object.hasOwn(v, k)) return false;
  return true;
}

/**
 * Appends the lines of a non-empty collection to `out`, as pieces, each line ending in a newline. Every line
 * starts with `indent`, except the first, which starts with `lead` (as long as `indent`): a collection that is
 * a list item begins on the line of its `- `. The pieces are joined once, into one flat string.
 */
export function appendYamlCollection(
  out: string[],
  v: Record<string, Value> | Value[],
  indent: string,
  lead: string,
): void {
  let prefix = lead;
  if (Array.isArray(v)) {
    const inner = `${indent}  `;
    for (const item of v) {
      if (isCollection(item) && !isEmpty(item)) {
        const before = out.length;
        appendYamlCollection(out, item, inner, `${prefix}- `);
        // A mapping whose values are all undefined has no lines: its item is written bare, as `- `.
        if (out.length === before) out.push(prefix, '- \n');
      } else {
        out.push(
          prefix,
          '- ',
          isCollection(item) ? (Array.isArray(item) ? '[]' : '{}') : yamlScalar(item),
          '\n',
        );
      }
      prefix = indent;
    }
    return;
  }
  for (const k in v) {
    if (!Object.hasOwn(v, k)) continue;
    const child = v[k];
    if (child === undefined) continue;
    out.push(prefix, yamlKey(k));
    if (isCollection(child)) {
      if (isEmpty(child)) out.push(Array.isArray(child) ? ': []\n' : ': {}\n');
      else {
        const inner = `${indent}  `;
        out.push(':\n');
        appendYamlCollection(out, child, inner, inner);
      }
    } else {
      out.push(': ', yamlScalar(child), '\n');
    }
    prefix = indent;
  }
}

/** Serializes one value as a YAML document (no leading `---`), ending with a newline. */
export function toYaml(value: Value): string {
  if (!isCollection(value)) return `${yamlScalar(value)}\n`;
  if (isEmpty(value)) return Array.isArray(value) ? '[]\n' : '{}\n';
  const out: string[] = [];
  appendYamlCollection(out, value, '', '');
  return out.length === 0 ? '\n' : out.join('');
}

/** Serializes several values as a multi-document YAML stream. */
export function toYamlStream(values: readonly Value[]): string {
  return values.map((v) => `---\n${toYaml(v)}`).join('');
}
