// The hub encodes each alert line to UTF-8 once, in segments shared by the alert log and every stream: the
// bytes of every alert must be exactly those of its JSON line and a newline, whatever the text (non-ASCII,
// astral characters, controls, lone surrogates), however publishing and encoding interleave, and also for
// an alert that left the ring before anything asked for its bytes (the log may still be holding it).
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { closeSync, constants, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { pino } from 'pino';
import '../../support/property-seed.js';
import { createAlertHub, encodedBuffers, type SequencedAlert } from '../../../enforcer/alerts/alert-hub.js';
import type { AlertRecord } from '../../../enforcer/alerts/alert-record.js';
import { openAlertLog } from '../../../enforcer/io/alert-log.js';

function record(resource: string, n: number): AlertRecord {
  return { Timestamp: n, UpdatedTime: '2026-11-25T00:00:00.000000Z', Resource: resource } as AlertRecord;
}

function bytesOf(item: SequencedAlert): Buffer {
  const span = item.encoded();
  return span.buffer.subarray(span.start, span.end);
}

const text = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.string({ unit: 'grapheme', maxLength: 40 }),
  fc.string({ maxLength: 40 }),
  // Long enough to cut a burst into several segments (256 KiB each).
  fc.nat({ max: 3 }).map((n) => 'ü'.repeat(n * 70_000)),
);

describe('alert hub: each line encoded once, bytes shared by every writer', () => {
  it('every held alert has the bytes of its JSON line and a newline, however publish and encode interleave', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 8 }),
        fc.array(fc.tuple(text, fc.boolean()), { minLength: 1, maxLength: 40 }),
        (capacity, steps) => {
          const hub = createAlertHub(capacity);
          const published: { item: SequencedAlert; line: string }[] = [];
          steps.forEach(([resource, encodeNow], n) => {
            const alert = record(resource, n);
            const line = JSON.stringify(alert);
            const item = hub.publish(alert, 0);
            assert.equal(item.line, line);
            published.push({ item, line });
            // A writer asks for the bytes of an older alert still held, or of this one.
            if (encodeNow) (hub.at(Math.max(hub.firstHeld(), item.seq - 2)) ?? item).encoded();
          });
          // Every alert, held or gone from the ring (kept by a writer), has its own bytes.
          for (const { item, line } of published) {
            assert.deepEqual(bytesOf(item), Buffer.from(`${line}\n`));
            assert.equal(item.line, line, 'the line read back from the bytes');
            assert.deepEqual(item.alert, JSON.parse(line));
          }
          const held = hub.since(0);
          assert.deepEqual(
            Buffer.concat(encodedBuffers(held)),
            Buffer.from(held.map((h) => `${JSON.stringify(h.alert)}\n`).join('')),
          );
        },
      ),
      { numRuns: 150 },
    );
  });

  it('alerts published together share one segment, which the buffers of a range view without copying', () => {
    const hub = createAlertHub(100);
    const items = Array.from({ length: 10 }, (_, i) => hub.publish(record(`/r${i}`, i), 0));
    const first = items[0]?.encoded();
    for (const item of items) assert.equal(item.encoded().buffer, first?.buffer);
    const buffers = encodedBuffers(items);
    assert.equal(buffers.length, 1);
    assert.equal(buffers[0]?.buffer, first?.buffer.buffer);
  });

  for (const writeOnThread of [true, false])
    it(`the alert log writes a hub alert with the same bytes as its line, strings and alerts mixed in order (${writeOnThread ? 'on the event loop thread' : 'in the thread pool'})`, async () => {
      const dir = mkdtempSync(join(tmpdir(), 'rtctl-hub-encoding-'));
      try {
        const path = join(dir, 'alerts.jsonl');
        const log = openAlertLog({ path, logger: pino({ level: 'silent' }), writeOnThread });
        const hub = createAlertHub(4);
        const expected: string[] = [];
        const written: Promise<void>[] = [];
        for (let i = 0; i < 30; i++) {
          const resource = i % 3 === 0 ? `/tmp/\u00fc-${i}\ud83d\ude00\n` : `/r${i}`;
          const item = hub.publish(record(resource, i), 0);
          expected.push(item.line);
          written.push(new Promise((resolve) => log.append(i % 5 === 4 ? item.line : item, resolve)));
          // Some turns end between appends: the log writes what it has, the hub encodes a new segment.
          if (i % 7 === 6) await new Promise((resolve) => setImmediate(resolve));
        }
        await Promise.all(written);
        await log.close();
        assert.equal(readFileSync(path, 'utf8'), `${expected.join('\n')}\n`);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });

  it('the alert log moves its writes to the thread pool after a slow write (a pipe whose reader is late)', async function () {
    this.timeout(20000);
    const dir = mkdtempSync(join(tmpdir(), 'rtctl-hub-encoding-'));
    try {
      const fifo = join(dir, 'alerts.fifo');
      const copy = join(dir, 'copy.jsonl');
      assert.equal(spawnSync('mkfifo', [fifo]).status, 0, 'mkfifo');
      // Held open (read and write, so opening it does not wait) until the late reader has started.
      const holder = openSync(fifo, constants.O_RDWR | constants.O_NONBLOCK);
      const warnings: string[] = [];
      const logger = pino({ level: 'warn' }, { write: (l: string) => void warnings.push(l) });
      const log = openAlertLog({ path: fifo, logger });
      const hub = createAlertHub(1000);
      const expected: string[] = [];
      const written: Promise<void>[] = [];
      const reader = spawn('sh', ['-c', `sleep 0.3; exec cat "${fifo}" > "${copy}"`]);
      const readerDone = new Promise<number | null>((resolve) => reader.once('exit', resolve));
      // More than a pipe holds (64 KiB): the first write waits for the reader, 300 ms.
      for (let i = 0; i < 600; i++) {
        const item = hub.publish(record(`/${'x'.repeat(300)}/${i}`, i), 0);
        expected.push(item.line);
        written.push(new Promise((resolve) => log.append(item, resolve)));
        if (i % 200 === 199) await new Promise((resolve) => setImmediate(resolve));
      }
      await Promise.all(written);
      await log.close();
      closeSync(holder);
      assert.equal(await readerDone, 0);
      assert.equal(readFileSync(copy, 'utf8'), `${expected.join('\n')}\n`);
      assert.equal(warnings.filter((w) => w.includes('writing in the thread pool from now on')).length, 1);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
