// Rules the test suite keeps about itself: every property test runs with the fixed seed of
// test/support/property-seed.ts, and nothing in the repository needs the `shared` folder beside the checkout
// (the external corpus is optional data, looked up only by test/support/corpus.ts).
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import fc from 'fast-check';
import { PROPERTY_SEED } from './property-seed.js';
import { REPO_ROOT } from './paths.js';

/** Folders that are not the project's files (dependencies, build output, caches). */
const NOT_SOURCES = new Set(['node_modules', '.git', 'dist', 'build', '.work', 'out']);
const TEXT = /\.(ts|cjs|js|json|md|yaml|yml|sh|c|h|txt)$/;

function listTextFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const full = path.join(dir, e.name);
    if (e.isDirectory()) return NOT_SOURCES.has(e.name) ? [] : listTextFiles(full);
    return TEXT.test(e.name) ? [full] : [];
  });
}

const rel = (f: string): string => path.relative(REPO_ROOT, f);

describe('test hygiene', () => {
  it('sets the fixed property seed as fast-check global configuration', () => {
    assert.equal(fc.readConfigureGlobal().seed, PROPERTY_SEED);
  });

  it('every test file using fast-check imports the seed helper', () => {
    const users = listTextFiles(path.join(REPO_ROOT, 'test')).filter(
      (f) => f.endsWith('.ts') && /from 'fast-check'/.test(readFileSync(f, 'utf8')),
    );
    assert.ok(users.length >= 10, `${users.length} files use fast-check`);
    const unseeded = users
      .filter((f) => !f.endsWith(path.join('support', 'property-seed.ts')))
      .filter((f) => !f.endsWith(path.join('support', 'hygiene.test.ts')))
      .filter((f) => !/import '(\.\.?\/)+(support\/)?property-seed\.js';/.test(readFileSync(f, 'utf8')));
    assert.deepEqual(unseeded.map(rel), []);
  });

  it('no file of the repository refers to the shared folder beside the checkout', () => {
    const needle = ['..', 'shared'].join('/');
    const files = listTextFiles(REPO_ROOT);
    assert.ok(files.length > 100, `${files.length} files`);
    assert.deepEqual(files.filter((f) => readFileSync(f, 'utf8').includes(needle)).map(rel), []);
  });
});
