// The two YAML paths give one answer. The fast path (the block reader, else js-yaml's events) reads the files
// it accepts; every file it refuses goes to the full path (the `yaml` package's documents). Forcing the full
// path on every file must not change a diagnostic (code, message, file, line, column, related locations) or a
// compiled artifact: generated policy texts, then the same texts mutated (malformed YAML, duplicate keys,
// anchors and aliases, several documents, tags, flow style, odd indentation, a byte-order mark, CRLF line
// ends).
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import fc from 'fast-check';
import '../../support/property-seed.js';
import { compile } from '../../../compiler/compile.js';
import { lintTexts } from '../../../compiler/lint.js';
import { setParsePath, type ParsePath } from '../../../compiler/parse/parse-yaml.js';
import { generateCorpus } from '../../../bench/compile/generate-corpus.js';
import { COMPILER_FIXTURES, REPO_ROOT } from '../../support/paths.js';
import { mutateText, textMutation } from '../../support/text-mutation.js';

function withPath<T>(p: ParsePath, fn: () => T): T {
  const previous = setParsePath(p);
  try {
    return fn();
  } finally {
    setParsePath(previous);
  }
}

/** What a reader of rtctl's output sees: the diagnostics and the artifacts, as bytes. */
function answer(text: string): string {
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
}

function assertSameAnswer(text: string): void {
  const fast = withPath('fast', () => answer(text));
  const full = withPath('full', () => answer(text));
  if (fast !== full) {
    // Name the first differing place, not two long strings.
    let i = 0;
    while (i < fast.length && fast[i] === full[i]) i++;
    assert.fail(
      `fast and full paths differ at ${i}:\n  fast …${fast.slice(Math.max(0, i - 160), i + 120)}\n  full …${full.slice(Math.max(0, i - 160), i + 120)}\ntext: ${JSON.stringify(text)}`,
    );
  }
}

const generated = generateCorpus(40, 4).map((s) => s.text);
const examples = [
  ...readdirSync(path.join(REPO_ROOT, 'policies', 'examples')).map((f) =>
    path.join(REPO_ROOT, 'policies', 'examples', f),
  ),
  path.join(COMPILER_FIXTURES, 'valid', 'every-field.yaml'),
  ...readdirSync(path.join(REPO_ROOT, 'test', 'fixtures', 'conformance'))
    .filter((f) => f.endsWith('.yaml'))
    .map((f) => path.join(REPO_ROOT, 'test', 'fixtures', 'conformance', f)),
].map((p) => readFileSync(p, 'utf8'));
const seeds = [...generated, ...examples];

/** Pieces of YAML syntax a mutation inserts. */
const tokens = fc.constantFrom(
  '\t',
  ':',
  ': ',
  '- ',
  '&a ',
  '*a',
  '&b ',
  '*b',
  '"',
  "'",
  '"x y"',
  "'it''s'",
  '{',
  '}',
  '[',
  ']',
  '{a: 1, b: [x, "y"]}',
  '[/bin/sh, /usr/bin/env]',
  '\n',
  '\r\n',
  '  ',
  '   ',
  '#',
  ' # note',
  '|\n    text\n',
  '>-\n    folded\n    text\n',
  '|+\n    kept\n\n',
  '---\n',
  '...\n',
  '\u00e9',
  '!!str ',
  '!!int ',
  '!custom ',
  '!!binary ',
  '<<: ',
  '%YAML 1.2\n---\n',
  '? ',
  'null',
  '~',
  '',
  '0o17',
  '0x1F',
  '1e9',
  '.inf',
  '-1',
  'true',
  'yes',
  '2001-12-14',
  '"\\u00e9\\t"',
);

const mutation = textMutation(tokens, 8);

describe('the fast and the full YAML path give the same diagnostics and artifacts (property, fixed seed)', function () {
  this.timeout(120_000);

  it('on the seed texts as they are, with CRLF line ends and with a byte-order mark', () => {
    for (const text of seeds) {
      assertSameAnswer(text);
      assertSameAnswer(text.replace(/\n/g, '\r\n'));
      assertSameAnswer(`\ufeff${text}`);
    }
  });

  it('on mutated texts (malformed YAML, duplicate keys, aliases, tags, flow style, indentation)', () => {
    fc.assert(
      fc.property(
        fc.nat({ max: seeds.length - 1 }),
        fc.array(mutation, { minLength: 1, maxLength: 4 }),
        fc.constantFrom('', '\r\n', '\ufeff'),
        (seed, mutations, form) => {
          let text = seeds[seed] ?? '';
          for (const m of mutations) text = mutateText(text, m);
          if (form === '\r\n') text = text.replace(/\r?\n/g, '\r\n');
          if (form === '\ufeff') text = `\ufeff${text}`;
          assertSameAnswer(text);
        },
      ),
      { numRuns: 1000 },
    );
  });

  it('on several documents in one file, with anchors and aliases across them', () => {
    fc.assert(
      fc.property(
        fc.array(fc.nat({ max: seeds.length - 1 }), { minLength: 2, maxLength: 4 }),
        fc.array(mutation, { maxLength: 2 }),
        (picks, mutations) => {
          let text = picks.map((i) => seeds[i] ?? '').join('---\n');
          for (const m of mutations) text = mutateText(text, m);
          assertSameAnswer(text);
        },
      ),
      { numRuns: 200 },
    );
  });
});
