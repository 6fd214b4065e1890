// The committed generated files (docs/diagnostics.md, chart CRDs) equal what `npm run gen` would write.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { ALL_CODES } from '../../compiler/diagnostics/codes/index.js';
import { generateFiles } from '../../compiler/gen/generate.js';
import { REPO_ROOT } from '../support/paths.js';

describe('generated files', () => {
  for (const f of generateFiles()) {
    it(`${f.path} is up to date (npm run gen)`, () => {
      assert.equal(readFileSync(path.join(REPO_ROOT, f.path), 'utf8'), f.content);
    });
  }

  it('every code is unique and well-formed', () => {
    const codes = ALL_CODES.map((c) => c.code);
    assert.equal(new Set(codes).size, codes.length);
    for (const c of ALL_CODES) {
      assert.match(c.code, /^RT[1-5]\d{3}$/);
      assert.match(c.name, /^[a-z0-9]+(-[a-z0-9]+)*$/);
      assert.ok(c.summary.length > 20);
    }
  });
});
