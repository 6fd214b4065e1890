// bench/compile/output-digest: the sha256 of everything a compile of the bench corpus produces (every
// artifact's path and bytes, the diagnostics JSON of compile and of lint alone), to check that a change to
// the compiler's speed changed none of its output: run before and after, compare the digests.
// Run with `node --import tsx bench/compile/output-digest.ts` (BENCH_POLICIES sets the corpus size). Prints JSON.
import { createHash } from 'node:crypto';
import { compile } from '../../compiler/compile.js';
import { lintTexts } from '../../compiler/lint.js';
import { generateCorpus } from './generate-corpus.js';

const COUNT = Number(process.env['BENCH_POLICIES'] ?? 10000);
const sources = generateCorpus(COUNT);
const result = compile(sources, { targets: ['all'] });
const artifacts = createHash('sha256');
for (const a of result.artifacts) {
  artifacts.update(`${a.path}\0${a.content.length}\0`);
  artifacts.update(a.content);
}
const lint = lintTexts(sources);
const digest = {
  bench: 'compile-output-digest',
  policies: COUNT,
  artifacts: result.artifacts.length,
  findings: result.diagnostics.length,
  artifactsSha256: artifacts.digest('hex'),
  compileDiagnosticsSha256: createHash('sha256').update(JSON.stringify(result.diagnostics)).digest('hex'),
  lintDiagnosticsSha256: createHash('sha256').update(JSON.stringify(lint.diagnostics)).digest('hex'),
  lintStatsSha256: createHash('sha256').update(JSON.stringify(lint.stats)).digest('hex'),
};
process.stdout.write(`${JSON.stringify(digest, null, 2)}\n`);
