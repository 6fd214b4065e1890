// Compile output on disk (issue 12, items 9 and 10): long policy names fit file-name limits, a failed write
// leaves the output as it was, and symbolic links in the output are refused before anything changes.
import assert from 'node:assert/strict';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { compile } from '../../compiler/compile.js';
import { fitFileName } from '../../compiler/emit/file-name.js';
import { listStaleArtifacts } from '../../compiler/io/prune-output.js';
import { OutputRefusedError, writeArtifacts } from '../../compiler/io/write-artifacts.js';

const policy = (name: string): string =>
  `apiVersion: security.runtime.com/v1\nkind: RuntimePolicy\nmetadata:\n  name: ${name}\n  namespace: ns\nspec:\n  selector: {matchLabels: {app: web}}\n  action: Block\n  process: {matchPaths: [{path: /bin/sh}]}\n`;

/** Every file below `dir`, relative, sorted, with its content. */
function snapshot(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (d: string): void => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) walk(p);
      else out[path.relative(dir, p)] = e.isSymbolicLink() ? '<link>' : readFileSync(p, 'utf8');
    }
  };
  walk(dir);
  return out;
}

describe('compile output writing', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'rtctl-out-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('a valid 253-character policy name (the longest) compiles to a file name within 255 bytes, the same every time', async () => {
    const name = `${'a'.repeat(120)}.${'b'.repeat(132)}`;
    assert.equal(name.length, 253);
    const result = compile([{ file: 'p.yaml', text: policy(name) }], { targets: ['crd'] });
    assert.deepEqual(
      result.diagnostics.filter((d) => d.severity === 'error'),
      [],
    );
    const out = path.join(dir, 'build');
    await writeArtifacts(out, result.artifacts);
    const manifest = result.artifacts.find((a) => a.path.startsWith('policies/runtimepolicy/ns/'));
    assert.ok(manifest);
    const file = path.basename(manifest.path);
    assert.ok(Buffer.byteLength(file) <= 255, file);
    assert.equal(file, fitFileName(name, '.yaml'));
    assert.match(file, /^a{120}\.b+-[0-9a-f]{16}\.yaml$/);
    assert.ok(existsSync(path.join(out, 'index.json')));
    assert.ok(existsSync(path.join(out, manifest.path)));
    // Names that differ only past the cut stay distinct.
    assert.notEqual(fitFileName(`${name.slice(0, -1)}c`, '.yaml'), file);
  });

  it('short names are kept as they are', () => {
    assert.equal(fitFileName('web', '.yaml'), 'web.yaml');
  });

  it('a write that fails leaves the output directory as it was (nothing partial, no index.json change)', async () => {
    const out = path.join(dir, 'build');
    await writeArtifacts(out, [
      { path: 'a.yaml', content: 'old a\n' },
      { path: 'index.json', content: '{"old":true}\n' },
    ]);
    const before = snapshot(out);
    // "x" as a file and as a folder: the second write fails in the staging folder.
    await assert.rejects(
      writeArtifacts(out, [
        { path: 'a.yaml', content: 'new a\n' },
        { path: 'x', content: 'file\n' },
        { path: 'x/y.yaml', content: 'nested\n' },
        { path: 'index.json', content: '{"new":true}\n' },
      ]),
    );
    assert.deepEqual(snapshot(out), before);
    assert.deepEqual(
      readdirSync(dir).filter((n) => n !== 'build'),
      [],
      'the staging folder is removed',
    );
  });

  it('refuses a file name longer than 255 bytes before writing anything', async () => {
    const out = path.join(dir, 'build');
    await assert.rejects(
      writeArtifacts(out, [
        { path: 'a.yaml', content: 'a\n' },
        { path: `${'n'.repeat(256)}.yaml`, content: 'x\n' },
      ]),
      OutputRefusedError,
    );
    assert.equal(existsSync(out), false);
  });

  it('refuses a symbolic link inside the output: nothing outside is removed or written, nothing inside changes', async () => {
    const outside = path.join(dir, 'outside');
    mkdirSync(outside);
    writeFileSync(path.join(outside, 'victim.yaml'), 'precious\n');
    const out = path.join(dir, 'build');
    mkdirSync(out);
    symlinkSync(outside, path.join(out, 'policies'));
    // A crafted index.json listing the victim through the link, so a prune would delete it.
    writeFileSync(
      path.join(out, 'index.json'),
      JSON.stringify({ artifacts: [{ path: 'policies/victim.yaml' }] }),
    );
    const result = compile([{ file: 'p.yaml', text: policy('web') }], { targets: ['crd'] });
    const stale = await listStaleArtifacts(out, new Set(result.artifacts.map((a) => a.path)));
    assert.deepEqual(stale, ['policies/victim.yaml']);
    await assert.rejects(writeArtifacts(out, result.artifacts, stale), (err: unknown) => {
      assert.ok(err instanceof OutputRefusedError);
      assert.match(
        err.message,
        /build\/policies is a symbolic link; rtctl compile does not write or remove through links/,
      );
      return true;
    });
    assert.deepEqual(snapshot(outside), { 'victim.yaml': 'precious\n' });
    assert.deepEqual(Object.keys(snapshot(out)).sort(), ['index.json', 'policies']);
  });

  it('refuses a stale file that is a link (a crafted index.json naming a link to a file outside)', async () => {
    const victim = path.join(dir, 'victim.txt');
    writeFileSync(victim, 'precious\n');
    const out = path.join(dir, 'build');
    mkdirSync(path.join(out, 'policies'), { recursive: true });
    symlinkSync(victim, path.join(out, 'policies', 'old.yaml'));
    await assert.rejects(
      writeArtifacts(out, [{ path: 'index.json', content: '{}\n' }], ['policies/old.yaml']),
      /build\/policies\/old\.yaml is a symbolic link/,
    );
    assert.equal(readFileSync(victim, 'utf8'), 'precious\n');
  });

  it('writes beside a link in a part of the output it does not touch (an image build tree under build/)', async () => {
    const out = path.join(dir, 'build');
    mkdirSync(path.join(out, 'image', 'app', 'bin'), { recursive: true });
    symlinkSync('../../../opt/rtctl.js', path.join(out, 'image', 'app', 'bin', 'rtctl'));
    await writeArtifacts(out, [
      { path: 'policies/p.yaml', content: 'p\n' },
      { path: 'index.json', content: '{}\n' },
    ]);
    assert.equal(readFileSync(path.join(out, 'policies', 'p.yaml'), 'utf8'), 'p\n');
    assert.equal(snapshot(out)[path.join('image', 'app', 'bin', 'rtctl')], '<link>');
  });

  it('removes the stale artifacts of the previous build once the new one is in place', async () => {
    const out = path.join(dir, 'build');
    await writeArtifacts(out, [
      { path: 'policies/old.yaml', content: 'old\n' },
      { path: 'index.json', content: JSON.stringify({ artifacts: [{ path: 'policies/old.yaml' }] }) },
    ]);
    const next = [
      { path: 'policies/new.yaml', content: 'new\n' },
      { path: 'index.json', content: '{}\n' },
    ];
    const stale = await listStaleArtifacts(out, new Set(next.map((a) => a.path)));
    await writeArtifacts(out, next, stale);
    assert.deepEqual(snapshot(out), { 'index.json': '{}\n', [path.join('policies', 'new.yaml')]: 'new\n' });
  });
});
