// The block fast path of YAML parsing: a one-pass reader of the plain block subset that policy repositories
// are written in (block mappings and lists, one-line plain and quoted scalars, one-line flow lists and
// mappings of scalars, comments, `---` between documents, LF or CRLF line ends). It builds the documents'
// values and the compact event arrays positions are recovered from (parse-yaml.ts's EventIndex) in one walk of
// the text, without the event objects js-yaml's parser allocates. It reads nothing it is not sure of: on
// anything else (escapes in quotes, nested flow collections, anchors, aliases, tags, block or multi-line
// scalars, tabs, lone carriage returns, control characters and characters beyond the Basic Multilingual
// Plane, numbers other than small decimal integers, keys that are not plain ASCII names, duplicate keys,
// empty documents, deep nesting, odd indentation) it returns undefined and the file goes to js-yaml's event
// parser as before. What it returns is what js-yaml's events give, value
// for value and event for event (test/compiler/parse/block-scan.test.ts holds it to that on generated and
// mutated texts).
import * as jsyaml from 'js-yaml';

const E = jsyaml.EVENT_ID;

/** The form (style | chomping << 3 | fast << 5) of a one-line plain scalar, and of an empty one. */
export const PLAIN_FAST_FORM = jsyaml.SCALAR_STYLE.PLAIN | (jsyaml.CHOMPING_MODE.CLIP << 3) | 32;
export const EMPTY_SCALAR_FORM = jsyaml.SCALAR_STYLE.PLAIN | (jsyaml.CHOMPING_MODE.CLIP << 3);
/** The form of a one-line quoted scalar without escapes, but for its style. */
const QUOTED_FORM = (jsyaml.CHOMPING_MODE.CLIP << 3) | 32;

/**
 * The event stream of one file as parallel arrays: the event's type; its start (a scalar's value start, -1
 * for an empty scalar; a collection's start; -2 for an event that starts no node); a scalar's value end (-1
 * for an empty one) or, for a collection, the index of the event after its POP; a scalar's form; the index
 * of each DOCUMENT event. `length` events are valid.
 */
export interface EventArrays {
  length: number;
  types: Uint8Array;
  starts: Int32Array;
  ends: Int32Array;
  forms: Uint8Array;
  docStarts: number[];
}

/** A file the block fast path read: its documents' values and its events. */
export interface BlockScan {
  values: unknown[];
  events: EventArrays;
}

/** Collection nesting the fast path reads; deeper files go to js-yaml (which bounds depth with its finding). */
const MAX_DEPTH = 24;

/**
 * Anything but printable characters of the Basic Multilingual Plane and line ends: control characters, C1
 * controls (NEL among them), surrogates (so characters beyond the plane too), U+FEFF (a byte-order mark, which
 * js-yaml skips at a document's start), U+FFFE and U+FFFF, and a carriage return not before a line feed. Such
 * files go to js-yaml.
 */
const OUTSIDE_SUBSET = /[^\n\r\x20-\x7e\u00a0-\ud7ff\ue000-\ufefe\uff00-\ufffd]|\r(?!\n)/;

/** Thrown (one object, made once) when the text leaves the subset; caught by scanBlockYaml. */
class OutsideSubset extends Error {}
const LEAVE = new OutsideSubset('the text leaves the plain block subset');

const NL = 10;
const CR = 13;
const SPACE = 32;
const HASH = 35;
const DASH = 45;
const COLON = 58;
const QUOTE = 34;
const APOSTROPHE = 39;
const COMMA = 44;
const BACKSLASH = 92;
const OPEN_BRACKET = 91;
const CLOSE_BRACKET = 93;
const OPEN_BRACE = 123;
const CLOSE_BRACE = 125;

/** True for `[`, `]`, `{`, `}` (and `,`): they end a plain scalar in a flow list. */
function isFlowIndicator(c: number): boolean {
  return c === OPEN_BRACKET || c === CLOSE_BRACKET || c === OPEN_BRACE || c === CLOSE_BRACE || c === COMMA;
}

/** True for a line feed, or a carriage return (which the subset has only before a line feed). */
function isLineEnd(c: number): boolean {
  return c === NL || c === CR;
}

