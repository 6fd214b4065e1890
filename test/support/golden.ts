// Golden files: compare a set of generated files with a committed directory; UPDATE_GOLDEN=1 rewrites the
// directory (stale files removed) so the change is reviewed in the diff.
import assert from 'node:assert/strict';
import { mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';

/** A generated file: path relative to the golden directory and its content. */
export interface GoldenFile {
  path: string;
  content: string | Uint8Array;
}

function listFiles(dir: string, prefix = ''): string[] {
  let out: string[] = [];
  let entries: string[];
  try {
    entries = readdirSync(dir);
  } catch {
    return [];
  }
  for (const e of entries.sort()) {
    const p = path.join(dir, e);
    if (statSync(p).isDirectory()) out = out.concat(listFiles(p, path.posix.join(prefix, e)));
    else out.push(path.posix.join(prefix, e));
  }
  return out;
}

/** Asserts that `files` equal the golden directory, or rewrites it when UPDATE_GOLDEN=1. */
export function assertGolden(dir: string, files: readonly GoldenFile[]): void {
  if (process.env['UPDATE_GOLDEN'] === '1') {
    rmSync(dir, { recursive: true, force: true });
    for (const f of files) {
      const target = path.join(dir, f.path);
      mkdirSync(path.dirname(target), { recursive: true });
      writeFileSync(target, f.content);
    }
    return;
  }
  const expected = listFiles(dir);
  assert.ok(
    expected.length > 0,
    `golden directory ${dir} is empty: run with UPDATE_GOLDEN=1 and review the diff`,
  );
  assert.deepEqual(
    [...files.map((f) => f.path)].sort(),
    expected,
    'the set of generated files differs from the golden set',
  );
  for (const f of files) {
    const want = readFileSync(path.join(dir, f.path));
    const got = Buffer.from(typeof f.content === 'string' ? Buffer.from(f.content, 'utf8') : f.content);
    assert.ok(
      got.equals(want),
      `${f.path} differs from its golden file (UPDATE_GOLDEN=1 to accept)\n--- got\n${got.toString('utf8').slice(0, 2000)}`,
    );
  }
}
