// Multi-document YAML parsing with two paths. The fast path reads clean files at close to raw parsing speed
// and keeps only a compact event stream, from which positions are recovered on demand: plain block YAML is
// read by the block reader (block-scan.ts, one walk, no event objects), any other file by js-yaml's event
// parser. Any file js-yaml refuses (syntax, duplicate keys, tabs, aliases) is parsed again by the `yaml`
// package, which reports every problem of every document with its position and still yields the sound
// documents.
import { Code } from '../diagnostics/codes/code.js';
import * as jsyaml from 'js-yaml';
import type { Event as YamlEvent } from 'js-yaml';
import { isMap, isScalar, isSeq, parseAllDocuments, visit } from 'yaml';
import type { Node as YamlNode, Pair, YAMLMap } from 'yaml';
import type { Finding } from '../diagnostics/finding.js';
import { scanBlockYaml, type EventArrays } from './block-scan.js';

/** Bound on collection nesting. Policies nest about eight levels; far deeper input is hostile or broken. */
export const MAX_NESTING_DEPTH = 64;
/** Bound on alias expansions per document (the `yaml` package's guard against billion-laughs input). */
export const MAX_ALIAS_COUNT = 100;

/** One YAML document of a file; `value` is null for an empty document. */
export interface YamlDocument {
  index: number;
  value: unknown;
}

/** A parse finding, with the document and character range it concerns. */
export interface PlacedFinding {
  finding: Finding;
  /** Document index, or -1 for the file as a whole. */
  document: number;
  offset: number;
  endOffset?: number;
}

/** A character range; `keyOffset` is set when the pointer ends at a mapping key (the field's own line). */
export interface Range {
  offset: number;
  endOffset: number;
}

/** Parse result of one file. `locate` maps (document, JSON pointer) to a range, or the nearest existing ancestor. */
export interface YamlFile {
  documents: YamlDocument[];
  findings: PlacedFinding[];
  locate(document: number, pointer: string): Range | undefined;
  /** Offset of a document's root node. */
  documentOffset(document: number): number;
}

const E = jsyaml.EVENT_ID;

/**
 * Which path parseYaml takes: `fast` (the block reader, else js-yaml, the full path on refusal), `events` (the
 * same without the block reader) or `full` (the `yaml` package always).
 */
export type ParsePath = 'fast' | 'events' | 'full';
let parsePath: ParsePath = 'fast';

/**
 * Sets the path parseYaml takes and returns the previous one. The full path exists for files the fast path
 * refuses and `events` for files the block reader leaves; forcing them is for the differential tests that hold
 * the paths to the same answers.
 */
export function setParsePath(path: ParsePath): ParsePath {
  const previous = parsePath;
  parsePath = path;
  return previous;
}

/** Parses all documents of a text. Never throws. */
export function parseYaml(text: string): YamlFile {
  if (parsePath === 'full') return parseSlow(text);
  if (parsePath === 'fast') {
    // Most files are plain block YAML: read in one walk, without event objects (block-scan.ts).
    const scan = scanBlockYaml(text);
    if (scan !== undefined) return fastResult(new EventIndex(text, scan.events), scan.values);
  }
  let events: YamlEvent[];
  let values: unknown[];
  try {
    // What js-yaml's loadAll does, in its two steps, so that the events that carry positions are kept and
    // the text is parsed once.
    events = jsyaml.parseEvents(text, { maxDepth: MAX_NESTING_DEPTH });
    values = jsyaml.constructFromEvents(events, { source: text, maxAliases: 0 });
  } catch (err) {
    if (err instanceof jsyaml.YAMLException && /maxDepth/.test(err.reason)) {
      const offset = err.mark?.position ?? 0;
      return {
        documents: [],
        findings: [
          placed(
            Code.nestingTooDeep,
            `collections are nested deeper than ${MAX_NESTING_DEPTH} levels`,
            -1,
            offset,
          ),
        ],
        locate: () => undefined,
        documentOffset: () => offset,
      };
    }
    return parseSlow(text);
  }
  const compact = compactEvents(text, events);
  return compact.exact
    ? fastResult(new EventIndex(text, compact.arrays, compact.indents), values)
    : parseSlow(text);
}

