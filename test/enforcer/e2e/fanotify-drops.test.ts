// Loss accounting of the fanotify plane on a real container: with a tiny event ring and nobody reading,
// every audited open is either kept for the next reader or counted as dropped, never lost silently; what
// was kept is delivered once a reader connects, and acknowledged events are not sent again. With a slow
// reader on a flood, the stream stays whole lines (a dropped notice never lands inside an event) and
// received + counted dropped = generated.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { pino } from 'pino';
import type { DataPlane, DataPlaneEvent } from '../../../enforcer/data-plane.js';
import { createFanotifyPlane } from '../../../enforcer/fanotify/fanotify-plane.js';
import { NativeArtifact, requireNativeArtifact } from '../../support/native.js';
import { requirePrereqs } from '../../support/prereq.js';
import {
  containerdPrereqs,
  startContainerd,
  type Containerd,
  type TestContainer,
} from '../support/containerd.js';
import { stopHelper } from '../support/enforcer-process.js';
import { applyPolicies } from '../support/apply-policies.js';

const AUDIT = `apiVersion: security.runtime.com/v1
kind: RuntimePolicy
metadata:
  name: audit-data
  namespace: ns-a
spec:
  selector:
    matchLabels:
      app: web
  file:
    matchDirectories:
    - dir: /data/
  action: Audit
`;

