// The block reader (compiler/parse/block-scan.ts) against js-yaml's event parser, the path it stands in for:
// on every text the reader accepts, the documents' values (with their key order) and the event arrays that
// positions are read from must be those of js-yaml's parseEvents + constructFromEvents, and js-yaml must
// accept the text with every key named alike on both paths. The reader may leave any text to js-yaml, but not
// the plain policy files it exists for. Texts: the bench corpus, the examples and fixtures, generated block
// YAML in varied styles (indentation, lists under or beside their key, comments, blank lines, trailing
// spaces, LF and CRLF line ends, numbers, booleans, nulls, quoted scalars, flow lists and mappings, odd keys
// and values), and those texts mutated. Deliberately broken readers are caught by the same comparison. And
// through either path, lint and compile give the same diagnostics (with positions) and artifacts.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import fc from 'fast-check';
import * as jsyaml from 'js-yaml';
import '../../support/property-seed.js';
import { scanBlockYaml, type BlockScan } from '../../../compiler/parse/block-scan.js';
import { compile } from '../../../compiler/compile.js';
import { lintTexts } from '../../../compiler/lint.js';
import { compactEvents, MAX_NESTING_DEPTH, setParsePath } from '../../../compiler/parse/parse-yaml.js';
import { generateCorpus } from '../../../bench/compile/generate-corpus.js';
import { COMPILER_FIXTURES, REPO_ROOT } from '../../support/paths.js';
import { mutateText, textMutation } from '../../support/text-mutation.js';

type Reader = (text: string) => BlockScan | undefined;

/** The values with their key order and types, as text (JSON keeps key order and tells 1 from "1"). */
function shape(values: unknown): string {
  return JSON.stringify(values);
}

/** Why the reader's answer on `text` differs from js-yaml's, or undefined when it does not (or it left the text). */
function difference(text: string, read: Reader = scanBlockYaml): string | undefined {
  const scan = read(text);
  if (scan === undefined) return undefined;
  let events: jsyaml.Event[];
  let values: unknown[];
  try {
    events = jsyaml.parseEvents(text, { maxDepth: MAX_NESTING_DEPTH });
    values = jsyaml.constructFromEvents(events, { source: text, maxAliases: 0 });
  } catch (err) {
    return `js-yaml refuses a text the reader accepted: ${err instanceof Error ? err.message : String(err)}`;
  }
  const expected = compactEvents(text, events);
  if (!expected.exact) return 'the reader accepted a key the two paths name differently';
  if (expected.indents !== undefined) return 'the reader accepted a block scalar';
  if (shape(scan.values) !== shape(values))
    return `values differ:\n  reader  ${shape(scan.values)}\n  js-yaml ${shape(values)}`;
  try {
    assert.deepStrictEqual(scan.values, values);
  } catch (err) {
    return `values differ: ${err instanceof Error ? err.message : String(err)}`;
  }
  const a = scan.events;
  const b = expected.arrays;
  if (a.length !== b.length) return `event counts differ: reader ${a.length}, js-yaml ${b.length}`;
  if (shape(a.docStarts) !== shape(b.docStarts))
    return `document starts differ: ${shape(a.docStarts)} vs ${shape(b.docStarts)}`;
  for (let i = 0; i < a.length; i++) {
    const got = [a.types[i], a.starts[i], a.ends[i], a.forms[i]];
    const want = [b.types[i], b.starts[i], b.ends[i], b.forms[i]];
    if (shape(got) !== shape(want))
      return `event ${i} differs: reader [type, start, end, form] ${shape(got)}, js-yaml ${shape(want)}`;
  }
  return undefined;
}

function assertSame(text: string, read: Reader = scanBlockYaml): void {
  const d = difference(text, read);
  if (d !== undefined) assert.fail(`${d}\ntext: ${JSON.stringify(text)}`);
}

// ------------------------------------------------------------------------------------------ generated texts

