// `npm run gen`: writes the generated files into the working tree.
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { generateFiles } from './generate.js';

for (const f of generateFiles()) {
  mkdirSync(path.dirname(f.path), { recursive: true });
  writeFileSync(f.path, f.content);
  process.stdout.write(`wrote ${f.path}\n`);
}