/**
 * js-yaml's events of a file as compact arrays (what positions need of them; the event objects die young, as
 * in js-yaml's own loadAll), with block scalars' indentations, and whether every mapping key is one both
 * paths name alike (see isPlainKey): when one is not, the file goes to the full path.
 */
export function compactEvents(
  text: string,
  events: readonly YamlEvent[],
): { arrays: EventArrays; indents: Map<number, number> | undefined; exact: boolean } {
  const n = events.length;
  const types = new Uint8Array(n);
  const starts = new Int32Array(n);
  const ends = new Int32Array(n);
  const forms = new Uint8Array(n);
  const docStarts: number[] = [];
  let indents: Map<number, number> | undefined;
  let exact = true;
  const open: number[] = [];
  /** For each open collection: a mapping whose next node is a key. */
  const keyNext: boolean[] = [];
  for (let i = 0; i < n; i++) {
    const e = events[i] as YamlEvent;
    const t = e.type;
    types[i] = t;
    starts[i] = eventStart(e);
    if (t !== E.POP && t !== E.DOCUMENT && keyNext.length > 0) {
      const top = keyNext.length - 1;
      if (keyNext[top] === true && !isPlainKey(text, e)) exact = false;
      if (types[open[top] ?? 0] === E.MAPPING) keyNext[top] = !keyNext[top];
    }
    if (t === E.SCALAR) {
      ends[i] = e.valueEnd;
      forms[i] = e.style | (e.chomping << 3) | (e.fast ? 32 : 0);
      if (e.indent !== -1) (indents ??= new Map()).set(i, e.indent);
    } else if (t === E.DOCUMENT) docStarts.push(i);
    else if (t === E.MAPPING || t === E.SEQUENCE) {
      open.push(i);
      keyNext.push(t === E.MAPPING);
    } else if (t === E.POP) {
      const start = open.pop();
      keyNext.pop();
      if (start !== undefined) ends[start] = i + 1;
    }
  }
  return { arrays: { length: n, types, starts, ends, forms, docStarts }, indents, exact };
}

/**
 * True for a mapping key both parsers turn into the same property name: a scalar with text, no tag, no
 * anchor, and not a null (js-yaml names a null key "null", the `yaml` package ""; a collection as a key is
 * refused by the full path).
 */
function isPlainKey(text: string, e: YamlEvent): boolean {
  if (e.type !== E.SCALAR || e.valueStart < 0 || e.tagStart !== -1 || e.anchorStart !== -1) return false;
  if (e.style !== jsyaml.SCALAR_STYLE.PLAIN) return true;
  return !isNullPlain(text, e.valueStart, e.valueEnd);
}

function placed(
  code: string,
  message: string,
  document: number,
  offset: number,
  endOffset?: number,
): PlacedFinding {
  const severity = code === Code.aliasUsed ? 'warning' : 'error';
  const p: PlacedFinding = { finding: { code, severity, message, pointer: '' }, document, offset };
  if (endOffset !== undefined) p.endOffset = endOffset;
  return p;
}

// ---------------------------------------------------------------------------------------------- fast path

/**
 * The clean-file result. The event objects die young (as in js-yaml's own loadAll): what positions need of
 * them is copied into a compact index first, so a lint of many files keeps a few typed arrays per file alive
 * instead of hundreds of thousands of small objects the garbage collector would have to move.
 */
function fastResult(index: EventIndex, values: unknown[]): YamlFile {
  const documents: YamlDocument[] = new Array<YamlDocument>(values.length);
  for (let i = 0; i < values.length; i++) documents[i] = { index: i, value: values[i] };
  return {
    documents,
    findings: [],
    locate(document, pointer) {
      const start = index.docStarts[document];
      return start === undefined ? undefined : index.locate(start + 1, pointer);
    },
    documentOffset(document) {
      const start = index.docStarts[document];
      const offset = start === undefined ? -1 : index.nodeStart(start + 1);
      return offset >= 0 ? offset : 0;
    },
  };
}

/** The start offset of a node's event (-1 for an empty scalar, -2 for an event that starts no node). */
function eventStart(e: YamlEvent): number {
  if (e.type === E.SCALAR) return e.valueStart;
  if (e.type === E.MAPPING || e.type === E.SEQUENCE) return e.start;
  if (e.type === E.ALIAS) return e.anchorStart;
  return NO_NODE;
}

