// The manifest emitter: for any JSON value, the emitted text reads back (by both YAML libraries) as the same
// value, so no user string can inject structure; and known tricky scalars are quoted.
import assert from 'node:assert/strict';
import fc from 'fast-check';
import '../../support/property-seed.js';
import { load } from 'js-yaml';
import { parse } from 'yaml';
import { toYaml, yamlString } from '../../../compiler/emit/yaml-text.js';

const trickyString = fc.oneof(
  fc.string(),
  fc.string({ unit: 'binary' }),
  fc.constantFrom(
    'yes',
    'no',
    'on',
    'off',
    'y',
    'NULL',
    '~',
    '0x1f',
    '0o17',
    '1e3',
    '.inf',
    '-.nan',
    '012',
    '1:30',
    '',
    ' lead',
    'trail ',
    'a: b',
    'a #b',
    '- item',
    '? key',
    '*alias',
    '&anchor',
    '!tag',
    '%dir',
    '@at',
    '`tick',
    '"quoted"',
    "'single'",
    'line\nbreak',
    'tab\there',
    '\u2028',
    '{a: 1}',
    '[1]',
    'key:',
    '#comment',
    '|',
    '>',
  ),
);

const value = fc.letrec((tie) => ({
  node: fc.oneof(
    { depthSize: 'small' },
    trickyString,
    fc.integer(),
    fc.boolean(),
    fc.constant(null),
    fc.array(tie('node'), { maxLength: 4 }),
    fc.dictionary(trickyString, tie('node'), { maxKeys: 4 }),
  ),
})).node;

/**
 * The emitter as it was before it built one string (lines in arrays, a list item's first line sliced from its
 * collection's lines): the oracle the faster emitter must match byte for byte.
 */
function referenceToYaml(value: unknown): string {
  const scalar = (v: unknown): string => {
    if (v === null || v === undefined) return 'null';
    if (typeof v === 'string') return yamlString(v);
    if (typeof v === 'boolean') return v ? 'true' : 'false';
    if (typeof v === 'number') {
      if (!Number.isFinite(v)) return Number.isNaN(v) ? '.nan' : v > 0 ? '.inf' : '-.inf';
      return String(v);
    }
    return 'null';
  };
  const isCollection = (v: unknown): v is Record<string, unknown> | unknown[] =>
    typeof v === 'object' && v !== null;
  const isEmpty = (v: Record<string, unknown> | unknown[]): boolean =>
    Array.isArray(v) ? v.length === 0 : Object.keys(v).length === 0;
  const write = (out: string[], v: unknown, indent: string): void => {
    if (Array.isArray(v)) {
      for (const item of v) {
        if (isCollection(item) && !isEmpty(item)) {
          const inner: string[] = [];
          write(inner, item, `${indent}  `);
          out.push(`${indent}- ${(inner[0] ?? '').slice(indent.length + 2)}`);
          for (let i = 1; i < inner.length; i++) out.push(inner[i] ?? '');
        } else {
          out.push(`${indent}- ${isCollection(item) ? (Array.isArray(item) ? '[]' : '{}') : scalar(item)}`);
        }
      }
      return;
    }
    for (const [k, child] of Object.entries(v as Record<string, unknown>)) {
      if (child === undefined) continue;
      if (isCollection(child)) {
        if (isEmpty(child)) out.push(`${indent}${yamlString(k)}: ${Array.isArray(child) ? '[]' : '{}'}`);
        else {
          out.push(`${indent}${yamlString(k)}:`);
          write(out, child, `${indent}  `);
        }
      } else out.push(`${indent}${yamlString(k)}: ${scalar(child)}`);
    }
  };
  if (!isCollection(value)) return `${scalar(value)}\n`;
  if (isEmpty(value)) return Array.isArray(value) ? '[]\n' : '{}\n';
  const out: string[] = [];
  write(out, value, '');
  return `${out.join('\n')}\n`;
}

