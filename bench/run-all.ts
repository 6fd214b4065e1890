// Runs every benchmark script (bench/<name>/main.ts or run.ts) in turn, each in its own process, and prints one JSON
// array of their results. Each script measures its own baseline in the same run; the ratios are the figures.
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const only = process.argv.slice(2);
const results: unknown[] = [];
for (const name of readdirSync(here).sort()) {
  const main = ['main.ts', 'run.ts'].map((f) => path.join(here, name, f)).find((f) => existsSync(f));
  if (main === undefined || (only.length > 0 && !only.includes(name))) continue;
  process.stderr.write(`bench ${name}...\n`);
  try {
    const out = execFileSync(process.execPath, ['--expose-gc', '--import', 'tsx', main], {
      encoding: 'utf8',
      maxBuffer: 64 * 1024 * 1024,
    });
    results.push(JSON.parse(out.slice(out.indexOf('{'))) as unknown);
  } catch (err) {
    results.push({ bench: name, error: err instanceof Error ? err.message.split('\n')[0] : String(err) });
  }
}
process.stdout.write(`${JSON.stringify(results, null, 2)}\n`);