/** Scalars as written: plain words, paths, patterns, and the forms the reader must read as js-yaml does or leave. */
const SCALARS = [
  'tool-1',
  '/usr/bin/tool',
  '/home/*/.app/*.key',
  '/opt/app/',
  'Block',
  'net_raw',
  'tcp',
  'team-3',
  'a b c',
  'x:y',
  'http://example.com/a',
  'k=v',
  'nul',
  'nulls',
  'null',
  'Null',
  'NULL',
  'nULL',
  '~',
  'true',
  'True',
  'TRUE',
  'tRUE',
  'false',
  'False',
  'FALSE',
  'yes',
  'no',
  'on',
  '0',
  '5',
  '007',
  '10',
  '123456789012345',
  '1234567890123456789',
  '1.5',
  '1e3',
  '0x1F',
  '0o17',
  '10Mi',
  '2001-12-14',
  '-1',
  '+1',
  '.inf',
  '.5',
  'a # comment',
  'a#b',
  'trailing  ',
  '',
  'a: b',
  "'quoted'",
  '"quoted"',
  '[a, b]',
  '[]',
  '[a, ]',
  '[ a ,b , 3 ]',
  '[1, "x", true, null]',
  "['a', 'b c']",
  '[a: b]',
  '[[a]]',
  '[a # c]',
  '[a, b] # c',
  '[a, b]x',
  '"a\\"b"',
  "'it''s'",
  '"a" # c',
  '"a": b',
  '"a"b',
  '"a"#c',
  '"a:b #c"',
  "''",
  '""',
  '{a: 1}',
  'caf\u00e9 cr\u00e8me',
  '\u00e9t\u00e9',
  '\u65e5\u672c\u8a9e',
  'a\u00a0b',
  '\u00a0',
  'x\u2028y',
  '"\u00fcber"',
  'a\u0085b',
  'a\ufeffb',
  '\ufeff',
  'x\ud83d\ude00',
  'a\u0301',
  '{}',
  '{ app: web , tier: "x y" }',
  '{a: 1,}',
  '{a:b}',
  '{a}',
  '{a: }',
  '{"a": 1}',
  '{a: [b]}',
  '{a: {b: c}}',
  '{a: 1, a: 2}',
  '{null: 1}',
  '-c',
  '-.5',
  '[-c, pip]',
  '[- c]',
  '&anchor a',
  '*alias',
  '!!str a',
  '|',
  '- a',
  '? a',
  '@a',
  '%a',
  '`a',
  ',a',
];

const KEYS = [
  'name',
  'kind',
  'spec',
  'path',
  'matchPaths',
  'fromSource',
  'app',
  'app.kubernetes.io/name',
  'kubernetes.io/hostname',
  'a_b',
  '_x',
  'a-b',
  'k8s',
  'null',
  'True',
  'false',
  '__proto__',
  'constructor',
  'toString',
  '1',
  'a b',
  'x:y',
  '"q"',
  '-k',
];

/** Scalars and keys the reader reads (generated texts made of these only must be read). */
const PLAIN_SCALARS = [
  'tool-1',
  '/usr/bin/tool',
  '/home/*/.app/*.key',
  'Block',
  'a b c',
  'x:y',
  '5',
  '007',
  'true',
  'null',
  'False',
  '169.254.169.254/32',
  '10Mi',
  '"double quoted: #1"',
  "'single [quoted]'",
  '""',
  '[a, b]',
  '[tier=frontend, "x y", 80, true]',
  '[]',
  '{}',
  '{app: web, tier: "x y", n: 3}',
  '[-m, pip]',
  '-c',
  'caf\u00e9 \u65e5\u672c',
  '[\u00e9t\u00e9, "\u00fcber"]',
];
const PLAIN_KEYS = ['name', 'spec', 'path', 'app.kubernetes.io/name', 'a_b', 'a-b', 'k8s'];

/** Mostly keys the reader reads, numbered (few duplicates), now and then an odd one. */
const key = fc.oneof(
  {
    weight: 12,
    arbitrary: fc.tuple(fc.constantFrom(...PLAIN_KEYS), fc.nat({ max: 20 })).map(([k, n]) => `${k}${n}`),
  },
  { weight: 1, arbitrary: fc.constantFrom(...KEYS) },
);

type Tree = { s: string } | { m: Array<[string, Tree]> } | { l: Tree[] };

