// bench/compile: lint+compile of 10 000 generated policies against a bare js-yaml loadAll of the same text
// (the fastest JavaScript YAML parser, no positions) in the same run; the ratio is the figure (target <= 1.5,
// issue 13; lint alone: lintOnlyRatio).
// Run with `node --expose-gc --import tsx bench/compile/main.ts` (npm run bench does).
// Also reports the `yaml` package's full document parse, which keeps positions, for scale, the same ratios in
// CPU time, and the load average the run saw. Prints JSON.
import { loadAll } from 'js-yaml';
import { parseAllDocuments } from 'yaml';
import { compile } from '../../compiler/compile.js';
import { lintTexts } from '../../compiler/lint.js';
import { generateCorpus } from './generate-corpus.js';
import { loadavg } from 'node:os';
import { cpuTime, median } from '../support/measure.js';

const COUNT = Number(process.env['BENCH_POLICIES'] ?? 10000);
const RUNS = Number(process.env['BENCH_RUNS'] ?? 5);

const sources = generateCorpus(COUNT);
const bytes = sources.reduce((n, s) => n + Buffer.byteLength(s.text), 0);

/** Collects garbage between measurements when node runs with --expose-gc, so one side's garbage is not billed to the other. */
function settle(): void {
  (globalThis as { gc?: () => void }).gc?.();
}

/** Wall and CPU milliseconds of `fn`. */
function measure(fn: () => void): { wall: number; cpu: number } {
  let wall = 0;
  const cpu = cpuTime(() => {
    const t = process.hrtime.bigint();
    fn();
    wall = Number(process.hrtime.bigint() - t) / 1e6;
  });
  return { wall, cpu };
}

let findings = 0;
let artifacts = 0;
const baseline: number[] = [];
const rtctl: number[] = [];
const lintOnly: number[] = [];
const baselineCpu: number[] = [];
const rtctlCpu: number[] = [];
const lintOnlyCpu: number[] = [];
// Interleave the two measurements so that machine noise hits both alike; one warm-up round first.
for (let r = 0; r <= RUNS; r++) {
  settle();
  const b = measure(() => {
    for (const s of sources) loadAll(s.text);
  });
  settle();
  const c = measure(() => {
    const result = compile(sources, { targets: ['crd'] });
    findings = result.diagnostics.length;
    artifacts = result.artifacts.length;
  });
  settle();
  const l = measure(() => lintTexts(sources));
  if (r === 0) continue;
  baseline.push(b.wall);
  rtctl.push(c.wall);
  lintOnly.push(l.wall);
  baselineCpu.push(b.cpu);
  rtctlCpu.push(c.cpu);
  lintOnlyCpu.push(l.cpu);
}
const yamlPackage: number[] = [];
for (let r = 0; r < 2; r++) {
  settle();
  yamlPackage.push(
    measure(() => {
      for (const s of sources) parseAllDocuments(s.text);
    }).wall,
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
  // The same ratios in CPU time (every thread of the process): steadier than wall time on a loaded machine.
  cpuRatio: Number((median(rtctlCpu) / median(baselineCpu)).toFixed(2)),
  lintOnlyCpuRatio: Number((median(lintOnlyCpu) / median(baselineCpu)).toFixed(2)),
  baselineCpuMs: Math.round(median(baselineCpu)),
  loadAverage1m: Number((loadavg()[0] ?? 0).toFixed(2)),
  yamlPackageParseAllDocumentsMs: Math.round(median(yamlPackage)),
  heapUsedMB: Math.round(process.memoryUsage().heapUsed / 1e6),
};
process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
