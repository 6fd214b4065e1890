// File-level input handling: size bound, strict UTF-8, unreadable paths, empty directories, recursion order.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { readSources } from '../../compiler/io/read-sources.js';

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

  it('RT1013: an empty directory is a warning, not a failure', async () => {
    const r = await readSources([dir]);
    assert.deepEqual(
      r.diagnostics.map((d) => [d.code, d.severity]),
      [['RT1013', 'warning']],
    );
    assert.equal(r.ioFailed, false);
  });
});