const tree: fc.Arbitrary<Tree> = fc.letrec<{ node: Tree; map: Tree }>((tie) => ({
  node: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc
      .oneof(
        { weight: 12, arbitrary: fc.constantFrom(...PLAIN_SCALARS) },
        { weight: 1, arbitrary: fc.constantFrom(...SCALARS) },
      )
      .map((s): Tree => ({ s })),
    tie('map'),
    fc.array(tie('node'), { minLength: 1, maxLength: 3 }).map((l): Tree => ({ l })),
  ),
  map: fc.array(fc.tuple(key, tie('node')), { minLength: 1, maxLength: 4 }).map((m): Tree => ({ m })),
})).map;

interface Style {
  /** Columns a nested mapping or list is indented by. */
  width: number;
  /** Lists under a key are indented (else written in the key's column). */
  indentLists: boolean;
  /** Spaces after a list item's dash. */
  dashGap: number;
}

function write(node: Tree, column: number, style: Style, out: string[]): void {
  const pad = ' '.repeat(column);
  if ('s' in node) {
    out.push(`${pad}${node.s}`);
    return;
  }
  if ('m' in node) {
    for (const [k, v] of node.m) {
      if ('s' in v) out.push(v.s === '' ? `${pad}${k}:` : `${pad}${k}: ${v.s}`);
      else if ('m' in v) {
        out.push(`${pad}${k}:`);
        write(v, column + style.width, style, out);
      } else {
        out.push(`${pad}${k}:`);
        write(v, style.indentLists ? column + style.width : column, style, out);
      }
    }
    return;
  }
  const lead = `-${' '.repeat(style.dashGap)}`;
  for (const item of node.l) {
    if ('s' in item) {
      out.push(item.s === '' ? `${pad}-` : `${pad}${lead}${item.s}`);
      continue;
    }
    // The item's first line goes beside the dash (a compact mapping or list).
    const inner: string[] = [];
    write(item, column + lead.length, style, inner);
    const first = inner[0] ?? '';
    inner[0] = `${pad}${lead}${first.slice(column + lead.length)}`;
    for (const line of inner) out.push(line);
  }
}

/** Comments, blank lines and trailing spaces put into a text's lines. */
interface Decoration {
  at: number;
  kind: 'comment' | 'blank' | 'trailing' | 'spaces';
  indent: number;
}

function decorate(lines: string[], decorations: readonly Decoration[]): string[] {
  const out = [...lines];
  for (const d of decorations) {
    const i = out.length === 0 ? 0 : d.at % out.length;
    if (d.kind === 'comment') out.splice(i, 0, `${' '.repeat(d.indent)}# note ${d.at}`);
    else if (d.kind === 'blank') out.splice(i, 0, '');
    else if (d.kind === 'spaces') out.splice(i, 0, ' '.repeat(d.indent + 1));
    else out[i] = `${out[i] ?? ''}${' '.repeat((d.indent % 3) + 1)}`;
  }
  return out;
}

const style: fc.Arbitrary<Style> = fc.record({
  width: fc.integer({ min: 1, max: 4 }),
  indentLists: fc.boolean(),
  dashGap: fc.integer({ min: 1, max: 3 }),
});

const decoration: fc.Arbitrary<Decoration> = fc.record({
  at: fc.nat(),
  kind: fc.constantFrom('comment' as const, 'blank' as const, 'trailing' as const, 'spaces' as const),
  indent: fc.integer({ min: 0, max: 10 }),
});

/** A file of block YAML: documents (root mappings) with `---` between them, perhaps before the first too. */
const blockText: fc.Arbitrary<string> = fc
  .record({
    docs: fc.array(fc.tuple(tree, style), { minLength: 1, maxLength: 3 }),
    leadingMarker: fc.boolean(),
    finalNewline: fc.boolean(),
    decorations: fc.array(decoration, { maxLength: 4 }),
    lineEnd: fc.constantFrom('\n', '\r\n'),
  })
  .map(({ docs, leadingMarker, finalNewline, decorations, lineEnd }) => {
    const texts = docs.map(([root, s]) => {
      const lines: string[] = [];
      write(root, 0, s, lines);
      return lines.join('\n');
    });
    const lines = decorate(
      `${leadingMarker ? '---\n' : ''}${texts.join('\n---\n')}`.split('\n'),
      decorations,
    );
    return `${lines.join(lineEnd)}${finalNewline ? lineEnd : ''}`;
  });