const NO_NODE = -2;

/**
 * Keys of a mapping (items of a list) a lookup reads in place before it indexes the collection: bounded, so
 * locating every finding of a file stays linear in the file and the findings.
 */
const SCAN_LIMIT = 16;

/** Plain scalars the YAML 1.2 core schema reads as null. */
const NULL_PLAIN = ['~', 'null', 'Null', 'NULL'];

/** True when text[start, end) is a plain null; compared in place (every key of a file is tested). */
function isNullPlain(text: string, start: number, end: number): boolean {
  const length = end - start;
  if (length !== 1 && length !== 4) return false;
  for (const word of NULL_PLAIN) if (word.length === length && text.startsWith(word, start)) return true;
  return false;
}

/** A mapping entry: the key's offset and the index of the value's first event. */
interface MappingEntry {
  keyOffset: number;
  value: number;
}

/**
 * The event stream of one file, as parallel typed arrays (type, start, end of a scalar's value, and for a
 * collection the index of the event after its POP), indexed so that locating a pointer costs its depth, not
 * the size of the collections it walks through: the children of a collection are indexed (keys in a map,
 * items in an array) the first time a pointer goes through it. Locating every finding of a file is therefore
 * linear in the file plus the findings (issue 12, item 8).
 */
class EventIndex {
  readonly docStarts: number[];
  private readonly length: number;
  private readonly types: Uint8Array;
  private readonly starts: Int32Array;
  /** A scalar's value end; for a collection's start event, the index of the event after its POP. */
  private readonly ends: Int32Array;
  /** A scalar's style, chomping and `fast` flag (style | chomping << 3 | fast << 5), for key names. */
  private readonly scalarForms: Uint8Array;
  private readonly mappings = new Map<number, Map<string, MappingEntry>>();
  private readonly sequences = new Map<number, number[]>();

  /** `indents`: a block scalar's indentation, by event (block scalars as keys are rare; absent when none). */
  constructor(
    private readonly text: string,
    arrays: EventArrays,
    private readonly indents?: ReadonlyMap<number, number>,
  ) {
    this.length = arrays.length;
    this.types = arrays.types;
    this.starts = arrays.starts;
    this.ends = arrays.ends;
    this.scalarForms = arrays.forms;
    this.docStarts = arrays.docStarts;
  }

  /** The start offset of the node at event `i` (-1 for an empty scalar, -2 for no node). */
  nodeStart(i: number): number {
    return i < this.length ? (this.starts[i] ?? NO_NODE) : NO_NODE;
  }

  /** Index of the event after the node that starts at `i`. */
  private skip(i: number): number {
    const t = this.types[i];
    if (t !== E.MAPPING && t !== E.SEQUENCE) return i + 1;
    const end = this.ends[i] ?? 0;
    return end > i ? end : this.length;
  }

  /** The value of the scalar at event `i`, as js-yaml reads it. */
  private scalarText(i: number): string {
    const form = this.scalarForms[i] ?? 0;
    const valueStart = this.starts[i] ?? -1;
    // A scalar js-yaml marks `fast` is its text as written (what getScalarValue returns for it).
    if ((form & 32) !== 0 && valueStart >= 0) return this.text.slice(valueStart, this.ends[i] ?? valueStart);
    const scalar = {
      type: E.SCALAR,
      valueStart,
      valueEnd: this.ends[i] ?? -1,
      anchorStart: -1,
      anchorEnd: -1,
      tagStart: -1,
      tagEnd: -1,
      style: (form & 7) as jsyaml.ScalarStyle,
      chomping: ((form >> 3) & 3) as jsyaml.ChompingMode,
      indent: this.indents?.get(i) ?? -1,
      fast: (form & 32) !== 0,
    } satisfies jsyaml.ScalarEvent;
    return jsyaml.getScalarValue(this.text, scalar);
  }

  /** True when the key scalar at event `j` reads as `name`; a `fast` scalar is compared in place. */
  private isKey(j: number, name: string): boolean {
    const form = this.scalarForms[j] ?? 0;
    const start = this.starts[j] ?? -1;
    if ((form & 32) !== 0 && start >= 0)
      return (this.ends[j] ?? start) - start === name.length && this.text.startsWith(name, start);
    return this.scalarText(j) === name;
  }

