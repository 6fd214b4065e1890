// Unit tests of the guest harness's pure part: module load order from modules.dep.
import assert from 'node:assert/strict';
import { orderModules } from './guest-kernel.js';

const DEP = [
  'kernel/fs/9p/9p.ko: kernel/net/9p/9pnet.ko kernel/fs/fscache/fscache.ko kernel/fs/netfs/netfs.ko',
  'kernel/net/9p/9pnet.ko:',
  'kernel/fs/fscache/fscache.ko: kernel/fs/netfs/netfs.ko',
  'kernel/fs/netfs/netfs.ko:',
  'kernel/net/9p/9pnet_virtio.ko: kernel/drivers/virtio/virtio.ko kernel/net/9p/9pnet.ko',
  'kernel/drivers/virtio/virtio.ko:',
].join('\n');

describe('guest harness: module order', () => {
  it('loads dependencies before the modules that need them, each once', () => {
    const order = orderModules(DEP, ['9pnet_virtio', '9p']);
    assert.deepEqual(order, [
      'kernel/drivers/virtio/virtio.ko',
      'kernel/net/9p/9pnet.ko',
      'kernel/net/9p/9pnet_virtio.ko',
      'kernel/fs/netfs/netfs.ko',
      'kernel/fs/fscache/fscache.ko',
      'kernel/fs/9p/9p.ko',
    ]);
  });
  it('names a module missing from modules.dep', () => {
    assert.throws(() => orderModules(DEP, ['overlay']), /module overlay not in modules.dep/);
  });
});
