// The ip-ttl addon against the real kernel: prebuilt by `npm run build:native`, it sets and reads back the TTL (IPv4) and
// hop limit (IPv6) of accepted TCP connections on loopback, and reports bad input as data, never a crash.
import assert from 'node:assert/strict';
import { createServer, connect, type Server, type Socket } from 'node:net';
import { describe, it, before } from 'mocha';
import { buildIpTtlAddon } from '../../imds/native/build-addon.js';
import { createSocketTtl, loadSocketTtl, type SocketTtl } from '../../imds/socket-ttl.js';
import { requirePrereqs } from '../support/prereq.js';

/** Accepts one connection on `host` and hands the server side to `use`. */
async function withAcceptedSocket<T>(host: string, use: (socket: Socket) => T): Promise<T> {
  let server: Server | undefined;
  try {
    return await new Promise<T>((resolve, reject) => {
      server = createServer((socket) => {
        try {
          resolve(use(socket));
        } catch (err) {
          reject(err instanceof Error ? err : new Error(String(err)));
        } finally {
          socket.destroy();
        }
      });
      server.on('error', reject);
      server.listen(0, host, () => {
        const address = server?.address();
        if (address === null || address === undefined || typeof address === 'string')
          return reject(new Error('no port'));
        connect(address.port, host).on('error', () => undefined);
      });
    });
  } finally {
    await new Promise((r) => (server ? server.close(r) : r(undefined)));
  }
}

describe('imds ip-ttl addon (real setsockopt/getsockopt)', () => {
  let ttl: SocketTtl;
  before(function () {
    // The prebuilt addon (`npm run build:native`); nothing builds it at run time.
    const loaded = loadSocketTtl();
    requirePrereqs(this, [[loaded.ok, `ip-ttl addon: ${loaded.ok ? '' : loaded.error}`]]);
    if (loaded.ok) ttl = loaded.ttl;
  });

  it('builds idempotently: a second build reuses the first', () => {
    const again = buildIpTtlAddon();
    assert.ok(again.ok && !again.rebuilt);
  });
  for (const value of [1, 2, 64, 255]) {
    it(`IPv4: sets TTL ${value} on an accepted connection and reads it back`, async () => {
      const read = await withAcceptedSocket('127.0.0.1', (s) => {
        assert.notEqual(ttl.get(s), undefined);
        assert.deepEqual(ttl.set(s, value), { ok: true });
        return ttl.get(s);
      });
      assert.equal(read, value);
    });
  }
  it('IPv6: sets the unicast hop limit on an accepted connection and reads it back', async function () {
    try {
      await withAcceptedSocket('::1', () => undefined);
    } catch {
      this.skip(); // no IPv6 loopback on this host: nothing to test
    }
    const read = await withAcceptedSocket('::1', (s) => {
      assert.deepEqual(ttl.set(s, 2), { ok: true });
      return ttl.get(s);
    });
    assert.equal(read, 2);
  });
  it('an out-of-range TTL is an error result, not a throw', async () => {
    const results = await withAcceptedSocket('127.0.0.1', (s) => [ttl.set(s, 0), ttl.set(s, 256)]);
    for (const r of results) assert.ok(!r.ok && /between 1 and 255/.test(r.error));
  });
  it('a destroyed socket is an error result, not a throw', async () => {
    const r = await withAcceptedSocket('127.0.0.1', (s) => {
      s.destroy();
      return ttl.set(s, 1);
    });
    assert.ok(!r.ok);
  });
  it('an addon that throws is reported as data', async () => {
    const failing = createSocketTtl({
      setTtl: () => {
        throw new Error('EPERM');
      },
      getTtl: () => {
        throw new Error('EPERM');
      },
    });
    const r = await withAcceptedSocket('127.0.0.1', (s) => [failing.set(s, 1), failing.get(s)] as const);
    assert.deepEqual(r, [{ ok: false, error: 'EPERM' }, undefined]);
  });
});
