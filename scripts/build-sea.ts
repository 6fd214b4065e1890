// npm run build:sea: rtctl as one Node single executable application for linux-x64, so CI users need neither
// Node nor npm. bin/sea.ts is bundled into one CommonJS file (esbuild), node --experimental-sea-config turns it
// into a blob, and postject injects the blob into a copy of this Node binary: dist/sea/rtctl. Also writes
// dist/sea/kubectl-rtctl-linux-amd64.tar.gz (the krew archive: the same binary named kubectl-rtctl) and prints
// the sha256 of both. Native artifacts (dist/native) are not bundled: lint, compile, explain, test and hook do
// not need them.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chmodSync, copyFileSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const out = path.join(root, 'dist', 'sea');
/** The fuse postject flips so Node looks for the blob (Node's documented sentinel). */
const SEA_FUSE = 'NODE_SEA_FUSE_fce680ab2cc467b6e072b8b5df1996b2';

function sha256(file: string): string {
  return createHash('sha256').update(readFileSync(file)).digest('hex');
}

async function buildSea(): Promise<void> {
  if (process.platform !== 'linux' || process.arch !== 'x64') {
    throw new Error(`build:sea builds for linux-x64; this is ${process.platform}-${process.arch}`);
  }
  rmSync(out, { recursive: true, force: true });
  mkdirSync(out, { recursive: true });
  const bundle = path.join(out, 'rtctl.cjs');
  await build({
    entryPoints: [path.join(root, 'bin', 'sea.ts')],
    outfile: bundle,
    bundle: true,
    platform: 'node',
    target: 'node20',
    format: 'cjs',
    logLevel: 'warning',
    legalComments: 'none',
    // Modules that find files next to themselves read import.meta.url; in one CommonJS file that is the
    // executable (none of them is on the path of lint or compile).
    define: { 'import.meta.url': '__rtctlImportMetaUrl' },
    banner: { js: 'const __rtctlImportMetaUrl = require("node:url").pathToFileURL(__filename).href;' },
  });
  const config = path.join(out, 'sea-config.json');
  const blob = path.join(out, 'sea-prep.blob');
  writeFileSync(
    config,
    `${JSON.stringify({ main: bundle, output: blob, disableExperimentalSEAWarning: true, useCodeCache: false }, null, 2)}\n`,
  );
  execFileSync(process.execPath, ['--experimental-sea-config', config], { stdio: 'inherit' });
  const exe = path.join(out, 'rtctl');
  copyFileSync(process.execPath, exe);
  chmodSync(exe, 0o755);
  execFileSync(
    process.execPath,
    [
      path.join(root, 'node_modules', 'postject', 'dist', 'cli.js'),
      exe,
      'NODE_SEA_BLOB',
      blob,
      '--sentinel-fuse',
      SEA_FUSE,
    ],
    { stdio: ['ignore', 'ignore', 'inherit'] },
  );
  // The krew archive: reproducible tar (fixed owner, time and order) and gzip without a name or time.
  const stage = path.join(out, 'krew');
  mkdirSync(stage);
  copyFileSync(exe, path.join(stage, 'kubectl-rtctl'));
  copyFileSync(path.join(root, 'README.md'), path.join(stage, 'README.md'));
  const tarball = path.join(out, 'kubectl-rtctl-linux-amd64.tar.gz');
  execFileSync('sh', [
    '-c',
    'tar --sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner -C "$1" -cf - kubectl-rtctl README.md | gzip -n -9 > "$2"',
    'tar',
    stage,
    tarball,
  ]);
  rmSync(stage, { recursive: true });
  process.stdout.write(
    `${sha256(exe)}  dist/sea/rtctl\n${sha256(tarball)}  dist/sea/kubectl-rtctl-linux-amd64.tar.gz\n`,
  );
}

await buildSea();
