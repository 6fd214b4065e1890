// The alert log: rotation by size into a bounded number of files, mode 0640 with a group, a start-up that
// reads only the tail it replays, from the end backwards, so a log of any size (here a 3 GiB sparse file from
// before rotation, costing no disk) does not stop a restart, and the mark that says which numbered events the
// log holds.
import assert from 'node:assert/strict';
import {
  appendFileSync,
  closeSync,
  existsSync,
  ftruncateSync,
  mkdtempSync,
  openSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { alertLogFiles, alertLogMarkPath, openAlertLog } from '../../../enforcer/io/alert-log.js';
import { readAlertLogTail } from '../../../enforcer/io/alert-log-tail.js';
import type { AlertRecord } from '../../../enforcer/alerts/alert-record.js';

const logger = pino({ level: 'silent' });

function line(n: number, pad = 0): string {
  return JSON.stringify({ Timestamp: n, Resource: `/r${n}`, Message: 'x'.repeat(pad) });
}

async function appendAll(log: ReturnType<typeof openAlertLog>, lines: string[]): Promise<void> {
  await Promise.all(lines.map((l) => new Promise<void>((resolve) => log.append(l, resolve))));
}

describe('alert log', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'rtctl-alert-log-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('rotates by size and keeps at most the configured number of files', async () => {
    const path = join(dir, 'alerts.ndjson');
    const log = openAlertLog({ path, maxBytes: 1000, maxFiles: 3, logger });
    // 100 lines of ~110 bytes, written in several batches: ~11 KB through 1 000-byte files.
    for (let batch = 0; batch < 10; batch++)
      await appendAll(
        log,
        Array.from({ length: 10 }, (_, i) => line(batch * 10 + i, 60)),
      );
    await log.close();
    const files = alertLogFiles(path, 5).filter((f) => existsSync(f));
    assert.deepEqual(files, [path, `${path}.1`, `${path}.2`], 'the active file and two rotated ones');
    for (const f of files)
      assert.ok(statSync(f).size <= 1000 + 10 * 120, `${f} within one batch of the bound`);
    assert.ok(log.stats().rotations >= 5);
    // The newest alerts are all there, in order, across the files.
    const tail = readAlertLogTail(path, 10, { maxFiles: 3 });
    assert.deepEqual(
      tail.map((a) => a.Timestamp),
      Array.from({ length: 10 }, (_, i) => 90 + i),
    );
  });

  it('reads the tail across rotated files, oldest first, skipping cut and over-long lines', () => {
    const path = join(dir, 'a.log');
    writeFileSync(`${path}.1`, `${line(1)}\n${line(2)}\n`);
    writeFileSync(path, `${line(3)}\n{"cut by a cra\n${'y'.repeat(5000)}\n${line(4)}\n${line(5)}`);
    const all = readAlertLogTail(path, 100, { maxLineBytes: 1000 });
    assert.deepEqual(
      all.map((a) => a.Timestamp),
      [1, 2, 3, 4, 5],
    );
    assert.deepEqual(
      readAlertLogTail(path, 2).map((a) => a.Timestamp),
      [4, 5],
    );
    assert.deepEqual(readAlertLogTail(join(dir, 'absent.log'), 10), []);
  });

  it('restarts on a 3 GiB log: reads only its tail, then rotates it away on the first write', async () => {
    const path = join(dir, 'huge.log');
    const fd = openSync(path, 'w');
    ftruncateSync(fd, 3 * 1024 ** 3);
    closeSync(fd);
    const tailLines = Array.from({ length: 50 }, (_, i) => line(1000 + i));
    appendFileSync(path, `\n${tailLines.join('\n')}\n`);
    assert.ok(statSync(path).size > 3 * 1024 ** 3);
    const replay: AlertRecord[] = readAlertLogTail(path, 20);
    assert.deepEqual(
      replay.map((a) => a.Timestamp),
      Array.from({ length: 20 }, (_, i) => 1030 + i),
    );
    // Fewer valid lines than asked: the scan stops at its byte bound instead of reading 3 GiB.
    const bounded = readAlertLogTail(path, 10000, { maxScanBytes: 8 * 1024 * 1024 });
    assert.equal(bounded.length, 50);
    const log = openAlertLog({ path, maxBytes: 1024 * 1024, maxFiles: 2, logger });
    await appendAll(log, [line(2000)]);
    await log.close();
    assert.equal(readFileSync(path, 'utf8'), `${line(2000)}\n`, 'a fresh file after rotation');
    assert.ok(statSync(`${path}.1`).size > 3 * 1024 ** 3, 'the old log rotated, not copied');
  });

  it('creates its files 0640 (an existing 0644 file too) with the configured group', async () => {
    const path = join(dir, 'perm.log');
    writeFileSync(path, '', { mode: 0o644 });
    const log = openAlertLog({ path, gid: 12345, logger });
    await appendAll(log, [line(1)]);
    await log.close();
    const st = statSync(path);
    assert.equal(st.mode & 0o777, 0o640);
    assert.equal(st.gid, 12345);
  });

  it('refuses a path in a missing folder at once (a start-up error, not a stream error later)', () => {
    assert.throws(
      () => openAlertLog({ path: join(dir, 'missing', 'a.log'), logger }),
      (e: unknown) => e instanceof Error && /ENOENT/.test(e.message),
    );
  });
  it('ends a partial last line left by a crash before appending, so the next alert stays whole', async () => {
    const path = join(dir, 'torn.log');
    writeFileSync(path, `${line(1)}\n{"Timestamp":2,"Reso`);
    const log = openAlertLog({ path, logger });
    await appendAll(log, [line(3)]);
    await log.close();
    const tail = readAlertLogTail(path, 10).map((a) => a.Timestamp);
    assert.deepEqual(tail, [1, 3], 'the cut line is skipped, the new one is read');
  });

  it('marks each numbered batch and, reopened, holds exactly the numbers whose bytes are in the log, rotated files too', async () => {
    const path = join(dir, 'marked.log');
    let log = openAlertLog({ path, maxBytes: 600, maxFiles: 3, logger });
    assert.equal(log.resume('boot:7:99'), 0, 'a new log holds nothing');
    for (let seq = 1; seq <= 9; seq++) {
      await new Promise<void>((resolve) => log.append(line(seq, 100), resolve, seq));
    }
    await log.close();
    assert.ok(existsSync(`${path}.1`), 'the log rotated');
    assert.equal(statSync(alertLogMarkPath(path)).mode & 0o777, 0o640);
    log = openAlertLog({ path, maxBytes: 600, maxFiles: 3, logger });
    assert.equal(log.resume('boot:7:99'), 9);
    assert.equal(log.holds(9), true);
    assert.equal(log.holds(10), false);
    assert.equal(log.stats().alreadyWritten, 1);
    await log.close();
    // Another numbering (a restarted helper) holds nothing.
    log = openAlertLog({ path, maxBytes: 600, maxFiles: 3, logger });
    assert.equal(log.resume('boot:7:100'), 0);
    assert.equal(log.holds(1), false);
    await log.close();
    // The marked batch moved to FILE.1 by a rotation is still found there.
    log = openAlertLog({ path, maxBytes: 600, maxFiles: 3, logger });
    await appendAll(log, [line(50, 500), line(51, 500)]);
    await log.close();
    log = openAlertLog({ path, maxBytes: 600, maxFiles: 3, logger });
    assert.equal(log.resume('boot:7:99'), 9, 'found in a rotated file');
    await log.close();
    // One byte of the marked batch changed: nothing is proven held.
    for (const file of alertLogFiles(path, 3)) {
      if (!existsSync(file)) continue;
      const text = readFileSync(file, 'utf8');
      if (text.includes('"/r9"')) writeFileSync(file, text.replace('"/r9"', '"/r8"'));
    }
    log = openAlertLog({ path, maxBytes: 600, maxFiles: 3, logger });
    assert.equal(log.resume('boot:7:99'), 0, 'a changed batch proves nothing');
    await log.close();
    // A mark that is not one (a cut or foreign file) proves nothing either, and is rewritten on the next batch.
    writeFileSync(alertLogMarkPath(path), '{"id":"boot:7:99","seq":');
    log = openAlertLog({ path, maxBytes: 600, maxFiles: 3, logger });
    assert.equal(log.resume('boot:7:99'), 0);
    await new Promise<void>((resolve) => log.append(line(60), resolve, 60));
    await log.close();
    log = openAlertLog({ path, maxBytes: 600, maxFiles: 3, logger });
    assert.equal(log.resume('boot:7:99'), 60);
    await log.close();
  });
});