function plainOnly(node: Tree): Tree {
  if ('s' in node) return { s: PLAIN_SCALARS[node.s.length % PLAIN_SCALARS.length] ?? 'x' };
  if ('l' in node) return { l: node.l.map((item) => ('l' in item ? { s: 'x' } : plainOnly(item))) };
  const seen = new Set<string>();
  const m: Array<[string, Tree]> = [];
  node.m.forEach(([k, v], i) => {
    const key = `${PLAIN_KEYS[k.length % PLAIN_KEYS.length] ?? 'k'}${i}`;
    if (!seen.has(key)) m.push([key, plainOnly(v)]);
    seen.add(key);
  });
  return { m };
}

// ------------------------------------------------------------------------------------------ mutations

const tokens = fc.constantFrom(
  '\t',
  ':',
  ': ',
  '- ',
  '-',
  '&a ',
  '*a',
  '"',
  "'",
  '{a: 1}',
  '[x, y]',
  '\n',
  '\r\n',
  ' ',
  '  ',
  '#',
  ' # note',
  '|\n    text\n',
  '---\n',
  '---',
  '...\n',
  '\u00e9',
  '!!str ',
  '? ',
  'null',
  '~',
  '1.5',
  '-1',
  'true',
  '__proto__: 1\n',
);

const mutation = textMutation(tokens, 6);

// ------------------------------------------------------------------------------------------ texts on disk

const corpus = generateCorpus(300, 25).map((s) => s.text);
const onDisk = [
  ...readdirSync(path.join(REPO_ROOT, 'policies', 'examples')).map((f) =>
    path.join(REPO_ROOT, 'policies', 'examples', f),
  ),
  ...['valid', 'invalid'].flatMap((d) =>
    readdirSync(path.join(COMPILER_FIXTURES, d))
      .filter((f) => f.endsWith('.yaml'))
      .map((f) => path.join(COMPILER_FIXTURES, d, f)),
  ),
  ...readdirSync(path.join(REPO_ROOT, 'test', 'fixtures', 'conformance'))
    .filter((f) => f.endsWith('.yaml'))
    .map((f) => path.join(REPO_ROOT, 'test', 'fixtures', 'conformance', f)),
].map((p) => readFileSync(p, 'utf8'));

