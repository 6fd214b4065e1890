// bench/compile/stages: where the time of `rtctl compile` goes, stage by stage, on the corpus of main.ts. Each
// stage runs over the whole corpus on the output of the one before (held in memory), so each figure includes
// the garbage collection its own allocations cause. The js-yaml baseline of main.ts runs in the same rounds,
// so the stages can be read as fractions of it. On this corpus parse.parseYaml is the block reader;
// parse.parseYamlEventsPath is the js-yaml events path that files outside the reader's subset take. Wall and
// CPU time (every thread: the garbage collector's helpers too) are reported; CPU time varies less with the
// load of a shared machine. Not part of `npm run bench` (it reaches into the stages): run
// `node --expose-gc --import tsx bench/compile/stages.ts`. Prints JSON (medians, milliseconds).
import { hash } from 'node:crypto';
import * as jsyaml from 'js-yaml';
import { crdBackend } from '../../compiler/backends/crd/crd-backend.js';
import { compareDiagnostics } from '../../compiler/diagnostics/diagnostic.js';
import { checkDocuments, createCheckedDocuments } from '../../compiler/front-end/check-documents.js';
import { crossCheck } from '../../compiler/front-end/cross-check.js';
import type { DocumentLocator } from '../../compiler/front-end/document-locator.js';
import { assembleLintResult } from '../../compiler/front-end/lint-result.js';
import { lowerDocuments } from '../../compiler/front-end/lower-documents.js';
import { parseText, type ParsedInput } from '../../compiler/front-end/parse-text.js';
import { parseYaml, setParsePath } from '../../compiler/parse/parse-yaml.js';
import { generateCorpus } from './generate-corpus.js';
import { median } from '../support/measure.js';

const COUNT = Number(process.env['BENCH_POLICIES'] ?? 10000);
const RUNS = Number(process.env['BENCH_RUNS'] ?? 5);
const sources = generateCorpus(COUNT);

function settle(): void {
  (globalThis as { gc?: () => void }).gc?.();
}

/** Wall and CPU milliseconds of each stage, by name, one sample per round. */
const samples = new Map<string, { wall: number[]; cpu: number[] }>();
function stage<T>(name: string, fn: () => T): T {
  settle();
  const cpuBefore = process.cpuUsage();
  const t = process.hrtime.bigint();
  const out = fn();
  const wall = Number(process.hrtime.bigint() - t) / 1e6;
  const used = process.cpuUsage(cpuBefore);
  const s = samples.get(name) ?? { wall: [], cpu: [] };
  s.wall.push(wall);
  s.cpu.push((used.user + used.system) / 1000);
  samples.set(name, s);
  return out;
}

for (let r = 0; r <= RUNS; r++) {
  stage('baselineJsYamlLoadAll', () => {
    for (const s of sources) jsyaml.loadAll(s.text);
  });
  stage('parse.jsYamlEvents', () => {
    for (const s of sources) jsyaml.parseEvents(s.text, { maxDepth: 64 });
  });
  stage('parse.parseYaml', () => {
    for (const s of sources) parseYaml(s.text);
  });
  // The same through js-yaml's events (the path of files the block reader leaves), for scale.
  stage('parse.parseYamlEventsPath', () => {
    const previous = setParsePath('events');
    try {
      for (const s of sources) parseYaml(s.text);
    } finally {
      setParsePath(previous);
    }
  });
  const inputs: ParsedInput[] = stage('parse.parseText', () => sources.map((s) => parseText(s)));
  const locators = new Map<string, DocumentLocator>(inputs.map((i) => [i.locator.file, i.locator]));
  const checked = stage('check', () => {
    const into = createCheckedDocuments();
    for (const input of inputs) checkDocuments(input.documents, locators, into);
    return into;
  });
  const located = stage('lower', () => lowerDocuments(checked.policies));
  const cross = stage('crossCheck', () => crossCheck(located, checked.namespaces, locators));
  const lint = stage('assemble', () =>
    assembleLintResult(
      inputs.length,
      inputs.flatMap((i) => i.diagnostics),
      checked,
      located,
      cross,
    ),
  );
  const emitted = stage('emit.crd', () =>
    crdBackend.emit({ ruleSet: lint.ruleSet, documents: lint.documents }),
  );
  stage('emit.index', () =>
    JSON.stringify(
      emitted.artifacts.map((a) => ({
        path: a.path,
        sha256: hash('sha256', a.content, 'hex'),
      })),
    ),
  );
  stage('sortDiagnostics', () => [...lint.diagnostics].sort(compareDiagnostics));
}

const ms = (list: number[]): number => Number(median(list.slice(1)).toFixed(1));
const wallMs: Record<string, number> = {};
const cpuMs: Record<string, number> = {};
for (const [name, s] of samples) {
  wallMs[name] = ms(s.wall);
  cpuMs[name] = ms(s.cpu);
}
const result = { bench: 'compile-stages', policies: COUNT, runs: RUNS, wallMs, cpuMs };
process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
