// The BPF-LSM trial probe on the host kernel: a well-formed verdict; when refused, it names the stage
// and the errno (this machine's kernel lists bpf among its LSMs and refuses LSM programs). The guest
// run (in-guest/probe.guest.ts) checks the supported case.
import assert from 'node:assert/strict';
import { probeBpfLsm } from '../../../enforcer/bpf/probe-bpf-lsm.js';
import { NativeArtifact, requireNativeArtifact } from '../../support/native.js';
import { isRoot, requirePrereqs } from '../../support/prereq.js';

describe('BPF-LSM probe on the host kernel', function () {
  this.timeout(120_000);
  let loader = '';
  before(function () {
    requirePrereqs(this, [[isRoot(), 'root']]);
    loader = requireNativeArtifact(this, NativeArtifact.bpfLoader);
  });

  it('gives a verdict, with the stage and errno when refused', () => {
    const verdict = probeBpfLsm(loader);
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
