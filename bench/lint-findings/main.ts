// bench/lint-findings: lint time of one file holding N findings (in documents within the schema bounds), for doubling N (issue 12 item 8). Locating
// findings is linear, so `ratio` (time at N over time at N/2) stays near 2; the quadratic scan it replaced
// gave about 4. Run with `node --expose-gc --import tsx bench/lint-findings/main.ts`. Prints JSON.
import { lintTexts } from '../../compiler/lint.js';
import { policyWithRelativePaths, policyWithUnknownKeys } from '../../test/support/many-findings.js';
import { median, time } from '../support/measure.js';

const SIZES = (process.env['BENCH_FINDINGS'] ?? '10000,20000,40000').split(',').map(Number);
const RUNS = Number(process.env['BENCH_RUNS'] ?? 3);

function settle(): void {
  (globalThis as { gc?: () => void }).gc?.();
}

// Documents of 200 keys / 1 000 paths stay within the schema's bounds (maxProperties, maxItems), so every
// generated finding is reported and located.
const shapes = {
  unknownKeys: (n: number) => policyWithUnknownKeys(n, 200),
  relativePaths: (n: number) => policyWithRelativePaths(n, 1000),
};
const results: Record<string, { findings: number; bytes: number; ms: number; ratio?: number }[]> = {};
lintTexts([{ file: 'warm.yaml', text: policyWithUnknownKeys(1000) }]);
for (const [name, generate] of Object.entries(shapes)) {
  const rows: { findings: number; bytes: number; ms: number; ratio?: number }[] = [];
  for (const n of SIZES) {
    const text = generate(n);
    let findings = 0;
    const runs: number[] = [];
    for (let r = 0; r < RUNS; r++) {
      settle();
      runs.push(time(() => (findings = lintTexts([{ file: 'many.yaml', text }]).diagnostics.length)));
    }
    const ms = Math.round(median(runs));
    const previous = rows.at(-1);
    const row: { findings: number; bytes: number; ms: number; ratio?: number } = {
      findings,
      bytes: Buffer.byteLength(text),
      ms,
    };
    if (previous !== undefined && previous.ms > 0) row.ratio = Number((ms / previous.ms).toFixed(2));
    rows.push(row);
  }
  results[name] = rows;
}
process.stdout.write(`${JSON.stringify({ bench: 'lint-findings', runs: RUNS, results }, null, 2)}\n`);