/** True for the characters of a plain key after its first: letters, digits, `_`, `.`, `/`, `-`. */
function isKeyChar(c: number): boolean {
  return (
    (c >= 97 && c <= 122) ||
    (c >= 65 && c <= 90) ||
    (c >= 48 && c <= 57) ||
    c === 95 ||
    c === 46 ||
    c === 47 ||
    c === DASH
  );
}

/** True for the first character of a plain key: a letter or `_`. */
function isKeyStartChar(c: number): boolean {
  return (c >= 97 && c <= 122) || (c >= 65 && c <= 90) || c === 95;
}

/**
 * True for a character a value may not start with on the fast path: YAML indicators (quotes, flow, anchors,
 * tags, block scalars, directives, reserved) and the first characters of numbers and nulls other than digits
 * (`-`, `+`, `.`, `~`).
 */
function isValueStartRefused(c: number): boolean {
  switch (c) {
    case 33: // !
    case 34: // "
    case 37: // %
    case 38: // &
    case 39: // '
    case 42: // *
    case 43: // +
    case 44: // ,
    case 45: // -
    case 46: // .
    case 58: // :
    case 62: // >
    case 63: // ?
    case 64: // @
    case 91: // [
    case 93: // ]
    case 96: // `
    case 123: // {
    case 124: // |
    case 125: // }
    case 126: // ~
      return true;
    default:
      return false;
  }
}

/**
 * True for a character of the core schema's integers and floats besides digits (hexadecimal and octal
 * prefixes and digits, signs, point, exponent, `.inf`/`.nan` letters): text with any other cannot be a number.
 */
function isNumberChar(c: number): boolean {
  return (
    (c >= 97 && c <= 102) || // a-f
    (c >= 65 && c <= 70) || // A-F
    c === 120 || // x
    c === 111 || // o
    c === 105 || // i
    c === 110 || // n
    c === 73 || // I
    c === 78 || // N
    c === 43 || // +
    c === 45 || // -
    c === 46 // .
  );
}

/** Keys whose property name is not their text, or that js-yaml treats apart: left to js-yaml. */
const REFUSED_KEYS = new Set([
  'null',
  'Null',
  'NULL',
  'true',
  'True',
  'TRUE',
  'false',
  'False',
  'FALSE',
  '__proto__',
]);

/** Reusable growing event arrays (one scan at a time; the result copies what it keeps). */
class EventBuffer {
  length = 0;
  types = new Uint8Array(1024);
  starts = new Int32Array(1024);
  ends = new Int32Array(1024);
  forms = new Uint8Array(1024);

  push(type: number, start: number, end: number, form: number): number {
    const i = this.length;
    if (i === this.types.length) this.grow();
    this.types[i] = type;
    this.starts[i] = start;
    this.ends[i] = end;
    this.forms[i] = form;
    this.length = i + 1;
    return i;
  }

  private grow(): void {
    const size = this.types.length * 2;
    const types = new Uint8Array(size);
    types.set(this.types);
    const starts = new Int32Array(size);
    starts.set(this.starts);
    const ends = new Int32Array(size);
    ends.set(this.ends);
    const forms = new Uint8Array(size);
    forms.set(this.forms);
    this.types = types;
    this.starts = starts;
    this.ends = ends;
    this.forms = forms;
  }

  /** The events pushed, copied at their length. */
  take(docStarts: number[]): EventArrays {
    const n = this.length;
    return {
      length: n,
      types: this.types.slice(0, n),
      starts: this.starts.slice(0, n),
      ends: this.ends.slice(0, n),
      forms: this.forms.slice(0, n),
      docStarts,
    };
  }
}

/** Events a buffer keeps room for between scans (more is dropped after the scan that needed it). */
const RETAINED_EVENTS = 1 << 18;
let buffer = new EventBuffer();

/**
 * Reads a text of the plain block subset: its documents' values and events, as js-yaml's parseEvents and
 * constructFromEvents give them; undefined for any text outside the subset. Never throws.
 */
export function scanBlockYaml(text: string): BlockScan | undefined {
  if (OUTSIDE_SUBSET.test(text)) return undefined;
  buffer.length = 0;
  const scanner = new BlockScanner(text, buffer);
  try {
    const values = scanner.documents();
    return { values, events: buffer.take(scanner.docStarts) };
  } catch (err) {
    if (err === LEAVE) return undefined;
    throw err;
  } finally {
    // A huge file's arrays are not kept for the rest of the process.
    if (buffer.types.length > RETAINED_EVENTS) buffer = new EventBuffer();
  }
}