  /**
   * The entry of key `name` in the mapping at event `i`: found by reading the first SCAN_LIMIT keys in place
   * (a policy's mappings are small; no index is built or kept), else in the mapping's index. The first of equal
   * keys, as the index has it.
   */
  private findEntry(i: number, name: string): MappingEntry | undefined {
    const indexed = this.mappings.get(i);
    if (indexed !== undefined) return indexed.get(name);
    let keys = 0;
    for (let j = i + 1; j < this.length && this.types[j] !== E.POP;) {
      if (++keys > SCAN_LIMIT) return this.mapping(i).get(name);
      const value = this.skip(j);
      if (this.types[j] === E.SCALAR && this.isKey(j, name)) return { keyOffset: this.starts[j] ?? 0, value };
      j = this.skip(value);
    }
    return undefined;
  }

  /** The first event of item `n` of the sequence at event `i`: read in place for the first items, else indexed. */
  private findItem(i: number, n: number): number | undefined {
    if (n >= SCAN_LIMIT || this.sequences.has(i)) return this.sequence(i)[n];
    let k = 0;
    for (let j = i + 1; j < this.length && this.types[j] !== E.POP; j = this.skip(j)) if (k++ === n) return j;
    return undefined;
  }

  private mapping(i: number): Map<string, MappingEntry> {
    let entries = this.mappings.get(i);
    if (entries === undefined) {
      entries = new Map();
      for (let j = i + 1; j < this.length && this.types[j] !== E.POP;) {
        const value = this.skip(j);
        if (this.types[j] === E.SCALAR) {
          const name = this.scalarText(j);
          if (!entries.has(name)) entries.set(name, { keyOffset: this.starts[j] ?? 0, value });
        }
        j = this.skip(value);
      }
      this.mappings.set(i, entries);
    }
    return entries;
  }

  private sequence(i: number): number[] {
    let items = this.sequences.get(i);
    if (items === undefined) {
      items = [];
      for (let j = i + 1; j < this.length && this.types[j] !== E.POP; j = this.skip(j)) {
        items.push(j);
      }
      this.sequences.set(i, items);
    }
    return items;
  }

  /** The range of `pointer` below the node at event `root`, or of its nearest existing ancestor. */
  locate(root: number, pointer: string): Range | undefined {
    let i = root;
    let keyOffset: number | undefined;
    // Empty scalars (a bare `-` or `key:`) have no offset of their own: fall back to the nearest ancestor's.
    let fallback = 0;
    for (const seg of splitPointer(pointer)) {
      const t = this.types[i];
      const here = this.nodeStart(i);
      if (here >= 0) fallback = here;
      let next = -1;
      if (t === E.MAPPING) {
        const entry = this.findEntry(i, seg);
        if (entry !== undefined) {
          keyOffset = entry.keyOffset;
          next = entry.value;
        }
      } else if (t === E.SEQUENCE && /^\d+$/.test(seg)) {
        const item = this.findItem(i, Number(seg));
        if (item !== undefined) {
          next = item;
          keyOffset = undefined;
        }
      }
      if (next < 0) break;
      i = next;
    }
    let start = this.nodeStart(i);
    if (start === NO_NODE) return undefined;
    if (start < 0) start = keyOffset ?? fallback;
    const valueEnd = this.types[i] === E.SCALAR ? (this.ends[i] ?? -1) : -1;
    const end = valueEnd >= 0 ? valueEnd : start;
    return { offset: keyOffset ?? start, endOffset: Math.max(end, keyOffset ?? start) };
  }
}

/**
 * Segments by pointer: the findings of many documents name the same few pointers
 * (`/spec/network/matchProtocols/0`). Bounded in entries and in pointer length, so that odd input costs time,
 * not memory. The lists are frozen: callers read them.
 */
const pointerSegments = new Map<string, readonly string[]>();
const MAX_POINTERS = 4096;
const MAX_CACHED_POINTER = 200;

