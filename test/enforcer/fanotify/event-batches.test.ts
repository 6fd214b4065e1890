// The fanotify plane's event reader takes the helper's batches (many lines per read) and parses each read at
// once: whatever the split of the byte stream into reads (inside a line, inside a multi-byte character, many
// lines at once), it yields exactly the events of the lines, in order, skips the `dropped` and `error`
// notices, and acknowledges the newest event it handled. The helper here is a stand-in on a real unix socket
// that speaks the event half of the protocol (EVENTS, then lines; ACK back), so that the splits are chosen
// by the test; the real helper's batching is exercised in e2e/fanotify-drops.test.ts.
import '../../support/property-seed.js';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { pino } from 'pino';
import { createFanotifyPlane, parseHelperEvent } from '../../../enforcer/fanotify/fanotify-plane.js';
import type { DataPlaneEvent } from '../../../enforcer/data-plane.js';
import { waitUntil } from '../../support/wait-until.js';

function eventLine(seq: number, path: string): string {
  return JSON.stringify({
    t: 'event',
    seq,
    workload: 'abc',
    generation: 1,
    timeNs: `17953331303499${String(seq).padStart(5, '0')}`,
    class: 1,
    action: 1,
    posture: 0,
    errno: 0,
    rule: 0,
    policy: 'p',
    severity: 1,
    message: '',
    tags: [],
    pid: 100 + seq,
    ppid: 90,
    nspid: seq,
    nsppid: 1,
    uid: 0,
    exe: '/bin/cat',
    pexe: '/bin/sh',
    path,
    syscall: 'SYS_OPENAT',
    args: 'fd=-100 flags=O_RDONLY',
    cwd: '/',
  });
}

describe('fanotify plane: events from the helper in batches (stand-in helper on a unix socket)', function () {
  this.timeout(60000);
  let dir = '';
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'rtctl-batches-'));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('yields exactly the lines’ events in order, whatever the reads, and acknowledges up to the newest', async () => {
    let round = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.string({ unit: 'grapheme', maxLength: 12 }), { minLength: 1, maxLength: 40 }),
        fc.array(fc.integer({ min: 1, max: 700 }), { minLength: 1, maxLength: 30 }),
        fc.boolean(),
        async (names, cuts, notices) => {
          const socketPath = join(dir, `h${round++}.sock`);
          const lines: string[] = [];
          names.forEach((n, i) => {
            lines.push(eventLine(i + 1, `/data/${n}`));
            if (notices && i % 7 === 3) lines.push('{"t":"dropped","dropped":2}');
            if (notices && i % 11 === 5) lines.push('{"t":"error","message":"refused"}');
          });
          const bytes = Buffer.from(`${lines.join('\n')}\n`, 'utf8');
          const acks: number[] = [];
          const server: Server = createServer((c: Socket) => {
            let input = '';
            c.setEncoding('utf8');
            c.on('data', (d: string) => {
              input += d;
              if (input.startsWith('EVENTS\n') && !c.writableEnded) {
                input = input.slice('EVENTS\n'.length);
                // The stream cut at the chosen sizes, each piece a separate write.
                let at = 0;
                let k = 0;
                const next = (): void => {
                  if (at >= bytes.length) return;
                  const size = cuts[k++ % cuts.length] ?? 1;
                  c.write(bytes.subarray(at, at + size), () => setImmediate(next));
                  at += size;
                };
                next();
              }
              for (const m of input.matchAll(/ACK (\d+)\n/g)) acks.push(Number(m[1]));
              input = input.replace(/ACK \d+\n/g, '');
            });
            c.on('error', () => undefined);
          });
          await new Promise<void>((resolve) => server.listen(socketPath, resolve));
          const plane = createFanotifyPlane({
            helperPath: '/nonexistent',
            socketPath,
            helperLogPath: join(dir, 'helper.log'),
            logger: pino({ level: 'silent' }),
          });
          const got: DataPlaneEvent[] = [];
          const reading = (async () => {
            for await (const e of plane.events()) {
              got.push(e);
              if (e.seq !== undefined) plane.acknowledge?.(e.seq);
              if (got.length === names.length) break;
            }
          })();
          try {
            await reading;
            const expected = lines
              .map((l) => parseHelperEvent(l))
              .filter((e): e is DataPlaneEvent => e !== undefined);
            assert.deepEqual(got, expected);
            await waitUntil('the acknowledgement', () => acks.includes(names.length), 10000);
            assert.deepEqual(
              acks,
              [...acks].sort((a, b) => a - b),
              'acknowledgements only move forward',
            );
          } finally {
            await plane.stop({ keepEnforcing: true });
            await new Promise<void>((resolve) => server.close(() => resolve()));
          }
        },
      ),
      { numRuns: 40 },
    );
  });
});
