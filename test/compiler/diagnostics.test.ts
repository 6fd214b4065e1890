// Table-driven: every fixture under test/fixtures/compiler/invalid/ is named after the code it must produce,
// and marks each line that must carry it with a `# <- RTnnnn` comment.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { PARSE_CODES } from '../../compiler/diagnostics/codes/parse.js';
import { SCHEMA_CODES } from '../../compiler/diagnostics/codes/schema.js';
import { SEMANTIC_CODES } from '../../compiler/diagnostics/codes/semantic.js';
import { lintTexts } from '../../compiler/lint.js';
import { COMPILER_FIXTURES } from '../support/paths.js';

const INVALID = path.join(COMPILER_FIXTURES, 'invalid');
const fixtures = readdirSync(INVALID)
  .filter((f) => f.endsWith('.yaml'))
  .sort();
/** Codes about files rather than YAML text, covered by read-sources.test.ts. */
const FILE_LEVEL_CODES = new Set(['RT1006', 'RT1008', 'RT1012', 'RT1013']);

describe('compiler diagnostics by fixture', () => {
  for (const name of fixtures) {
    const code = name.slice(0, 6);
    it(`${name} produces ${code} at every marked line`, () => {
      const text = readFileSync(path.join(INVALID, name), 'utf8');
      const marked = text
        .split('\n')
        .map((l, i) => (l.includes(`# <- ${code}`) ? i + 1 : 0))
        .filter((n) => n > 0);
      assert.ok(marked.length > 0, 'fixture marks at least one line');
      const { diagnostics } = lintTexts([{ file: name, text }]);
      const found = diagnostics.filter((d) => d.code === code);
      assert.ok(
        found.length > 0,
        `expected ${code}, got ${diagnostics.map((d) => d.code).join(', ') || 'nothing'}`,
      );
      for (const line of marked) {
        assert.ok(
          found.some((d) => d.start?.line === line),
          `expected ${code} at line ${line}, found at ${found.map((d) => d.start?.line).join(', ')}`,
        );
      }
      for (const d of found) {
        assert.equal(d.file, name);
        assert.ok(d.start !== undefined && d.start.column >= 1, 'has a position');
        assert.ok(d.message.length > 10, 'has a message');
      }
    });
  }

  it('covers every parse, schema and semantic code with a fixture or a file-level test', () => {
    const covered = new Set(fixtures.map((f) => f.slice(0, 6)));
    const missing = [...PARSE_CODES, ...SCHEMA_CODES, ...SEMANTIC_CODES]
      .map((c) => c.code)
      .filter((c) => !covered.has(c) && !FILE_LEVEL_CODES.has(c));
    assert.deepEqual(missing, []);
  });

  it('reports nothing for the valid fixtures but what some target does not enforce (RT3016, RT3018)', () => {
    const dir = path.join(COMPILER_FIXTURES, 'valid');
    const sources = readdirSync(dir)
      .filter((f) => f.endsWith('.yaml'))
      .map((f) => ({ file: f, text: readFileSync(path.join(dir, f), 'utf8') }));
    assert.ok(sources.length > 0);
    const { diagnostics, documents } = lintTexts(sources);
    // The valid fixtures use every field, some of which some targets cannot enforce (docs/enforcement.md).
    const enforcement = new Set(['RT3016', 'RT3018']);
    assert.deepEqual(
      diagnostics
        .filter((d) => !enforcement.has(d.code))
        .map((d) => `${d.file}:${d.start?.line} ${d.code} ${d.message}`),
      [],
    );
    assert.ok(diagnostics.every((d) => d.severity === 'warning'));
    assert.ok(documents.length >= sources.length);
  });
});
