// After a restart the data plane resends every event it has no acknowledgement for. An enforcer killed after
// writing an alert and before its acknowledgement went out would write that alert twice; the alert log's mark
// (FILE.mark) says which events the log holds, so the next enforcer acknowledges them without writing or
// publishing them again. The helper is replaced by an in-memory stand-in that keeps events until acknowledged
// and resends the rest to the next reader, as the fanotify helper does (the kernel edge is in the e2e
// suites); a "kill" is modelled by losing the acknowledgements from some point on. The log is the real one.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, truncateSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import pino from 'pino';
import { EnforcementTarget } from '../../../compiler/enforcement/enforcement-table.js';
import { createAlertHub } from '../../../enforcer/alerts/alert-hub.js';
import type { DataPlane, DataPlaneEvent } from '../../../enforcer/data-plane.js';
import { createEnforcer } from '../../../enforcer/enforcer.js';
import { openAlertLog } from '../../../enforcer/io/alert-log.js';
import { readAlertLogTail } from '../../../enforcer/io/alert-log-tail.js';
import { buildSnapshot } from '../../../enforcer/policy-snapshot.js';
import '../../support/property-seed.js';
import { waitUntil } from '../../support/wait-until.js';
import { auditEvent, HOST_AUDIT_POLICY, memoryPlane } from '../support/memory-plane.js';

/** A helper stand-in: numbers events from 1, keeps them until acknowledged, resends the rest to each reader. */
class KeptEvents {
  readonly kept: DataPlaneEvent[] = [];
  acked = 0;
  /** Acknowledgements received after this many are lost (the reader was killed before they went out). */
  loseAcksAfter = Infinity;
  received = 0;
  private seq = 0;
  private wake: (() => void) | undefined;
  private closed = false;
  constructor(readonly identity: string | undefined) {}
  add(name: string): void {
    this.kept.push(auditEvent(++this.seq, `/etc/${name}`));
    this.wake?.();
  }
  plane(batch: number): DataPlane {
    return planeOf(this, batch);
  }
  /** The reader stopped: the stream ends. */
  close(): void {
    this.closed = true;
    this.wake?.();
  }
  reopen(): void {
    this.closed = false;
  }
  isClosed(): boolean {
    return this.closed;
  }
  waitForMore(): Promise<void> {
    return new Promise<void>((r) => (this.wake = r));
  }
}

function planeOf(self: KeptEvents, batch: number): DataPlane {
  self.reopen();
  const plane = memoryPlane({
    async *events() {
      let sent = self.acked;
      while (!self.isClosed()) {
        const next = self.kept.filter((e) => (e.seq ?? 0) > sent).slice(0, batch);
        if (next.length === 0) {
          await self.waitForMore();
          continue;
        }
        for (const e of next) yield e;
        sent = next[next.length - 1]?.seq ?? sent;
        await new Promise((r) => setImmediate(r));
      }
    },
    acknowledge(seq: number) {
      if (++self.received > self.loseAcksAfter) return;
      self.acked = Math.max(self.acked, seq);
    },
    stop: () => {
      self.close();
      return Promise.resolve();
    },
  });
  if (self.identity !== undefined) {
    const id = self.identity;
    plane.sequenceIdentity = () => Promise.resolve(id);
  }
  return plane;
}

const silent = pino({ level: 'silent' });

/** One enforcer run over the log: replays its tail, consumes until `until` is acknowledged or written. */
async function run(
  logPath: string,
  helper: KeptEvents,
  batch: number,
  until: () => boolean,
): Promise<{ published: string[]; alreadyWritten: number }> {
  const hub = createAlertHub(10000, readAlertLogTail(logPath, 10000));
  const replayed = hub.count();
  const log = openAlertLog({ path: logPath, logger: silent });
  const enforcer = createEnforcer({
    source: {
      start: () => Promise.resolve(buildSnapshot([{ file: 'host-guard.yaml', text: HOST_AUDIT_POLICY }])),
      stop: () => Promise.resolve(),
    },
    containers: { list: () => Promise.resolve([]) },
    plane: helper.plane(batch),
    enforcementTarget: EnforcementTarget.Fanotify,
    hub,
    clusterName: 'c',
    nodeName: 'n',
    nodeLabels: {},
    pollMs: 3600000,
    alertLog: log,
    logger: silent,
  });
  try {
    await enforcer.start();
    await waitUntil('the run to settle', until, 20000);
  } finally {
    await enforcer.stop({ keepEnforcing: true });
  }
  const published = hub.since(replayed).map((a) => a.alert.Resource);
  return { published, alreadyWritten: log.stats().alreadyWritten };
}