/** The reader: positions are offsets into the text; a line is read from its start. */
class BlockScanner {
  readonly docStarts: number[] = [];
  private readonly length: number;
  /** The start of the next content line (after the node just read), or the text's length at its end. */
  private next = 0;
  /** The indentation of that line. */
  private nextIndent = 0;

  constructor(
    private readonly text: string,
    private readonly events: EventBuffer,
  ) {
    this.length = text.length;
  }

  documents(): unknown[] {
    const values: unknown[] = [];
    this.skipToContent(0);
    if (this.next < this.length && this.isDocumentMarker(this.next)) this.afterMarker();
    for (;;) {
      if (this.next >= this.length) {
        if (values.length === 0) throw LEAVE;
        return values;
      }
      if (this.nextIndent !== 0 || this.isDocumentMarker(this.next)) throw LEAVE;
      this.docStarts.push(this.events.push(E.DOCUMENT, -2, 0, 0));
      values.push(this.mapping(this.next, 0, 1));
      this.events.push(E.POP, -2, 0, 0);
      if (this.next >= this.length) return values;
      if (!this.isDocumentMarker(this.next)) throw LEAVE;
      this.afterMarker();
      // A marker with nothing after it starts an empty document: js-yaml's.
      if (this.next >= this.length) throw LEAVE;
    }
  }

  /** True for a line that is `---` alone. */
  private isDocumentMarker(line: number): boolean {
    const t = this.text;
    return (
      t.charCodeAt(line) === DASH &&
      t.charCodeAt(line + 1) === DASH &&
      t.charCodeAt(line + 2) === DASH &&
      (line + 3 === this.length || isLineEnd(t.charCodeAt(line + 3)))
    );
  }

  private afterMarker(): void {
    this.skipToContent(Math.min(this.next + 4, this.length));
  }

  /** Moves `next` to the first line from `line` on that is neither blank nor a comment. */
  private skipToContent(line: number): void {
    const t = this.text;
    const n = this.length;
    let start = line;
    for (;;) {
      let i = start;
      while (t.charCodeAt(i) === SPACE) i++;
      if (i >= n) {
        this.next = n;
        this.nextIndent = 0;
        return;
      }
      const c = t.charCodeAt(i);
      if (isLineEnd(c)) {
        start = i + 1;
        continue;
      }
      if (c === HASH) {
        const end = t.indexOf('\n', i);
        if (end < 0) {
          this.next = n;
          this.nextIndent = 0;
          return;
        }
        start = end + 1;
        continue;
      }
      this.next = start;
      this.nextIndent = i - start;
      return;
    }
  }

  /**
   * After a scalar value that ends its line at `lineEnd`: no line (a comment either) may follow indented past
   * `limit` (js-yaml would continue the scalar there, or refuse the indentation). Then moves to the next
   * content line.
   */
  private afterScalar(lineEnd: number, limit: number): void {
    const t = this.text;
    const n = this.length;
    let start = lineEnd + 1;
    for (;;) {
      let i = start;
      while (t.charCodeAt(i) === SPACE) i++;
      // Spaces that end the text count as a line (js-yaml reads their indentation); a blank line does not.
      if (i < n && isLineEnd(t.charCodeAt(i))) {
        start = i + 1;
        continue;
      }
      if (i - start > limit) throw LEAVE;
      break;
    }
    this.skipToContent(Math.min(lineEnd + 1, n));
  }

  /** The end of a plain key starting at `p` (the offset of its `:`), or -1 when no key starts there. */
  private keyEnd(p: number): number {
    const t = this.text;
    if (!isKeyStartChar(t.charCodeAt(p))) return -1;
    let i = p + 1;
    while (isKeyChar(t.charCodeAt(i))) i++;
    if (t.charCodeAt(i) !== COLON) return -1;
    const after = t.charCodeAt(i + 1);
    return i + 1 >= this.length || after === SPACE || isLineEnd(after) ? i : -1;
  }

