// bench/compile: lint+compile of 10 000 generated policies against a bare js-yaml loadAll of the same text
// (the fastest JavaScript YAML parser, no positions) in the same run; the ratio is the figure (target <= 1.5,
// issue 13; lint alone: lintOnlyRatio).
// Run with `node --expose-gc --import tsx bench/compile/main.ts` (npm run bench does).
// Also reports the `yaml` package's full document parse, which keeps positions, for scale. Prints JSON.
import { loadAll } from 'js-yaml';
import { parseAllDocuments } from 'yaml';
import { compile } from '../../compiler/compile.js';
import { lintTexts } from '../../compiler/lint.js';
import { generateCorpus } from './generate-corpus.js';
import { median, time } from '../support/measure.js';

const COUNT = Number(process.env['BENCH_POLICIES'] ?? 10000);
const RUNS = Number(process.env['BENCH_RUNS'] ?? 5);

const sources = generateCorpus(COUNT);
const bytes = sources.reduce((n, s) => n + Buffer.byteLength(s.text), 0);

/** Collects garbage between measurements when node runs with --expose-gc, so one side's garbage is not billed to the other. */
function settle(): void {
  (globalThis as { gc?: () => void }).gc?.();
}

let findings = 0;
let artifacts = 0;
const baseline: number[] = [];
const rtctl: number[] = [];
const lintOnly: number[] = [];
// Interleave the two measurements so that machine noise hits both alike; one warm-up round first.
for (let r = 0; r <= RUNS; r++) {
  settle();
  const b = time(() => {
    for (const s of sources) loadAll(s.text);
  });
  settle();
  const c = time(() => {
    const result = compile(sources, { targets: ['crd'] });
    findings = result.diagnostics.length;
    artifacts = result.artifacts.length;
  });
  settle();
  const l = time(() => lintTexts(sources));
  if (r === 0) continue;
  baseline.push(b);
  rtctl.push(c);
  lintOnly.push(l);
}
const yamlPackage: number[] = [];
for (let r = 0; r < 2; r++) {
  settle();
  yamlPackage.push(
    time(() => {
      for (const s of sources) parseAllDocuments(s.text);
    }),
  );
}

const result = {
  bench: 'compile',
  policies: COUNT,
  files: sources.length,
  bytes,
  runs: RUNS,
  findings,
  artifacts,
  baselineJsYamlLoadAllMs: Math.round(median(baseline)),
  rtctlLintCompileMs: Math.round(median(rtctl)),
  ratio: Number((median(rtctl) / median(baseline)).toFixed(2)),
  target: '<= 1.5',
  rtctlLintOnlyMs: Math.round(median(lintOnly)),
  lintOnlyRatio: Number((median(lintOnly) / median(baseline)).toFixed(2)),
  yamlPackageParseAllDocumentsMs: Math.round(median(yamlPackage)),
  heapUsedMB: Math.round(process.memoryUsage().heapUsed / 1e6),
};
process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