function loggedResources(logPath: string): string[] {
  return readFileSync(logPath, 'utf8')
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => (JSON.parse(l) as { Resource: string }).Resource);
}

describe('enforcer restart: resent events whose alerts the log holds are not written again (in-memory helper stand-in, real alert log)', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'rtctl-resend-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('writes every alert exactly once across a kill at any point, whatever the batches', async function () {
    this.timeout(120000);
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 120 }),
        fc.integer({ min: 0, max: 40 }),
        fc.integer({ min: 0, max: 60 }),
        fc.integer({ min: 1, max: 40 }),
        async (first, lostAfter, second, batch) => {
          const logPath = join(dir, `a-${first}-${lostAfter}-${second}-${batch}.jsonl`);
          const helper = new KeptEvents('boot:42:1000');
          for (let i = 0; i < first; i++) helper.add(`one-${i}`);
          helper.loseAcksAfter = lostAfter;
          await run(logPath, helper, batch, () => loggedResources(logPath).length === first);
          const ackedBefore = helper.acked;
          helper.loseAcksAfter = Infinity;
          for (let i = 0; i < second; i++) helper.add(`two-${i}`);
          const r = await run(logPath, helper, batch, () => helper.acked === first + second);
          const expected = [
            ...Array.from({ length: first }, (_, i) => `/etc/one-${i}`),
            ...Array.from({ length: second }, (_, i) => `/etc/two-${i}`),
          ];
          assert.deepEqual(loggedResources(logPath), expected, 'the log holds each alert once, in order');
          assert.deepEqual(r.published, expected.slice(first), 'the second run publishes only new alerts');
          assert.equal(
            r.alreadyWritten,
            first - ackedBefore,
            'every resent event is counted as already written',
          );
        },
      ),
      { numRuns: 40 },
    );
  });

  it('writes resent events again when the helper was restarted (another numbering), though their numbers are held', async function () {
    this.timeout(30000);
    const logPath = join(dir, 'alerts.jsonl');
    const old = new KeptEvents('boot:42:1000');
    for (let i = 0; i < 20; i++) old.add(`old-${i}`);
    old.loseAcksAfter = 0;
    await run(logPath, old, 5, () => loggedResources(logPath).length === 20);
    // A new helper numbers from 1 again: events 1..10 are new events, not the old ones.
    const fresh = new KeptEvents('boot:42:2000');
    for (let i = 0; i < 10; i++) fresh.add(`new-${i}`);
    const r = await run(logPath, fresh, 5, () => fresh.acked === 10);
    assert.equal(r.alreadyWritten, 0);
    assert.deepEqual(
      r.published,
      Array.from({ length: 10 }, (_, i) => `/etc/new-${i}`),
    );
    assert.equal(loggedResources(logPath).length, 30);
  });

  it('writes resent events again (at least once, never lost) when the log does not hold the marked bytes', async function () {
    this.timeout(30000);
    const logPath = join(dir, 'alerts.jsonl');
    const helper = new KeptEvents('boot:42:1000');
    for (let i = 0; i < 12; i++) helper.add(`e-${i}`);
    helper.loseAcksAfter = 0;
    await run(logPath, helper, 4, () => loggedResources(logPath).length === 12);
    // The last batch lost its last line (a disk that did not keep it): the mark is not proven.
    const lines = readFileSync(logPath, 'utf8').split('\n');
    truncateSync(logPath, statSync(logPath).size - (lines[lines.length - 2] ?? '').length - 1);
    helper.loseAcksAfter = Infinity;
    const r = await run(logPath, helper, 4, () => helper.acked === 12);
    assert.equal(r.alreadyWritten, 0);
    assert.equal(r.published.length, 12, 'every resent event is published again');
    const logged = loggedResources(logPath);
    assert.deepEqual(
      logged.slice(11),
      Array.from({ length: 12 }, (_, i) => `/etc/e-${i}`),
    );
  });

  it('writes resent events again when the plane cannot name its numbering', async function () {
    this.timeout(30000);
    const logPath = join(dir, 'alerts.jsonl');
    const helper = new KeptEvents(undefined);
    for (let i = 0; i < 8; i++) helper.add(`e-${i}`);
    helper.loseAcksAfter = 0;
    await run(logPath, helper, 3, () => loggedResources(logPath).length === 8);
    helper.loseAcksAfter = Infinity;
    const r = await run(logPath, helper, 3, () => helper.acked === 8);
    assert.equal(r.alreadyWritten, 0);
    assert.equal(loggedResources(logPath).length, 16);
  });
});