  /** True for a list item's dash at `p`. */
  private isItem(p: number): boolean {
    const after = this.text.charCodeAt(p + 1);
    return this.text.charCodeAt(p) === DASH && (p + 1 >= this.length || after === SPACE || isLineEnd(after));
  }

  /** The block mapping whose first key starts at `p`, in column `column`. */
  private mapping(p: number, column: number, depth: number): Record<string, unknown> {
    if (depth > MAX_DEPTH) throw LEAVE;
    const t = this.text;
    const n = this.length;
    const events = this.events;
    const out: Record<string, unknown> = {};
    const open = events.push(E.MAPPING, p, 0, 0);
    let key = p;
    for (;;) {
      const colon = this.keyEnd(key);
      if (colon < 0) throw LEAVE;
      const name = t.slice(key, colon);
      if (REFUSED_KEYS.has(name) || Object.hasOwn(out, name)) throw LEAVE;
      events.push(E.SCALAR, key, colon, PLAIN_FAST_FORM);
      let q = colon + 1;
      while (t.charCodeAt(q) === SPACE) q++;
      const c = t.charCodeAt(q);
      let value: unknown;
      if (q >= n || isLineEnd(c) || c === HASH) {
        // Nothing on the key's line: a collection on the lines below, else an empty value.
        const lineEnd = q >= n ? n : t.indexOf('\n', q);
        this.skipToContent(lineEnd < 0 ? n : Math.min(lineEnd + 1, n));
        const line = this.next;
        const indent = this.nextIndent;
        if (line < n && indent > column) value = this.collection(line + indent, indent, depth + 1);
        else if (line < n && indent === column && this.isItem(line + indent))
          value = this.sequence(line + indent, indent, depth + 1);
        else {
          events.push(E.SCALAR, -1, -1, EMPTY_SCALAR_FORM);
          value = null;
        }
      } else value = this.inline(q, column, depth);
      out[name] = value;
      const line = this.next;
      if (line >= n || this.nextIndent < column) break;
      if (this.nextIndent > column) throw LEAVE;
      if (column === 0 && this.isDocumentMarker(line)) break;
      key = line + column;
    }
    events.ends[open] = events.push(E.POP, -2, 0, 0) + 1;
    return out;
  }

  /** The collection (a list or a mapping) that starts at `p`, the first content of its line, in column `column`. */
  private collection(p: number, column: number, depth: number): unknown {
    return this.isItem(p) ? this.sequence(p, column, depth) : this.mapping(p, column, depth);
  }

  /** The block list whose first item's dash is at `p`, in column `column`. */
  private sequence(p: number, column: number, depth: number): unknown[] {
    if (depth > MAX_DEPTH) throw LEAVE;
    const t = this.text;
    const n = this.length;
    const events = this.events;
    const out: unknown[] = [];
    const open = events.push(E.SEQUENCE, p, 0, 0);
    let dash = p;
    for (;;) {
      let q = dash + 1;
      while (t.charCodeAt(q) === SPACE) q++;
      const c = t.charCodeAt(q);
      // An item on the lines below, an empty item, or a list in a list: left to js-yaml.
      if (q >= n || isLineEnd(c) || c === HASH || this.isItem(q)) throw LEAVE;
      if (this.keyEnd(q) >= 0) out.push(this.mapping(q, column + (q - dash), depth + 1));
      else out.push(this.inline(q, column, depth));
      const line = this.next;
      if (line >= n || this.nextIndent < column) break;
      if (this.nextIndent > column) throw LEAVE;
      dash = line + column;
      if (!this.isItem(dash)) break;
    }
    events.ends[open] = events.push(E.POP, -2, 0, 0) + 1;
    return out;
  }

  /**
   * The value that starts at `q` and ends on its line (a quoted or plain scalar, or a flow list of them), the
   * value of a node in column `limit`; then moves to the next content line.
   */
  private inline(q: number, limit: number, depth: number): unknown {
    const c = this.text.charCodeAt(q);
    if (c === QUOTE || c === APOSTROPHE) {
      const close = this.quoted(q);
      this.afterScalar(this.lineRest(close + 1), limit);
      return this.text.slice(q + 1, close);
    }
    if (c === OPEN_BRACKET) return this.flowList(q, limit, depth);
    if (c === OPEN_BRACE) return this.flowMapping(q, limit, depth);
    return this.scalar(q, limit);
  }