/** The string rule as three regular expressions and four scans: the oracle of the one-scan yamlString. */
function referenceYamlString(s: string): string {
  const plain = /^[A-Za-z0-9_./][A-Za-z0-9_./@%+=, -]*$/;
  const ambiguous =
    /^(?:y|Y|yes|Yes|YES|n|N|no|No|NO|true|True|TRUE|false|False|FALSE|on|On|ON|off|Off|OFF|null|Null|NULL|~|[-+]?(?:\.inf|\.Inf|\.INF)|\.nan|\.NaN|\.NAN)$/;
  const numberish =
    /^[-+]?(?:[0-9][0-9_]*(?:\.[0-9_]*)?|\.[0-9_]+)(?:[eE][-+]?[0-9]+)?$|^0[xob]|^[0-9]+:[0-9]/;
  const isPlain =
    s !== '' &&
    plain.test(s) &&
    !ambiguous.test(s) &&
    !numberish.test(s) &&
    !s.endsWith(' ') &&
    !s.includes(' #') &&
    !s.includes(': ') &&
    !s.endsWith(':');
  return isPlain ? s : JSON.stringify(s);
}

/** Strings over the characters the plain rule looks at (every class, the ambiguous words' letters, digits). */
const plainish = fc.oneof(
  fc.string({ unit: fc.constantFrom(...'aAyYnNoOtTfFlLsSeEuUrRxXbB0123456789_./@%+=, -:#~\'"\n'.split('')) }),
  fc.constantFrom(
    ...['y', 'Yes', 'NO', 'off', 'On', 'null', 'NULL', 'True', 'FALSE', '.inf', '.NaN', '.5', '1.', '1_000'],
    ...['0x1F', '0b1', '0o7', '12:30', '1e5', '1E+5', '.e1', 'no.', 'nul', 'trues', 'a ', 'a:', '/a b', 'é'],
  ),
  trickyString,
);

describe('YAML emitter', () => {
  it('quotes a string exactly when the regular-expression rule does (one scan instead)', () => {
    fc.assert(
      fc.property(plainish, (s) => {
        assert.equal(yamlString(s), referenceYamlString(s), JSON.stringify(s));
      }),
      { numRuns: 20000 },
    );
  });

  it('emits byte for byte what the line-array emitter emitted (undefined values included)', () => {
    const withUndefined = fc.letrec((tie) => ({
      node: fc.oneof(
        { depthSize: 'small' },
        value,
        fc.constant(undefined),
        fc.array(tie('node'), { maxLength: 4 }),
        fc.dictionary(trickyString, tie('node'), { maxKeys: 4 }),
      ),
    })).node;
    fc.assert(
      fc.property(withUndefined, (v) => {
        assert.equal(toYaml(v), referenceToYaml(v));
      }),
      { numRuns: 3000 },
    );
    for (const v of [{ a: undefined }, [{ a: undefined }, 1], { b: [[[1, 2], []], { c: { d: undefined } }] }])
      assert.equal(toYaml(v), referenceToYaml(v));
  });

  it('round-trips any JSON value through js-yaml and yaml', () => {
    fc.assert(
      fc.property(fc.dictionary(trickyString, value, { maxKeys: 5 }), (v) => {
        const text = toYaml(v);
        const expected = JSON.parse(JSON.stringify(v)) as unknown;
        assert.deepEqual(load(text), expected);
        assert.deepEqual(parse(text, { uniqueKeys: false }), expected);
      }),
      { numRuns: 2000 },
    );
  });

  it('quotes scalars that a YAML 1.1 reader would not read as strings', () => {
    for (const s of ['yes', 'on', 'NO', '0123', '1e3', '0x10', 'null', '~', ''])
      assert.match(yamlString(s), /^"/);
    for (const s of ['/etc/shadow', 'Block', 'net_raw', 'security.runtime.com/v1'])
      assert.equal(yamlString(s), s);
  });
});
