// Multi-document YAML parsing with two paths. The fast path (js-yaml's event parser) reads clean files at
// close to raw parsing speed and keeps only the event stream, from which positions are recovered on demand.
// Any file the fast path refuses (syntax, duplicate keys, tabs, aliases) is parsed again by the `yaml` package,
// which reports every problem of every document with its position and still yields the sound documents.
import { Code } from '../diagnostics/codes/code.js';
import * as jsyaml from 'js-yaml';
import type { Event as YamlEvent } from 'js-yaml';
import { isMap, isScalar, isSeq, parseAllDocuments, visit } from 'yaml';
import type { Node as YamlNode, Pair, YAMLMap } from 'yaml';
import type { Finding } from '../diagnostics/finding.js';

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

/** Parses all documents of a text. Never throws. */
export function parseYaml(text: string): YamlFile {
  let values: unknown[];
  try {
    values = jsyaml.loadAll(text, { maxDepth: MAX_NESTING_DEPTH, maxAliases: 0 });
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
  return fastResult(text, values);
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
 * The clean-file result. Positions are not needed unless something is reported or a rule's line is read, so
 * the event stream that carries them is parsed and indexed on first use only.
 */
function fastResult(text: string, values: unknown[]): YamlFile {
  let index: EventIndex | undefined;
  const ensureIndex = (): EventIndex => {
    index ??= new EventIndex(text, jsyaml.parseEvents(text, { maxDepth: MAX_NESTING_DEPTH }));
    return index;
  };
  return {
    documents: values.map((value, index) => ({ index, value })),
    findings: [],
    locate(document, pointer) {
      const ix = ensureIndex();
      const start = ix.docStarts[document];
      return start === undefined ? undefined : ix.locate(start + 1, pointer);
    },
    documentOffset(document) {
      const ix = ensureIndex();
      const start = nodeStart(ix.events[(ix.docStarts[document] ?? -1) + 1]);
      return start !== undefined && start >= 0 ? start : 0;
    },
  };
}

function nodeStart(e: YamlEvent | undefined): number | undefined {
  if (e === undefined) return undefined;
  if (e.type === E.SCALAR) return e.valueStart;
  if (e.type === E.MAPPING || e.type === E.SEQUENCE) return e.start;
  if (e.type === E.ALIAS) return e.anchorStart;
  return undefined;
}

/** A mapping entry: the key's offset and the index of the value's first event. */
interface MappingEntry {
  keyOffset: number;
  value: number;
}

/**
 * The event stream of one file, indexed so that locating a pointer costs its depth, not the size of the
 * collections it walks through: the end of every collection is computed in one pass, and the children of a
 * collection are indexed (keys in a map, items in an array) the first time a pointer goes through it.
 * Locating every finding of a file is therefore linear in the file plus the findings (issue 12, item 8).
 */
class EventIndex {
  readonly docStarts: number[] = [];
  /** For each collection's start event, the index of the event after its POP. */
  private readonly ends: Int32Array;
  private readonly mappings = new Map<number, Map<string, MappingEntry>>();
  private readonly sequences = new Map<number, number[]>();

  constructor(
    private readonly text: string,
    readonly events: readonly YamlEvent[],
  ) {
    this.ends = new Int32Array(events.length);
    const open: number[] = [];
    for (let i = 0; i < events.length; i++) {
      const t = events[i]?.type;
      if (t === E.DOCUMENT) this.docStarts.push(i);
      else if (t === E.MAPPING || t === E.SEQUENCE) open.push(i);
      else if (t === E.POP) {
        const start = open.pop();
        if (start !== undefined) this.ends[start] = i + 1;
      }
    }
  }

  /** Index of the event after the node that starts at `i`. */
  private skip(i: number): number {
    const t = this.events[i]?.type;
    if (t !== E.MAPPING && t !== E.SEQUENCE) return i + 1;
    const end = this.ends[i] ?? 0;
    return end > i ? end : this.events.length;
  }

  private mapping(i: number): Map<string, MappingEntry> {
    let entries = this.mappings.get(i);
    if (entries === undefined) {
      entries = new Map();
      for (let j = i + 1; j < this.events.length && this.events[j]?.type !== E.POP;) {
        const key = this.events[j];
        const value = this.skip(j);
        if (key?.type === E.SCALAR) {
          const name = jsyaml.getScalarValue(this.text, key);
          if (!entries.has(name)) entries.set(name, { keyOffset: key.valueStart, value });
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
      for (let j = i + 1; j < this.events.length && this.events[j]?.type !== E.POP; j = this.skip(j)) {
        items.push(j);
      }
      this.sequences.set(i, items);
    }
    return items;
  }

  /** The range of `pointer` below the node at event `root`, or of its nearest existing ancestor. */
  locate(root: number, pointer: string): Range | undefined {
    const { events } = this;
    let i = root;
    let keyOffset: number | undefined;
    // Empty scalars (a bare `-` or `key:`) have no offset of their own: fall back to the nearest ancestor's.
    let fallback = 0;
    for (const seg of splitPointer(pointer)) {
      const e = events[i];
      const here = nodeStart(e);
      if (here !== undefined && here >= 0) fallback = here;
      let next = -1;
      if (e?.type === E.MAPPING) {
        const entry = this.mapping(i).get(seg);
        if (entry !== undefined) {
          keyOffset = entry.keyOffset;
          next = entry.value;
        }
      } else if (e?.type === E.SEQUENCE && /^\d+$/.test(seg)) {
        const item = this.sequence(i)[Number(seg)];
        if (item !== undefined) {
          next = item;
          keyOffset = undefined;
        }
      }
      if (next < 0) break;
      i = next;
    }
    const node = events[i];
    let start = nodeStart(node);
    if (start === undefined) return undefined;
    if (start < 0) start = keyOffset ?? fallback;
    const end = node?.type === E.SCALAR && node.valueEnd >= 0 ? node.valueEnd : start;
    return { offset: keyOffset ?? start, endOffset: Math.max(end, keyOffset ?? start) };
  }
}

/** Splits an RFC 6901 pointer into unescaped segments. */
export function splitPointer(pointer: string): string[] {
  if (pointer === '') return [];
  return pointer
    .slice(1)
    .split('/')
    .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
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
      return locateInNodes(doc.contents, pointer);
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

function locateInNodes(root: YamlNode | null, pointer: string): Range | undefined {
  let node: YamlNode | null = root;
  let keyOffset: number | undefined;
  for (const seg of splitPointer(pointer)) {
    let next: YamlNode | null | undefined;
    if (isMap(node)) {
      const pair = findPair(node, seg);
      if (pair !== undefined) {
        keyOffset = isScalar(pair.key) ? pair.key.range?.[0] : undefined;
        next = pair.value as YamlNode | null;
      }
    } else if (isSeq(node) && /^\d+$/.test(seg)) {
      next = node.items[Number(seg)] as YamlNode | undefined;
      keyOffset = undefined;
    }
    if (next === undefined || next === null) break;
    node = next;
  }
  const range = node?.range;
  if (range === undefined || range === null) return undefined;
  return { offset: keyOffset ?? range[0], endOffset: range[1] };
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