describe('the block reader reads what js-yaml reads, value for value and event for event (property, fixed seed)', function () {
  this.timeout(120_000);

  it('reads every file of the bench corpus (the files it exists for), as js-yaml does', () => {
    for (const lf of corpus) {
      for (const text of [lf, lf.replace(/\n/g, '\r\n')]) {
        assert.ok(scanBlockYaml(text) !== undefined, `the reader left a corpus file:\n${text.slice(0, 400)}`);
        assertSame(text);
      }
    }
  });

  it('agrees with js-yaml on the examples and the compiler and conformance fixtures (and reads four in five of them)', () => {
    let read = 0;
    for (const text of onDisk) {
      assertSame(text);
      assertSame(text.replace(/\n/g, '\r\n'));
      if (scanBlockYaml(text) !== undefined) read++;
    }
    assert.ok(read * 5 > onDisk.length * 4, `the reader read only ${read} of ${onDisk.length} files`);
  });

  it('reads generated plain block YAML in every style it covers, as js-yaml does', () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(tree, style), { minLength: 1, maxLength: 3 }),
        fc.boolean(),
        fc.constantFrom('\n', '\r\n'),
        (docs, leadingMarker, lineEnd) => {
          const lf = `${leadingMarker ? '---\n' : ''}${docs
            .map(([root, s]) => {
              const lines: string[] = [];
              write(plainOnly(root), 0, s, lines);
              return lines.join('\n');
            })
            .join('\n---\n')}\n`;
          const text = lf.replace(/\n/g, lineEnd);
          assert.ok(scanBlockYaml(text) !== undefined, `the reader left a plain text:\n${text}`);
          assertSame(text);
        },
      ),
      { numRuns: 500 },
    );
  });

  it('agrees with js-yaml on generated block YAML with odd scalars, keys, comments and blank lines', () => {
    let read = 0;
    fc.assert(
      fc.property(blockText, (text) => {
        assertSame(text);
        if (scanBlockYaml(text) !== undefined) read++;
      }),
      { numRuns: 2000 },
    );
    // Not vacuous: the reader read a good part of them (the rest have what it leaves to js-yaml).
    assert.ok(read > 100, `the reader read ${read} of 2000 generated texts`);
  });

  it('agrees with js-yaml on mutated texts (or leaves them to it)', () => {
    let read = 0;
    const seeds = [...corpus.slice(0, 4).map((t) => t.slice(0, 1500)), ...onDisk];
    fc.assert(
      fc.property(
        fc.oneof(fc.constantFrom(...seeds), blockText),
        fc.array(mutation, { minLength: 1, maxLength: 4 }),
        (seed, mutations) => {
          let text = seed;
          for (const m of mutations) text = mutateText(text, m);
          assertSame(text);
          if (scanBlockYaml(text) !== undefined) read++;
        },
      ),
      { numRuns: 2000 },
    );
    assert.ok(read > 100, `the reader read ${read} of 2000 mutated texts`);
  });

  it('gives the same diagnostics and artifacts as the js-yaml events path (corpus, fixtures, generated texts)', () => {
    /** What a reader of rtctl's output sees, through one parse path. */
    const answer = (text: string, path: 'fast' | 'events'): string => {
      const previous = setParsePath(path);
      try {
        const sources = [{ file: 'policies/p.yaml', text }];
        const lint = lintTexts(sources);
        const out = compile(sources, { targets: ['all'] });
        return JSON.stringify({
          lint: lint.diagnostics,
          stats: lint.stats,
          compile: out.diagnostics,
          artifacts: out.artifacts.map((a) => [
            a.path,
            typeof a.content === 'string' ? a.content : Buffer.from(a.content).toString('base64'),
          ]),
        });
      } finally {
        setParsePath(previous);
      }
    };
    const same = (text: string): void => {
      const fast = answer(text, 'fast');
      const events = answer(text, 'events');
      if (fast !== events) {
        let i = 0;
        while (i < fast.length && fast[i] === events[i]) i++;
        assert.fail(
          `the paths differ at ${i}:\n  reader …${fast.slice(Math.max(0, i - 160), i + 120)}\n  events …${events.slice(Math.max(0, i - 160), i + 120)}\ntext: ${JSON.stringify(text)}`,
        );
      }
    };
    for (const text of [...corpus.slice(0, 2), ...onDisk]) {
      same(text);
      same(text.replace(/\n/g, '\r\n'));
    }
    fc.assert(
      fc.property(blockText, (text) => same(text)),
      { numRuns: 200 },
    );
  });

  // A reader broken on purpose must be caught by the comparison above on the same generated texts.
  const broken: Array<[string, Reader]> = [
    [
      'reads integers as text',
      (text) => {
        const scan = scanBlockYaml(text);
        if (scan === undefined) return undefined;
        const values = JSON.parse(
          JSON.stringify(scan.values, (_k, v: unknown) => (typeof v === 'number' ? String(v) : v)),
        ) as unknown[];
        return { ...scan, values };
      },
    ],
    [
      'places a key one character late',
      (text) => {
        const scan = scanBlockYaml(text);
        if (scan === undefined) return undefined;
        const starts = scan.events.starts.slice();
        const i = scan.events.types.findIndex(
          (t, j) => t === jsyaml.EVENT_ID.SCALAR && (scan.events.starts[j] ?? -1) > 0,
        );
        if (i >= 0) starts[i] = (starts[i] ?? 0) + 1;
        return { ...scan, events: { ...scan.events, starts } };
      },
    ],
    [
      'accepts a multi-line plain scalar as its first line',
      (text) => scanBlockYaml(text.replace(/^( *[a-z]+: [a-z]+)\n( +)([a-z]+)$/m, '$1\n')),
    ],
    [
      'drops the last document',
      (text) => {
        const scan = scanBlockYaml(text);
        if (scan === undefined || scan.values.length < 2) return scan;
        return { ...scan, values: scan.values.slice(0, -1) };
      },
    ],
  ];
  for (const [what, reader] of broken) {
    it(`catches a reader that ${what}`, () => {
      const texts = fc.oneof(
        blockText,
        fc.constantFrom(...corpus.slice(0, 3), 'a: b\n  c\nd: 1\n', 'a: 1\n---\nb: 2\n'),
      );
      const out = fc.check(
        fc.property(texts, (text) => difference(text, reader) === undefined),
        { numRuns: 2000 },
      );
      assert.ok(out.failed, `the comparison did not catch a reader that ${what}`);
    });
  }
});
