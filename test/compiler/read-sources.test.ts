// File-level input handling: size bound, strict UTF-8, unreadable paths, empty directories, recursion order,
// symbolic links (ConfigMap volumes), unreadable subfolders.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { readSources, reportNothingChecked } from '../../compiler/io/read-sources.js';
import { REPO_ROOT } from '../support/paths.js';

const POLICY =
  'apiVersion: security.runtime.com/v1\nkind: RuntimePolicy\nmetadata: {name: p, namespace: ns}\nspec:\n  selector: {matchLabels: {app: web}}\n  action: Block\n  process: {matchPaths: [{path: /bin/sh}]}\n';

/** Lays out `dir` as Kubernetes mounts a ConfigMap: `..<timestamp>/` holds the files, `..data` links to it,
 * and each visible name links through `..data`. */
function writeConfigMapVolume(dir: string, files: Record<string, string>): void {
  const stamp = '..2026_01_01_00_00_00.000000001';
  mkdirSync(path.join(dir, stamp));
  for (const [name, text] of Object.entries(files)) writeFileSync(path.join(dir, stamp, name), text);
  symlinkSync(stamp, path.join(dir, '..data'));
  for (const name of Object.keys(files)) symlinkSync(path.join('..data', name), path.join(dir, name));
}

describe('readSources', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'rtctl-read-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('reads .yaml and .yml files recursively in sorted order and skips others', async () => {
    mkdirSync(path.join(dir, 'b'));
    writeFileSync(path.join(dir, 'b', 'x.yml'), 'a: 1\n');
    writeFileSync(path.join(dir, 'a.yaml'), 'a: 1\n');
    writeFileSync(path.join(dir, 'notes.txt'), 'ignored');
    const r = await readSources([dir]);
    assert.deepEqual(
      r.sources.map((s) => path.relative(dir, s.file)),
      ['a.yaml', path.join('b', 'x.yml')],
    );
    assert.equal(r.ioFailed, false);
  });

  it('RT1006: refuses a file over the size bound without reading it', async () => {
    const f = path.join(dir, 'big.yaml');
    writeFileSync(f, 'a: 1\n'.repeat(1000));
    const r = await readSources([f], 100);
    assert.deepEqual(
      r.diagnostics.map((d) => d.code),
      ['RT1006'],
    );
    assert.equal(r.sources.length, 0);
  });

  it('RT1008: reports the line of the first invalid UTF-8 byte', async () => {
    const f = path.join(dir, 'latin1.yaml');
    writeFileSync(f, Buffer.concat([Buffer.from('a: 1\nb: caf'), Buffer.from([0xe9]), Buffer.from('\n')]));
    const r = await readSources([f]);
    assert.equal(r.diagnostics[0]?.code, 'RT1008');
    assert.equal(r.diagnostics[0]?.start?.line, 2);
    assert.match(r.diagnostics[0]?.message ?? '', /0xe9/);
  });

  it('RT1008: refuses UTF-16 text and accepts a UTF-8 byte-order mark', async () => {
    const f16 = path.join(dir, 'u16.yaml');
    writeFileSync(f16, Buffer.from('\ufeffa: 1\n', 'utf16le'));
    const f8 = path.join(dir, 'u8.yaml');
    writeFileSync(f8, Buffer.from('\ufeffa: 1\n', 'utf8'));
    const r = await readSources([f16, f8]);
    assert.deepEqual(
      r.diagnostics.map((d) => d.code),
      ['RT1008'],
    );
    assert.equal(r.sources.length, 1);
    assert.equal(r.sources[0]?.text, 'a: 1\n');
  });

  it('RT1012: a missing path is an I/O failure', async () => {
    const r = await readSources([path.join(dir, 'missing.yaml')]);
    assert.deepEqual(
      r.diagnostics.map((d) => d.code),
      ['RT1012'],
    );
    assert.equal(r.ioFailed, true);
  });

  it('RT1013: an empty directory is an error (nothing checked is not a pass), not an I/O failure', async () => {
    const r = await readSources([dir]);
    assert.deepEqual(
      r.diagnostics.map((d) => [d.code, d.severity]),
      [['RT1013', 'error']],
    );
    assert.equal(r.ioFailed, false);
  });

  it('RT1013: paths whose files hold no YAML document are reported as nothing checked', () => {
    const d = reportNothingChecked([dir], 0, []);
    assert.equal(d?.code, 'RT1013');
    assert.equal(d?.severity, 'error');
    assert.equal(reportNothingChecked([dir], 1, []), undefined);
  });

  it('reads a ConfigMap volume: each file once through its symbolic link, the ..data internals passed over', async () => {
    writeConfigMapVolume(dir, { 'p.yaml': POLICY, 'q.yml': POLICY.replace('name: p', 'name: q') });
    const r = await readSources([dir]);
    assert.deepEqual(r.diagnostics, []);
    assert.deepEqual(
      r.sources.map((s) => path.relative(dir, s.file)),
      ['p.yaml', 'q.yml'],
    );
    assert.equal(r.sources[0]?.text, POLICY);
  });

  it('follows a symbolic link to a directory once, and a link loop ends', async () => {
    mkdirSync(path.join(dir, 'real'));
    writeFileSync(path.join(dir, 'real', 'a.yaml'), POLICY);
    symlinkSync('real', path.join(dir, 'linked'));
    symlinkSync('..', path.join(dir, 'real', 'up'));
    const r = await readSources([dir]);
    assert.deepEqual(
      r.sources.map((s) => path.relative(dir, s.file)),
      [path.join('linked', 'a.yaml')],
    );
    assert.equal(r.ioFailed, false);
  });

  it('RT1012: a dangling link named like a policy file is reported, not skipped', async () => {
    symlinkSync('missing.yaml', path.join(dir, 'p.yaml'));
    writeFileSync(path.join(dir, 'ok.yaml'), POLICY);
    const r = await readSources([dir]);
    assert.deepEqual(
      r.diagnostics.map((d) => [d.code, path.relative(dir, d.file)]),
      [['RT1012', 'p.yaml']],
    );
    assert.equal(r.sources.length, 1);
    assert.equal(r.ioFailed, true);
  });

  it('RT1008: refuses UTF-16 text without a byte-order mark (NUL bytes) with a clear message', async () => {
    const f = path.join(dir, 'u16.yaml');
    writeFileSync(f, Buffer.from('a: 1\n', 'utf16le'));
    const r = await readSources([f]);
    assert.deepEqual(
      r.diagnostics.map((d) => d.code),
      ['RT1008'],
    );
    assert.match(
      r.diagnostics[0]?.message ?? '',
      /NUL byte.*UTF-16 or UTF-32 text without a byte-order mark/,
    );
  });

  it('RT1012: an unreadable subfolder is reported by its own name and the rest is still read', () => {
    // Permission bits bind only a user other than root: the read runs as nobody.
    chmodSync(dir, 0o755);
    mkdirSync(path.join(dir, 'a'));
    writeFileSync(path.join(dir, 'a', 'p.yaml'), POLICY);
    mkdirSync(path.join(dir, 'locked'));
    writeFileSync(path.join(dir, 'locked', 'x.yaml'), POLICY);
    chmodSync(path.join(dir, 'locked'), 0o000);
    writeFileSync(path.join(dir, 'z.yaml'), POLICY);
    const script = `import { readSources } from ${JSON.stringify(path.join(REPO_ROOT, 'compiler/io/read-sources.ts'))};
const r = await readSources([${JSON.stringify(dir)}]);
process.stdout.write(JSON.stringify({ files: r.sources.map((s) => s.file), diagnostics: r.diagnostics.map((d) => [d.code, d.file, d.message]), ioFailed: r.ioFailed }));`;
    const asNobody = process.getuid?.() === 0 ? { uid: 65534, gid: 65534 } : {};
    const child = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
      cwd: REPO_ROOT,
      encoding: 'utf8',
      ...asNobody,
    });
    chmodSync(path.join(dir, 'locked'), 0o755);
    assert.equal(child.status, 0, child.stderr);
    const out = JSON.parse(child.stdout) as { files: string[]; diagnostics: string[][]; ioFailed: boolean };
    assert.deepEqual(
      out.files.map((f) => path.relative(dir, f)),
      [path.join('a', 'p.yaml'), 'z.yaml'],
    );
    assert.deepEqual(
      out.diagnostics.map(([code, file]) => [code, path.relative(dir, file ?? '')]),
      [['RT1012', 'locked']],
    );
    assert.match(out.diagnostics[0]?.[2] ?? '', /cannot read directory .*locked: EACCES/);
    assert.equal(out.ioFailed, true);
  });
});
