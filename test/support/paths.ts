// Well-known paths for tests: the repository root and the read-only shared folder beside it.
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository root. */
export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
/** ../shared beside the checkout (spec, design, corpus). */
export const SHARED_DIR = path.resolve(REPO_ROOT, '..', 'shared');
/** The conformance corpus of real-world policies. */
export const CORPUS_DIR = path.join(SHARED_DIR, 'corpus', 'upstream-examples');
/** Compiler fixtures. */
export const COMPILER_FIXTURES = path.join(REPO_ROOT, 'test', 'fixtures', 'compiler');