  /**
   * A one-line quoted scalar without escapes (no backslash in double quotes, no doubled quote in single
   * quotes): pushes its event and returns the offset of its closing quote.
   */
  private quoted(q: number): number {
    const t = this.text;
    const quote = t.charCodeAt(q);
    let i = q + 1;
    for (; ; i++) {
      if (i >= this.length) throw LEAVE;
      const c = t.charCodeAt(i);
      if (c === quote) break;
      if (isLineEnd(c) || (c === BACKSLASH && quote === QUOTE)) throw LEAVE;
    }
    if (quote === APOSTROPHE && t.charCodeAt(i + 1) === APOSTROPHE) throw LEAVE;
    const style = quote === QUOTE ? jsyaml.SCALAR_STYLE.DOUBLE_QUOTED : jsyaml.SCALAR_STYLE.SINGLE_QUOTED;
    this.events.push(E.SCALAR, q + 1, i, style | QUOTED_FORM);
    return i;
  }

  /**
   * What may follow a value on its line from `i`: spaces, then a comment after a space, or the end of the line.
   * Returns the offset of the line's end.
   */
  private lineRest(i: number): number {
    const t = this.text;
    let j = i;
    while (t.charCodeAt(j) === SPACE) j++;
    if (j >= this.length) return this.length;
    const c = t.charCodeAt(j);
    if (isLineEnd(c)) return j;
    if (c !== HASH || j === i) throw LEAVE;
    const end = t.indexOf('\n', j);
    return end < 0 ? this.length : end;
  }

  /** A one-line flow list of scalars (`[a, "b", 3]`) starting at `q`, the value of a node in column `limit`. */
  private flowList(q: number, limit: number, depth: number): unknown[] {
    if (depth > MAX_DEPTH) throw LEAVE;
    const t = this.text;
    const events = this.events;
    const out: unknown[] = [];
    const open = events.push(E.SEQUENCE, q, 0, 0);
    let i = q + 1;
    for (;;) {
      while (t.charCodeAt(i) === SPACE) i++;
      const c = t.charCodeAt(i);
      if (c === CLOSE_BRACKET) {
        // An empty list, or a comma before the bracket: left to js-yaml.
        if (out.length > 0) throw LEAVE;
        i++;
        break;
      }
      out.push(this.flowScalar(i));
      i = this.flowEnd;
      while (t.charCodeAt(i) === SPACE) i++;
      const after = t.charCodeAt(i);
      i++;
      if (after === CLOSE_BRACKET) break;
      if (after !== COMMA) throw LEAVE;
    }
    events.ends[open] = events.push(E.POP, -2, 0, 0) + 1;
    this.afterScalar(this.lineRest(i), limit);
    return out;
  }

  /**
   * A one-line flow mapping of plain keys and scalar values (`{app: web, tier: "a b"}`) starting at `q`, the
   * value of a node in column `limit`.
   */
  private flowMapping(q: number, limit: number, depth: number): Record<string, unknown> {
    if (depth > MAX_DEPTH) throw LEAVE;
    const t = this.text;
    const events = this.events;
    const out: Record<string, unknown> = {};
    const open = events.push(E.MAPPING, q, 0, 0);
    let i = q + 1;
    for (;;) {
      while (t.charCodeAt(i) === SPACE) i++;
      if (t.charCodeAt(i) === CLOSE_BRACE) {
        // An empty mapping, or a comma before the brace: left to js-yaml.
        if (events.length > open + 1) throw LEAVE;
        i++;
        break;
      }
      const colon = this.keyEnd(i);
      // A key needs a space after its colon here (`{a:b}` is one scalar in flow style).
      if (colon < 0 || t.charCodeAt(colon + 1) !== SPACE) throw LEAVE;
      const name = t.slice(i, colon);
      if (REFUSED_KEYS.has(name) || Object.hasOwn(out, name)) throw LEAVE;
      events.push(E.SCALAR, i, colon, PLAIN_FAST_FORM);
      i = colon + 1;
      while (t.charCodeAt(i) === SPACE) i++;
      out[name] = this.flowScalar(i);
      i = this.flowEnd;
      while (t.charCodeAt(i) === SPACE) i++;
      const after = t.charCodeAt(i);
      i++;
      if (after === CLOSE_BRACE) break;
      if (after !== COMMA) throw LEAVE;
    }
    events.ends[open] = events.push(E.POP, -2, 0, 0) + 1;
    this.afterScalar(this.lineRest(i), limit);
    return out;
  }

