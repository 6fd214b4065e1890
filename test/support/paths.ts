// Well-known paths for tests: the repository root and the fixture folders inside it.
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository root. */
export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
/** Compiler fixtures. */
export const COMPILER_FIXTURES = path.join(REPO_ROOT, 'test', 'fixtures', 'compiler');
/** The project's own conformance fixtures: every field and rule form of the schema. */
export const CONFORMANCE_FIXTURES = path.join(REPO_ROOT, 'test', 'fixtures', 'conformance');
