// In-guest checks of the harness itself: the guest runs the tests as root on a kernel with BPF-LSM
// active, with bpffs and cgroup2 mounted and the repository visible read-only.
import assert from 'node:assert/strict';
import { readFileSync, statSync } from 'node:fs';

describe('guest environment', () => {
  it('runs as root', () => {
    assert.equal(process.getuid?.(), 0);
  });
  it('has bpf among the active LSMs', () => {
    const lsms = readFileSync('/sys/kernel/security/lsm', 'utf8').split(',');
    assert.ok(lsms.includes('bpf'), `active LSMs: ${lsms.join(',')}`);
  });
  it('has bpffs and cgroup2 mounted', () => {
    const mounts = readFileSync('/proc/mounts', 'utf8');
    assert.match(mounts, /^bpf \/sys\/fs\/bpf bpf /m);
    assert.match(mounts, /^cgroup2 \/sys\/fs\/cgroup cgroup2 /m);
  });
  it('has a writable exchange directory', () => {
    const out = process.env['RTCTL_GUEST_OUT'] ?? '';
    assert.ok(statSync(out).isDirectory());
  });
});