  /** Where the last flowScalar ended (the offset after it). */
  private flowEnd = 0;

  /**
   * A scalar inside a flow collection at `i` (quoted without escapes, or plain up to a `,` or the closing
   * bracket or brace): pushes its event, sets flowEnd and returns its value.
   */
  private flowScalar(i: number): unknown {
    const t = this.text;
    const c = t.charCodeAt(i);
    if (c === QUOTE || c === APOSTROPHE) {
      const close = this.quoted(i);
      this.flowEnd = close + 1;
      return t.slice(i + 1, close);
    }
    if (this.isPlainStartRefused(i) || c === HASH) throw LEAVE;
    let j = i;
    let end = i;
    for (; ; j++) {
      const d = t.charCodeAt(j);
      if (d === COMMA || d === CLOSE_BRACKET || d === CLOSE_BRACE) break;
      if (j >= this.length || isLineEnd(d) || d === COLON || d === HASH || isFlowIndicator(d)) throw LEAVE;
      if (d !== SPACE) end = j + 1;
    }
    this.events.push(E.SCALAR, i, end, PLAIN_FAST_FORM);
    this.flowEnd = j;
    return this.resolve(i, end, c);
  }

  /**
   * True when the plain scalar at `q` starts with a character the fast path leaves to js-yaml (an indicator,
   * or the start of a number or null other than a digit); a dash before a letter (`-c`, an argument) is text.
   */
  private isPlainStartRefused(q: number): boolean {
    const c = this.text.charCodeAt(q);
    if (c === DASH) return !isKeyStartChar(this.text.charCodeAt(q + 1));
    return isValueStartRefused(c);
  }

  /**
   * The one-line plain scalar that starts at `q`, a value of a node in column `limit` (no line after it may be
   * indented past that column); its value as the core schema reads it.
   */
  private scalar(q: number, limit: number): unknown {
    const t = this.text;
    const n = this.length;
    const first = t.charCodeAt(q);
    if (this.isPlainStartRefused(q)) throw LEAVE;
    let i = q;
    let end = q;
    for (; i < n; i++) {
      const c = t.charCodeAt(i);
      if (isLineEnd(c)) break;
      if (c === COLON) {
        const after = t.charCodeAt(i + 1);
        if (i + 1 >= n || after === SPACE || isLineEnd(after)) throw LEAVE;
      } else if (c === HASH && t.charCodeAt(i - 1) === SPACE) {
        i = t.indexOf('\n', i);
        if (i < 0) i = n;
        break;
      }
      if (c !== SPACE) end = i + 1;
    }
    this.events.push(E.SCALAR, q, end, PLAIN_FAST_FORM);
    const value = this.resolve(q, end, first);
    this.afterScalar(i, limit);
    return value;
  }

  /** The core schema's reading of the plain scalar text[q, end): null, a boolean, a small integer, or the text. */
  private resolve(q: number, end: number, first: number): unknown {
    const t = this.text;
    const length = end - q;
    if (first >= 48 && first <= 57) {
      // Starting with a digit: an integer or a float, else text. Only digits (at most 15: exact) are read
      // here; text with a character no number has (`169.254.0.1/32`, `10Mi`) is text; the rest goes to js-yaml.
      let digits = true;
      for (let i = q + 1; i < end; i++) {
        const c = t.charCodeAt(i);
        if (c >= 48 && c <= 57) continue;
        if (!isNumberChar(c)) return t.slice(q, end);
        digits = false;
      }
      if (!digits || length > 15) throw LEAVE;
      return parseInt(t.slice(q, end), 10);
    }
    const text = t.slice(q, end);
    if (length === 4 && (first === 110 || first === 78 || first === 116 || first === 84)) {
      if (text === 'null' || text === 'Null' || text === 'NULL') return null;
      if (text === 'true' || text === 'True' || text === 'TRUE') return true;
    } else if (length === 5 && (first === 102 || first === 70)) {
      if (text === 'false' || text === 'False' || text === 'FALSE') return false;
    }
    return text;
  }
}
