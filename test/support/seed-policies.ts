// Policy objects to start differential tests from: every RuntimePolicy and RuntimeHostPolicy document of the
// repository's policies and fixtures (valid or not), and a small generated corpus.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { loadAll } from 'js-yaml';
import { generateCorpus } from '../../bench/compile/generate-corpus.js';
import { PolicyKind } from '../../compiler/ir/rule-set.js';
import { REPO_ROOT } from './paths.js';

function yamlFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = path.join(dir, name);
    return statSync(p).isDirectory() ? yamlFiles(p) : /\.ya?ml$/.test(name) ? [p] : [];
  });
}

function policiesOf(text: string): unknown[] {
  try {
    return loadAll(text).filter(
      (d) =>
        typeof d === 'object' &&
        d !== null &&
        ((d as { kind?: unknown }).kind === PolicyKind.RuntimePolicy ||
          (d as { kind?: unknown }).kind === PolicyKind.RuntimeHostPolicy),
    );
  } catch {
    return [];
  }
}

/** Every policy object of the repository's policies and fixtures, and of a small generated corpus. */
export function loadSeedPolicies(): unknown[] {
  return [
    ...['policies', 'test/fixtures/compiler', 'test/fixtures/conformance'].flatMap((d) =>
      yamlFiles(path.join(REPO_ROOT, d)).flatMap((f) => policiesOf(readFileSync(f, 'utf8'))),
    ),
    ...generateCorpus(40, 4).flatMap((s) => policiesOf(s.text)),
  ];
}