describe('fanotify plane loss accounting on a real container', function () {
  this.timeout(120000);
  let cd: Containerd | undefined;
  let container: TestContainer | undefined;
  let work = '';
  let socket = '';
  let helperPath = '';
  const logger = pino({ level: 'silent' });

  before(async function () {
    this.timeout(120000);
    requirePrereqs(this, containerdPrereqs());
    helperPath = requireNativeArtifact(this, NativeArtifact.fanotifyHelper);
    work = mkdtempSync(join(tmpdir(), 'rtctl-drops-'));
    socket = join(work, 'fan.sock');
    cd = await startContainerd();
    container = await cd.runContainer({
      id: 'drops-c',
      pod: 'web-1',
      namespace: 'ns-a',
      container: 'web',
      labels: { app: 'web' },
    });
  });

  after(async () => {
    if (socket) await stopHelper(socket);
    await cd?.stop();
    if (work) rmSync(work, { recursive: true, force: true });
  });

  function plane(ringBytes = 8192): DataPlane {
    return createFanotifyPlane({
      helperPath,
      socketPath: socket,
      helperLogPath: join(work, 'helper.log'),
      logger,
      ringBytes,
    });
  }

  it('counts what the ring cannot hold, keeps the rest for the next reader, and resends nothing acknowledged', async () => {
    if (!cd || !container) throw new Error('not started');
    const first = plane();
    await first.start();
    await applyPolicies(first, [{ file: 'audit.yaml', text: AUDIT }], container, 1);
    // Nobody reads events: 200 audited opens into an 8 KiB ring.
    const r = await cd.exec(container.id, [
      '/bin/sh',
      '-c',
      'i=0; while [ $i -lt 200 ]; do : < /data/hello.txt; i=$((i+1)); done',
    ]);
    assert.equal(r.code, 0, r.stderr);
    const stats = await first.stats();
    assert.ok(stats.dropped > 0, 'the ring overflowed');
    assert.equal(
      stats.reported + stats.dropped,
      200,
      `every decision is reported or counted (${JSON.stringify(stats)})`,
    );
    await first.stop({ keepEnforcing: true });

    // A new control plane (as after a restart) receives exactly the kept events, and acknowledges them.
    const second = plane();
    await second.start();
    const got: DataPlaneEvent[] = [];
    const reading = (async () => {
      for await (const e of second.events()) {
        got.push(e);
        if (e.seq !== undefined) second.acknowledge?.(e.seq);
      }
    })();
    const end = Date.now() + 10000;
    while (got.length < stats.reported && Date.now() < end) await sleep(50);
    await sleep(200);
    assert.equal(got.length, stats.reported);
    assert.ok(got.every((e) => e.resource === '/data/hello.txt' && e.action === 'Audit'));
    assert.deepEqual(
      got.map((e) => e.seq),
      Array.from({ length: got.length }, (_, i) => i + 1),
      'in order, no gaps',
    );
    await second.stop({ keepEnforcing: true });
    await reading;

    // A third reader gets nothing again: everything was acknowledged.
    const third = plane();
    await third.start();
    const again: DataPlaneEvent[] = [];
    const reading3 = (async () => {
      for await (const e of third.events()) again.push(e);
    })();
    await sleep(500);
    assert.equal(again.length, 0);
    await third.stop({ keepEnforcing: false });
    await reading3;
  });

  it('keeps whole event lines for a slow reader on a flood: received + counted dropped = generated', async () => {
    if (!cd || !container) throw new Error('not started');
    // A ring (1 MiB) larger than the socket's send buffer (about 208 KiB) and a reader that takes 2 KiB per
    // 10 ms while 5000 audited opens run: the helper's large writes stop in the middle of a line while the
    // ring overflows, which is when a `dropped` notice used to be written inside an event.
    const GENERATED = 5000;
    const p = plane(1 << 20);
    await p.start();
    await applyPolicies(p, [{ file: 'audit.yaml', text: AUDIT }], container, 1);
    const stream = connect(socket);
    await new Promise<void>((resolve, reject) => {
      stream.once('connect', resolve);
      stream.once('error', reject);
    });
    stream.pause(); // paused mode: the reader takes data with read() at its own pace
    stream.write('EVENTS\n');
    let floodDone = false;
    const flood = cd
      .exec(container.id, [
        '/bin/sh',
        '-c',
        `i=0; while [ $i -lt ${GENERATED} ]; do : < /data/hello.txt; i=$((i+1)); done`,
      ])
      .finally(() => {
        floodDone = true;
      });

    const seqs = new Set<number>();
    let dropped = 0;
    let errors = 0;
    const bad: string[] = [];
    let partial = '';
    let lastSeq = 0;
    let sentBadAck = false;
    const handle = (chunk: Buffer): void => {
      partial += chunk.toString('utf8');
      const lines = partial.split('\n');
      partial = lines.pop() ?? '';
      for (const line of lines) {
        let parsed: Record<string, unknown>;
        try {
          parsed = JSON.parse(line) as Record<string, unknown>;
        } catch {
          bad.push(line.slice(0, 200));
          continue;
        }
        if (parsed['t'] === 'event' && typeof parsed['seq'] === 'number') {
          seqs.add(parsed['seq']);
          lastSeq = Math.max(lastSeq, parsed['seq']);
        } else if (parsed['t'] === 'dropped' && typeof parsed['dropped'] === 'number') {
          dropped = Math.max(dropped, parsed['dropped']);
        } else if (parsed['t'] === 'error') {
          errors++;
        } else bad.push(line.slice(0, 200));
      }
      // The refused ACK first (it must not free anything), then the real acknowledgement.
      if (lastSeq > 0) {
        stream.write(sentBadAck ? `ACK ${lastSeq}\n` : `ACK -1\nACK ${lastSeq}\n`);
        sentBadAck = true;
      }
    };
    let timer: NodeJS.Timeout | undefined;
    const done = new Promise<void>((resolve) => {
      const tick = (): void => {
        // Slow while the flood runs (one 2 KiB read per tick), then everything that is left.
        for (;;) {
          const chunk = (floodDone ? stream.read() : stream.read(2048)) as Buffer | null;
          if (chunk === null) break;
          handle(chunk);
          if (!floodDone) break;
        }
        if (floodDone && seqs.size + dropped >= GENERATED) {
          resolve();
          return;
        }
        timer = setTimeout(tick, 10);
      };
      tick();
    });
    const deadline = sleep(90000).then(() => 'timeout' as const);
    const outcome = await Promise.race([done.then(() => 'done' as const), deadline]);
    clearTimeout(timer);
    stream.destroy();
    const r = await flood;
    assert.equal(r.code, 0, r.stderr);
    const stats = await p.stats();
    await p.stop({ keepEnforcing: false });
    assert.deepEqual(bad, [], 'every line on the stream is one whole JSON object');
    assert.equal(
      outcome,
      'done',
      `received ${seqs.size}, dropped ${dropped}, stats ${JSON.stringify(stats)}`,
    );
    assert.ok(dropped > 0, 'the flood overflowed the ring');
    assert.equal(errors, 1, 'ACK -1 was refused with one error line');
    assert.equal(seqs.size + dropped, GENERATED, 'received + counted dropped = generated');
    assert.equal(stats.reported, seqs.size, 'every reported event was received');
    assert.equal(stats.dropped, dropped);
  });
});
