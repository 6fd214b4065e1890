// One list (install/not-shipped.txt) says what of dist/ neither the Debian package nor the image ships: its
// parsing, what it matches, that both builds read it, and that its native entries name what the native build
// makes (a renamed output would otherwise slip into both packagings unnoticed).
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { isNotShipped, parseNotShipped, readNotShipped } from '../../install/not-shipped.js';

const ROOT = join(import.meta.dirname, '../..');

describe('not-shipped list (install/not-shipped.txt)', () => {
  it('parses paths, folders and endings, skipping comments, and refuses anything else with its line', () => {
    const list = parseNotShipped('# c\n\ndeb/\nnative/bpf/vmlinux.h\n*.map\n');
    assert.deepEqual(list, { paths: ['deb/', 'native/bpf/vmlinux.h'], endings: ['.map'] });
    for (const bad of ['../etc/passwd', '/abs', 'a/../b', 'x y', '*map']) {
      assert.throws(() => parseNotShipped(`deb/\n${bad}\n`), /line 2/, bad);
    }
  });

  it('matches a folder and everything in it, an exact file, and endings; nothing else', () => {
    const list = parseNotShipped('deb/\nnative/bpf/test-only/\nnative/bpf/vmlinux.h\n*.map\n');
    for (const rel of [
      'deb',
      'deb/rtctl.deb',
      'native/bpf/test-only',
      'native/bpf/test-only/x',
      'native/bpf/vmlinux.h',
      'bin/rtctl.js.map',
    ])
      assert.equal(isNotShipped(list, rel), true, rel);
    for (const rel of [
      'debian',
      'native/bpf',
      'native/bpf/test-only-not',
      'native/bpf/vmlinux.h.keep',
      'native/bpf/rtctl-bpf-loader',
      'bin/rtctl.js',
    ])
      assert.equal(isNotShipped(list, rel), false, rel);
  });

  it('is read by both packagings, and its native entries name files the native build makes', () => {
    assert.match(readFileSync(join(ROOT, 'image/build.sh'), 'utf8'), /install\/not-shipped\.txt/);
    assert.match(readFileSync(join(ROOT, 'install/systemd/build-deb.ts'), 'utf8'), /readNotShipped\(\)/);
    const list = readNotShipped();
    const native = list.paths.filter((p) => p.startsWith('native/'));
    assert.ok(native.length >= 5);
    for (const p of native)
      assert.ok(existsSync(join(ROOT, 'dist', p)), `dist/${p} (run npm run build:native)`);
    // What the planes load at run time is shipped.
    for (const kept of [
      'native/network/rtctl-net.bpf.o',
      'native/syscalls/rtctl-sys.bpf.o',
      'native/bpf/rtctl-bpf-loader',
    ])
      assert.equal(isNotShipped(list, kept), false, kept);
  });
});
