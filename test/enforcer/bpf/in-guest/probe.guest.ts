// In the guest (BPF-LSM active), the trial probe says supported, and leaves nothing attached.
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { probeBpfLsm } from '../../../../enforcer/bpf/probe-bpf-lsm.js';
import { loaderPath } from './guest-support.js';

describe('BPF-LSM probe in the guest', () => {
  it('finds BPF-LSM supported by loading and attaching the programs', () => {
    const before = readdirSync('/sys/fs/bpf');
    const verdict = probeBpfLsm(loaderPath);
    assert.deepEqual(verdict, { supported: true, reason: 'LSM programs load and attach' });
    assert.deepEqual(readdirSync('/sys/fs/bpf'), before, 'the probe pins nothing');
  });
});
