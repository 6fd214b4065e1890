// `npm run build:native` is incremental: run again with nothing changed, it rebuilds nothing, and it records
// every artifact's status (built, up to date, or skipped with a reason) in dist/native/build-native.json.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  NATIVE_BUILD_RECORD,
  findNativeDir,
  findPackageRoot,
  type NativeBuildEntry,
} from '../../enforcer/io/native-tools.js';

describe('npm run build:native', function () {
  this.timeout(600000);

  it('rebuilds nothing on a second run and records every artifact', () => {
    const run = (): string => {
      const r = spawnSync(process.execPath, ['--import', 'tsx', 'scripts/build-native.ts'], {
        cwd: findPackageRoot(),
        encoding: 'utf8',
      });
      assert.equal(r.status, 0, r.stderr);
      return r.stdout;
    };
    run();
    const second = run();
    const record = JSON.parse(readFileSync(join(findNativeDir(), NATIVE_BUILD_RECORD), 'utf8')) as {
      artifacts: Record<string, NativeBuildEntry>;
    };
    assert.deepEqual(Object.keys(record.artifacts).sort(), [
      'bpf/rtctl-bpf-loader',
      'ip-ttl.node',
      'network/rtctl-net-loader',
      'network/rtctl-net.bpf.o',
      'rtctl-fanotify',
      'rtctl-probe-bpf-lsm',
      'syscalls/rtctl-sys-loader',
      'syscalls/rtctl-sys.bpf.o',
    ]);
    for (const [name, entry] of Object.entries(record.artifacts)) {
      assert.ok(entry.status === 'up-to-date' || entry.status === 'skipped', `${name}: ${entry.status}`);
      if (entry.status === 'skipped')
        assert.ok((entry.reason ?? '') !== '', `${name} says why it was skipped`);
      assert.match(second, new RegExp(`build:native: ${name.replace(/[./]/g, '\\$&')}: ${entry.status}`));
    }
  });
});
