// Locating the prebuilt native artifacts: a present one is found; a missing one is an error naming its
// path, why the build did not produce it (from build-native.json) and the command that builds it.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  NATIVE_BUILD_RECORD,
  NativeArtifact,
  locateNativeArtifact,
} from '../../../enforcer/io/native-tools.js';

describe('native artifacts: locating what npm run build:native built', () => {
  let dir = '';
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'rtctl-native-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('finds a built artifact', () => {
    mkdirSync(join(dir, 'bpf'));
    writeFileSync(join(dir, NativeArtifact.bpfLoader), '');
    assert.deepEqual(locateNativeArtifact(NativeArtifact.bpfLoader, dir), {
      ok: true,
      path: join(dir, 'bpf', 'rtctl-bpf-loader'),
    });
  });

  it('names the build step when the native build has not run', () => {
    const r = locateNativeArtifact(NativeArtifact.fanotifyHelper, dir);
    assert.equal(r.ok, false);
    if (!r.ok)
      assert.equal(
        r.error,
        `${join(dir, 'rtctl-fanotify')} is not built (the native build has not run); run \`npm run build:native\``,
      );
  });

  it('says why the build skipped it', () => {
    writeFileSync(
      join(dir, NATIVE_BUILD_RECORD),
      JSON.stringify({
        artifacts: { 'bpf/rtctl-bpf-loader': { status: 'skipped', reason: 'missing clang' } },
      }),
    );
    const r = locateNativeArtifact(NativeArtifact.bpfLoader, dir);
    assert.equal(r.ok, false);
    if (!r.ok)
      assert.match(r.error, /\(the native build skipped it: missing clang\); run `npm run build:native`$/);
  });
});