/** Splits an RFC 6901 pointer into unescaped segments (cached for short pointers). */
export function splitPointer(pointer: string): readonly string[] {
  if (pointer.length > MAX_CACHED_POINTER) return splitPointerText(pointer);
  let segments = pointerSegments.get(pointer);
  if (segments === undefined) {
    segments = Object.freeze(splitPointerText(pointer));
    if (pointerSegments.size >= MAX_POINTERS) pointerSegments.clear();
    pointerSegments.set(pointer, segments);
  }
  return segments;
}

function splitPointerText(pointer: string): string[] {
  if (pointer === '') return [];
  const segments = pointer.slice(1).split('/');
  if (!pointer.includes('~')) return segments;
  return segments.map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
}

// ---------------------------------------------------------------------------------------------- slow path

function codeOfYamlError(code: string): string {
  if (code === 'DUPLICATE_KEY') return Code.duplicateKey;
  if (code === 'TAB_AS_INDENT') return Code.tabIndentation;
  return Code.yamlSyntax;
}

function parseSlow(text: string): YamlFile {
  let docs: ReturnType<typeof parseAllDocuments>;
  try {
    docs = parseAllDocuments(text, { uniqueKeys: true, prettyErrors: false });
  } catch (err) {
    const message =
      err instanceof RangeError
        ? `collections are nested deeper than ${MAX_NESTING_DEPTH} levels`
        : 'the YAML parser could not read this file';
    return {
      documents: [],
      findings: [placed(err instanceof RangeError ? Code.nestingTooDeep : Code.yamlSyntax, message, -1, 0)],
      locate: () => undefined,
      documentOffset: () => 0,
    };
  }
  const documents: YamlDocument[] = [];
  const findings: PlacedFinding[] = [];
  docs.forEach((doc, index) => {
    const offset = doc.contents?.range?.[0] ?? doc.range?.[0] ?? 0;
    if (doc.errors.length > 0) {
      for (const e of doc.errors) {
        findings.push(placed(codeOfYamlError(e.code), firstLine(e.message), index, e.pos[0], e.pos[1]));
      }
      return;
    }
    let complexKey: number | undefined;
    visit(doc, {
      Pair(_key, pair) {
        if (complexKey === undefined && pair.key !== null && !isScalar(pair.key)) {
          complexKey = (pair.key as YamlNode).range?.[0] ?? offset;
        }
      },
    });
    if (complexKey !== undefined) {
      findings.push(
        placed(
          Code.yamlSyntax,
          'mapping keys must be plain strings, not lists or mappings',
          index,
          complexKey,
        ),
      );
      return;
    }
    try {
      const value: unknown = doc.toJS({ maxAliasCount: MAX_ALIAS_COUNT });
      if (depthExceeds(value, MAX_NESTING_DEPTH)) {
        findings.push(
          placed(
            Code.nestingTooDeep,
            `collections are nested deeper than ${MAX_NESTING_DEPTH} levels`,
            index,
            offset,
          ),
        );
        return;
      }
      visit(doc, {
        Alias(_key, node) {
          const [s, e] = node.range ?? [offset, offset];
          findings.push(placed(Code.aliasUsed, `alias *${node.source} is expanded here`, index, s, e));
        },
      });
      documents.push({ index, value });
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      if (/excessive alias count/i.test(message)) {
        findings.push(
          placed(
            Code.aliasExpansionLimit,
            `aliases expand more than ${MAX_ALIAS_COUNT} times; the document is not read`,
            index,
            offset,
          ),
        );
      } else if (err instanceof RangeError) {
        findings.push(
          placed(
            Code.nestingTooDeep,
            `collections are nested deeper than ${MAX_NESTING_DEPTH} levels`,
            index,
            offset,
          ),
        );
      } else {
        // An alias whose anchor is missing (anchors do not cross documents), or another composition error.
        findings.push(placed(Code.yamlSyntax, firstLine(message), index, offset));
      }
    }
  });
  return {
    documents,
    findings,
    locate(document, pointer) {
      const doc = docs[document];
      if (doc === undefined) return undefined;
      return locateInNodes(text, doc.contents, pointer);
    },
    documentOffset(document) {
      const doc = docs[document];
      return doc?.contents?.range?.[0] ?? doc?.range?.[0] ?? 0;
    },
  };
}

function firstLine(message: string): string {
  const line = message.split('\n')[0] ?? message;
  return line.replace(/ at line \d+, column \d+:?$/, '');
}

