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

describe('YAML emitter', () => {
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
