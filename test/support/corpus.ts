// The external corpus of real-world policies (KubeArmor examples converted to our names). It is not part of
// the repository and not a prerequisite of the product: tests and goldens on it run when the folder exists,
// and are reported as skipped, with the reason, when it does not, also under CI=true. The project's own
// conformance fixtures (test/fixtures/conformance/) cover the schema without it.
// Where it is looked for: $RTCTL_CORPUS_DIR, else the `shared` folder beside the checkout (the layout of the
// development machines).
import { existsSync } from 'node:fs';
import path from 'node:path';
import { REPO_ROOT } from './paths.js';

/** The folder of the external corpus (may be absent). */
export const CORPUS_DIR =
  process.env['RTCTL_CORPUS_DIR'] ?? path.join(REPO_ROOT, '..', 'shared', 'corpus', 'upstream-examples');

/** True when the external corpus is present. */
export function hasCorpus(): boolean {
  return existsSync(CORPUS_DIR);
}

/** Why corpus tests are skipped. */
export const CORPUS_SKIP_REASON = `external corpus not found at ${CORPUS_DIR} (optional data; set RTCTL_CORPUS_DIR to run these)`;

/** Title of the placeholder test registered in place of corpus tests. */
export function skippedTitle(title: string): string {
  return `${title} [skipped: ${CORPUS_SKIP_REASON}]`;
}

/** `it` when the corpus is present; otherwise a pending test whose title carries the reason. */
export function itOnCorpus(title: string, fn: Mocha.Func | Mocha.AsyncFunc): void {
  if (hasCorpus()) it(title, fn);
  else it.skip(skippedTitle(title));
}

/**
 * `describe` when the corpus is present; otherwise a suite with one pending test naming the reason
 * (the body, which reads the corpus while registering its tests, is not run).
 */
export function describeOnCorpus(title: string, body: (this: Mocha.Suite) => void): void {
  if (hasCorpus()) describe(title, body);
  else
    describe(title, () => {
      it.skip(skippedTitle('every test of this suite'));
    });
}
