// Property tests: random mutations of valid policies (text edits and structural edits) never crash the
// compiler, and every finding carries a stable code and a position.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import fc from 'fast-check';
import '../support/property-seed.js';
import { dump, load } from 'js-yaml';
import { compile } from '../../compiler/compile.js';
import { checkAdmissionObject, lintTexts } from '../../compiler/lint.js';
import { COMPILER_FIXTURES, REPO_ROOT } from '../support/paths.js';

const seeds = [
  ...readdirSync(path.join(REPO_ROOT, 'policies', 'examples')).map((f) =>
    path.join(REPO_ROOT, 'policies', 'examples', f),
  ),
  path.join(COMPILER_FIXTURES, 'valid', 'every-field.yaml'),
].map((p) => readFileSync(p, 'utf8'));

const CODE = /^RT\d{4}$/;

function assertWellFormed(text: string): void {
  const { diagnostics } = lintTexts([{ file: 'mutant.yaml', text }]);
  for (const d of diagnostics) {
    assert.match(d.code, CODE);
    assert.ok(d.start !== undefined, `${d.code} has a position`);
    assert.ok(d.start.line >= 1 && d.start.column >= 1);
    assert.ok(d.message.length > 0);
  }
}

const tokens = fc.constantFrom(
  '\t',
  ':',
  ': ',
  '- ',
  '&a ',
  '*a',
  '"',
  "'",
  '{',
  '}',
  '[',
  ']',
  '\n',
  '  ',
  '#',
  '|',
  '>',
  '---\n',
  '\u00e9',
  '\u0000',
  '!!binary ',
  '<<: ',
  '%YAML 1.2\n',
  'null',
  '~',
  '1e9',
  '-1',
  'true',
);

const textMutation = fc.oneof(
  fc.record({ kind: fc.constant('delete' as const), at: fc.nat(), len: fc.integer({ min: 1, max: 40 }) }),
  fc.record({
    kind: fc.constant('insert' as const),
    at: fc.nat(),
    s: fc.oneof(tokens, fc.string({ maxLength: 8 })),
  }),
  fc.record({ kind: fc.constant('dupline' as const), at: fc.nat() }),
  fc.record({ kind: fc.constant('swaplines' as const), a: fc.nat(), b: fc.nat() }),
);

type TextMutation = typeof textMutation extends fc.Arbitrary<infer T> ? T : never;

function applyText(text: string, m: TextMutation): string {
  if (m.kind === 'delete') {
    const at = m.at % (text.length + 1);
    return text.slice(0, at) + text.slice(at + m.len);
  }
  if (m.kind === 'insert') {
    const at = m.at % (text.length + 1);
    return text.slice(0, at) + m.s + text.slice(at);
  }
  const lines = text.split('\n');
  if (m.kind === 'dupline') {
    const i = m.at % lines.length;
    lines.splice(i, 0, lines[i] ?? '');
  } else {
    const a = m.a % lines.length;
    const b = m.b % lines.length;
    [lines[a], lines[b]] = [lines[b] ?? '', lines[a] ?? ''];
  }
  return lines.join('\n');
}

const jsonValue = fc.oneof(
  fc.constantFrom(
    null,
    true,
    false,
    0,
    -1,
    11,
    1.5,
    '',
    'Block',
    'Allow',
    '/etc/',
    'etc',
    '/x/',
    'TCP',
    'CAP_NET_RAW',
  ),
  fc.string({ maxLength: 20 }),
  fc.array(fc.string({ maxLength: 5 }), { maxLength: 3 }),
  fc.dictionary(fc.constantFrom('path', 'dir', 'action', 'x', 'recursive'), fc.string({ maxLength: 5 }), {
    maxKeys: 2,
  }),
);

/** Replaces the value at a random path of the object with a random value. */
function mutateAt(root: unknown, choices: readonly number[], value: unknown): unknown {
  if (root === null || typeof root !== 'object') return value;
  const copy: unknown = structuredClone(root);
  let node = copy as Record<string, unknown>;
  for (const c of choices) {
    const keys = Object.keys(node);
    if (keys.length === 0) break;
    const key = keys[c % keys.length] ?? '';
    const child = node[key];
    if (child === null || typeof child !== 'object' || c % 3 === 0) {
      node[key] = value;
      return copy;
    }
    node = child as Record<string, unknown>;
  }
  return copy;
}

describe('compiler properties (fast-check)', () => {
  it('text mutations of valid policies never crash and every finding has a code and a position', () => {
    fc.assert(
      fc.property(
        fc.nat({ max: seeds.length - 1 }),
        fc.array(textMutation, { minLength: 1, maxLength: 4 }),
        (seed, muts) => {
          const text = muts.reduce(applyText, seeds[seed] ?? '');
          assertWellFormed(text);
        },
      ),
      { numRuns: 700 },
    );
  });

  it('structural mutations never crash, and what compiles without errors yields artifacts', () => {
    fc.assert(
      fc.property(
        fc.nat({ max: seeds.length - 1 }),
        fc.array(fc.nat({ max: 50 }), { minLength: 1, maxLength: 6 }),
        jsonValue,
        (seed, choices, value) => {
          const docs = (seeds[seed] ?? '').split(/^---$/m).map((d) => load(d));
          const i = choices[0] ?? 0;
          docs[i % docs.length] = mutateAt(docs[i % docs.length], choices.slice(1), value);
          const text = docs.map((d) => dump(d)).join('---\n');
          assertWellFormed(text);
          const r = compile([{ file: 'mutant.yaml', text }], { targets: ['crd'] });
          const errors = r.diagnostics.filter((d) => d.severity === 'error');
          assert.equal(errors.length === 0, r.artifacts.length > 0);
        },
      ),
      { numRuns: 700 },
    );
  });

  it('checkAdmissionObject never throws on arbitrary JSON values', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (v) => {
        const findings = checkAdmissionObject(v);
        for (const f of findings) assert.match(f.code, CODE);
      }),
      { numRuns: 2000 },
    );
    fc.assert(
      fc.property(fc.anything(), (v) => {
        const obj = {
          apiVersion: 'security.runtime.com/v1',
          kind: 'RuntimePolicy',
          metadata: { name: 'x' },
          spec: v,
        };
        for (const f of checkAdmissionObject(obj)) assert.match(f.code, CODE);
      }),
      { numRuns: 2000 },
    );
  });

  it('hostile inputs finish with a code: deep nesting, alias bombs, long lines, many documents', () => {
    const cases: Array<[string, string]> = [
      ['['.repeat(100000), 'RT1007'],
      ['a: ' + '{x: '.repeat(5000) + '1' + '}'.repeat(5000), 'RT1007'],
      [
        'a: &a [x,x,x,x,x,x,x,x,x,x]\n' +
          'bcdefghij'
            .split('')
            .map((c, i) => `${c}: &${c} [${Array(10).fill(`*${'abcdefghij'[i]}`).join(',')}]`)
            .join('\n') +
          '\n',
        'RT1005',
      ],
      [`apiVersion: v1\nkind: ConfigMap\ndata: {x: "${'y'.repeat(2_000_000)}"}\n`, 'RT1011'],
      ['apiVersion: v1\nkind: ConfigMap\n---\n'.repeat(20000), 'RT1011'],
    ];
    for (const [text, code] of cases) {
      const { diagnostics } = lintTexts([{ file: 'hostile.yaml', text }]);
      assert.ok(
        diagnostics.some((d) => d.code === code),
        `expected ${code}, got ${[...new Set(diagnostics.map((d) => d.code))].join(',')}`,
      );
    }
  });
});
