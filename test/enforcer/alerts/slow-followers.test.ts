// The alert server under hostile local clients: a follower that stops reading holds one bounded buffer and,
// once too far behind, is disconnected with a stream-end line naming what it missed and where to resume;
// a stalled connection is closed after the idle timeout; connections and streams are capped; the default
// transport is a unix socket with mode 0660 and the configured group.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { request } from 'node:http';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { pino } from 'pino';
import { createAlertHub } from '../../../enforcer/alerts/alert-hub.js';
import type { AlertRecord } from '../../../enforcer/alerts/alert-record.js';
import { startAlertServer, type AlertServer } from '../../../enforcer/alerts/alert-server.js';
import { followAlerts } from '../../../enforcer/alerts/follow-alerts.js';
import { asStreamEnd } from '../../../enforcer/alerts/stream-end.js';

const logger = pino({ level: 'silent' });

/** An alert of about 4 KB, so that a few hundred fill any socket buffer. */
function bigAlert(n: number): AlertRecord {
  return { Timestamp: n, Resource: `/r${n}`, Message: 'm'.repeat(4000) } as unknown as AlertRecord;
}

async function waitFor(cond: () => boolean, what: string, ms = 10000): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`${what}: not reached`);
    await sleep(10);
  }
}

/** A raw client on the unix socket that sends a request and reads nothing until told. */
function rawFollower(path: string, query = 'after=0&follow=1'): { socket: Socket; data: () => string } {
  const socket = connect(path);
  let data = '';
  socket.write(`GET /alerts?${query} HTTP/1.1\r\nHost: x\r\n\r\n`);
  socket.pause();
  socket.setEncoding('utf8');
  socket.on('data', (c: string) => (data += c));
  socket.pause();
  return { socket, data: () => data };
}

