// `npm run gen` (second step): writes deploy/ and charts/rtctl/ from the install description, removing files
// of those folders that are no longer generated.
import { mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { generateInstallFiles } from './render/generated-files.js';

const files = generateInstallFiles();
const wanted = new Set(files.map((f) => f.path));
for (const dir of ['deploy', 'charts/rtctl/templates']) {
  for (const entry of readdirSync(dir, { recursive: true, withFileTypes: true })) {
    const p = path.relative('.', path.join(entry.parentPath, entry.name));
    if (entry.isFile() && /\.(yaml|lua)$/.test(p) && !wanted.has(p)) {
      rmSync(p);
      process.stdout.write(`removed ${p}\n`);
    }
  }
}
for (const f of files) {
  mkdirSync(path.dirname(f.path), { recursive: true });
  writeFileSync(f.path, f.content);
  process.stdout.write(`wrote ${f.path}\n`);
}
