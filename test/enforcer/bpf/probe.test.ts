// The BPF-LSM trial probe on the host kernel: a well-formed verdict; when refused, it names the stage
// and the errno (this machine's kernel lists bpf among its LSMs and refuses LSM programs). The guest
// run (in-guest/probe.guest.ts) checks the supported case.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { probeBpfLsm } from '../../../enforcer/bpf/probe-bpf-lsm.js';
import { hasCommand, isRoot, requirePrereqs } from '../../support/prereq.js';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '..');

describe('BPF-LSM probe on the host kernel', function () {
  this.timeout(120_000);
  before(function () {
    requirePrereqs(this, [
      [isRoot(), 'root'],
      [hasCommand('clang') && hasCommand('bpftool'), 'clang and bpftool build the programs'],
    ]);
    execFileSync(path.join(repoRoot, 'enforcer/bpf/build.sh'), { stdio: ['ignore', 'ignore', 'pipe'] });
  });

  it('gives a verdict, with the stage and errno when refused', () => {
    const verdict = probeBpfLsm(path.join(repoRoot, 'enforcer/bpf/out/rtctl-bpf-loader'));
    assert.notEqual(verdict.reason, '');
    if (!verdict.supported) {
      assert.ok(verdict.stage === 'load' || verdict.stage === 'attach', JSON.stringify(verdict));
      assert.ok((verdict.errno ?? 0) > 0, JSON.stringify(verdict));
    }
  });

  it('reports a missing loader as a spawn failure, not a crash', () => {
    const verdict = probeBpfLsm('/nonexistent/rtctl-bpf-loader');
    assert.equal(verdict.supported, false);
    assert.equal(verdict.stage, 'spawn');
  });
});