describe('alert server under slow and idle followers (unix socket)', function () {
  this.timeout(60000);
  let dir: string;
  const servers: AlertServer[] = [];
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'rtctl-followers-'));
  });
  afterEach(async () => {
    for (const s of servers.splice(0)) await s.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('bounds the buffer of followers that stop reading and ends them with the missed count and resume sequence', async () => {
    const hub = createAlertHub(2000);
    const bufferBound = 64 * 1024;
    const s = await startAlertServer({
      hub,
      listen: { kind: 'unix', path: join(dir, 'alerts.sock') },
      logger,
      followerBufferBytes: bufferBound,
      maxLag: 300,
    });
    servers.push(s);
    const followers = Array.from({ length: 20 }, () => rawFollower(join(dir, 'alerts.sock')));
    await waitFor(() => s.stats().streams === 20, 'twenty streams open');
    let largest = 0;
    // Published in bursts (as the enforcer does, one batch from the data plane at a time): each stream is
    // pumped once per turn of the event loop.
    for (let i = 1; i <= 1500; i++) {
      hub.publish(bigAlert(i));
      largest = Math.max(largest, s.stats().bufferedBytes[0] ?? 0);
      if (i % 50 === 0) await new Promise((resolve) => setImmediate(resolve));
    }
    await waitFor(() => s.stats().endedBehind === 20, 'every silent follower was ended');
    // The bound holds whatever the flood: one buffer bound plus at most one write batch of lines.
    assert.ok(largest > 0, 'the followers were written to');
    assert.ok(largest <= bufferBound + 64 * 1024 + 8192, `largest buffer ${largest} bytes`);
    assert.equal(s.stats().streams, 0);
    // A follower that reads again gets what was buffered, then the stream-end line.
    const f = followers[0];
    assert.ok(f);
    f.socket.resume();
    await new Promise<void>((resolve) => f.socket.once('end', resolve));
    const lines = f
      .data()
      .split('\r\n\r\n')
      .slice(1)
      .join('\r\n\r\n')
      .split('\n')
      .filter((l) => /^\{/.test(l));
    const last = lines[lines.length - 1] ?? '';
    const end = asStreamEnd(JSON.parse(last));
    assert.ok(end, `the last line is a stream end: ${last.slice(0, 200)}`);
    const received = lines.slice(0, -1).map((l) => (JSON.parse(l) as { Timestamp: number }).Timestamp);
    assert.equal(received[received.length - 1], end.resumeAfter, 'resume after the last alert received');
    assert.ok(end.missed > 300, `missed ${end.missed}`);
    for (const other of followers) other.socket.destroy();
  });

  it('lets a follower that starts more than maxLag behind read its backlog (no end-and-resume loop)', async () => {
    // Issue 13: a stream that asked for more history than maxLag was ended on its first pump, before any
    // write, naming the position it asked for: `rtctl logs` resumed there at once and was ended again, for
    // ever. Now the allowance covers the backlog it asked for.
    const hub = createAlertHub(2000);
    for (let i = 1; i <= 1000; i++) hub.publish({ Timestamp: i } as unknown as AlertRecord);
    const path = join(dir, 'alerts.sock');
    const s = await startAlertServer({ hub, listen: { kind: 'unix', path }, logger, maxLag: 10 });
    servers.push(s);
    const got: number[] = [];
    const notices: string[] = [];
    const abort = new AbortController();
    const following = followAlerts({
      servers: [`unix:${path}`],
      follow: true,
      signal: abort.signal,
      retryMs: 10,
      onAlert: (a) => got.push(a.Timestamp),
      onNotice: (m) => notices.push(m),
    });
    try {
      await waitFor(() => got.length >= 1000 || s.stats().endedBehind > 50, 'the backlog read');
      assert.equal(s.stats().endedBehind, 0, `streams ended: ${notices.slice(0, 3).join('; ')}`);
      assert.deepEqual(
        got,
        Array.from({ length: 1000 }, (_, i) => i + 1),
      );
      // Live alerts after the backlog still arrive on the same stream.
      hub.publish({ Timestamp: 1001 } as unknown as AlertRecord);
      await waitFor(() => got.length === 1001, 'the live alert');
      assert.equal(s.stats().endedBehind, 0);
    } finally {
      abort.abort();
      await following;
    }
  });

  it('ends a silent follower with a backlog only once it loses ground, after its first write', async () => {
    const hub = createAlertHub(1000);
    for (let i = 1; i <= 300; i++) hub.publish(bigAlert(i));
    const path = join(dir, 'alerts.sock');
    const s = await startAlertServer({
      hub,
      listen: { kind: 'unix', path },
      logger,
      followerBufferBytes: 64 * 1024,
      maxLag: 10,
    });
    servers.push(s);
    const f = rawFollower(path);
    await waitFor(() => (s.stats().bufferedBytes[0] ?? 0) > 0, 'the first write');
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(s.stats().endedBehind, 0, 'not ended for the backlog it asked for');
    assert.equal(s.stats().streams, 1);
    // It reads nothing while more alerts come: now it falls further behind, and is ended.
    for (let i = 301; i <= 320; i++) hub.publish(bigAlert(i));
    await waitFor(() => s.stats().endedBehind === 1, 'the silent follower ended');
    f.socket.resume();
    await new Promise<void>((resolve) => f.socket.once('end', resolve));
    const lines = f
      .data()
      .split('\r\n\r\n')
      .slice(1)
      .join('\r\n\r\n')
      .split('\n')
      .filter((l) => /^\{/.test(l));
    const end = asStreamEnd(JSON.parse(lines[lines.length - 1] ?? '{}'));
    assert.ok(end, 'the last line is a stream end');
    const received = lines.slice(0, -1).map((l) => (JSON.parse(l) as { Timestamp: number }).Timestamp);
    assert.ok(received.length > 0, 'it received part of its backlog before the end');
    assert.equal(end.resumeAfter, received[received.length - 1], 'it resumes after what it received');
    assert.equal(end.missed, 320 - end.resumeAfter);
  });

  it('closes a stalled follower after the idle timeout', async () => {
    const hub = createAlertHub(5000);
    const s = await startAlertServer({
      hub,
      listen: { kind: 'unix', path: join(dir, 'alerts.sock') },
      logger,
      followerBufferBytes: 16 * 1024,
      idleTimeoutMs: 300,
      keepAliveMs: 100000,
    });
    servers.push(s);
    const f = rawFollower(join(dir, 'alerts.sock'));
    await waitFor(() => s.stats().streams === 1, 'stream open');
    for (let i = 1; i <= 200; i++) hub.publish(bigAlert(i));
    await waitFor(() => (s.stats().bufferedBytes[0] ?? 0) > 0, 'the follower stalled with data waiting');
    await waitFor(() => s.stats().connections === 0, 'connection released');
    // The client sees its end once it reads again.
    const closed = new Promise<void>((resolve) => f.socket.once('close', () => resolve()));
    f.socket.resume();
    await closed;
  });

  it('caps streams (503) while /healthz keeps answering, and refuses connections beyond the cap', async () => {
    const hub = createAlertHub(10);
    const path = join(dir, 'alerts.sock');
    const s = await startAlertServer({
      hub,
      listen: { kind: 'unix', path },
      logger,
      maxStreams: 3,
      maxConnections: 6,
    });
    servers.push(s);
    const get = (p: string): Promise<number> =>
      new Promise((resolve, reject) => {
        const req = request({ socketPath: path, path: p, agent: false }, (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
          res.destroy();
        });
        req.on('error', reject);
        req.end();
      });
    const streams = [rawFollower(path), rawFollower(path), rawFollower(path)];
    await waitFor(() => s.stats().streams === 3, 'three streams');
    assert.equal(await get('/alerts?follow=1'), 503);
    assert.equal(await get('/healthz'), 200);
    // Idle connections up to the cap; one more is closed by the server at once.
    const idle = [connect(path), connect(path), connect(path)];
    await waitFor(() => s.stats().connections === 6, 'six connections');
    const extra = connect(path);
    await new Promise<void>((resolve) => extra.once('close', () => resolve()));
    for (const c of [...streams.map((x) => x.socket), ...idle]) c.destroy();
    await waitFor(() => s.stats().connections === 0, 'all released');
    assert.equal(await get('/healthz'), 200);
  });

  it('closes connections that never send their request headers', async () => {
    const hub = createAlertHub(10);
    const path = join(dir, 'alerts.sock');
    const s = await startAlertServer({ hub, listen: { kind: 'unix', path }, logger, headersTimeoutMs: 300 });
    servers.push(s);
    const silent = connect(path);
    silent.write('GET /alerts HTTP/1.1\r\n');
    await new Promise<void>((resolve) => silent.once('close', () => resolve()));
  });

  it('creates the unix socket 0660 with the configured group, and replaces a stale socket', async () => {
    const path = join(dir, 'alerts.sock');
    const first = await startAlertServer({ hub: createAlertHub(10), listen: { kind: 'unix', path }, logger });
    await assert.rejects(
      startAlertServer({ hub: createAlertHub(10), listen: { kind: 'unix', path }, logger }),
      /another process is serving alerts/,
    );
    await first.close();
    const s = await startAlertServer({
      hub: createAlertHub(10),
      listen: { kind: 'unix', path },
      logger,
      socketGid: 4242,
    });
    servers.push(s);
    const st = statSync(path);
    assert.equal(st.mode & 0o777, 0o660);
    assert.equal(st.gid, 4242);
    assert.equal(s.url, `unix:${path}`);
  });
});