/** The pairs of a map by key (first occurrence), built once per map: lookups do not scan the map. */
const pairIndexes = new WeakMap<YAMLMap, Map<string, Pair>>();

function findPair(map: YAMLMap, key: string): Pair | undefined {
  let index = pairIndexes.get(map);
  if (index === undefined) {
    index = new Map();
    for (const p of map.items) {
      if (!isScalar(p.key)) continue;
      const name = String(p.key.value);
      if (!index.has(name)) index.set(name, p);
    }
    pairIndexes.set(map, index);
  }
  return index.get(key);
}

function locateInNodes(text: string, root: YamlNode | null, pointer: string): Range | undefined {
  let node: YamlNode | null = root;
  let keyOffset: number | undefined;
  // As on the fast path, an empty scalar falls back to its key or to the nearest ancestor's start.
  let fallback = 0;
  for (const seg of splitPointer(pointer)) {
    const here = node === null ? undefined : valueRange(text, node);
    if (here !== undefined && here[0] >= 0) fallback = here[0];
    let next: YamlNode | null | undefined;
    if (isMap(node)) {
      const pair = findPair(node, seg);
      if (pair !== undefined) {
        keyOffset = isScalar(pair.key) ? valueRange(text, pair.key)?.[0] : undefined;
        next = pair.value as YamlNode | null;
      }
    } else if (isSeq(node) && /^\d+$/.test(seg)) {
      next = node.items[Number(seg)] as YamlNode | undefined;
      keyOffset = undefined;
    }
    if (next === undefined || next === null) break;
    node = next;
  }
  if (node === null) return undefined;
  const range = valueRange(text, node);
  if (range === undefined) return undefined;
  let [start, end] = range;
  if (start < 0) start = end = keyOffset ?? fallback;
  const offset = keyOffset ?? start;
  return { offset, endOffset: Math.max(end, offset) };
}

/**
 * A node's range as the fast path reads it from js-yaml's events, so that both paths place a finding alike:
 * a collection is its start (its first line, not its extent); a quoted scalar is its content without the
 * quotes; a block scalar runs from the line after its header through the blank lines after it; an empty
 * scalar has no range of its own ([-1, -1]).
 */
function valueRange(text: string, node: YamlNode): [number, number] | undefined {
  const range = node.range;
  if (range === undefined || range === null) return undefined;
  const [start, end] = range;
  if (isMap(node) || isSeq(node)) return [start, start];
  if (!isScalar(node)) return [start, end];
  switch (node.type) {
    case 'QUOTE_DOUBLE':
    case 'QUOTE_SINGLE':
      return [start + 1, Math.max(start + 1, end - 1)];
    case 'BLOCK_LITERAL':
    case 'BLOCK_FOLDED':
      return blockScalarRange(text, start, end);
    default:
      return start === end && node.source === '' ? [-1, -1] : [start, end];
  }
}

/** js-yaml's range of a block scalar whose header starts at `header` and whose content ends at `contentEnd`. */
function blockScalarRange(text: string, header: number, contentEnd: number): [number, number] {
  let start = header;
  while (start < text.length && text[start] !== '\n' && text[start] !== '\r') start++;
  if (text[start] === '\r' && text[start + 1] === '\n') start += 2;
  else if (start < text.length) start++;
  let end = Math.max(start, contentEnd);
  for (;;) {
    let p = end;
    while (text.charCodeAt(p) === 32) p++;
    const c = text.charCodeAt(p);
    if (c === 10) end = p + 1;
    else if (c === 13) end = text.charCodeAt(p + 1) === 10 ? p + 2 : p + 1;
    else break;
  }
  return [start, end];
}

/** True when `value` nests deeper than `max` (iterative: hostile input must not overflow the stack). */
function depthExceeds(value: unknown, max: number): boolean {
  const stack: Array<[unknown, number]> = [[value, 0]];
  const seen = new Set<object>();
  while (stack.length > 0) {
    const item = stack.pop();
    if (item === undefined) break;
    const [v, d] = item;
    if (v === null || typeof v !== 'object' || seen.has(v)) continue;
    if (d > max) return true;
    seen.add(v);
    for (const child of Object.values(v)) stack.push([child, d + 1]);
  }
  return false;
}
