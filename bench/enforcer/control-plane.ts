// Benchmark of the enforcer's alert path alone (control plane → hub → streams → NDJSON log), printing JSON:
// the real `rtctl enforcer run`, fed by a STAND-IN fanotify helper on its unix socket (the protocol's STATE,
// STATUS, EVENTS and ACK; no kernel, no container), which sends event lines in batches of a chosen size and
// waits for the acknowledgement of the last. Per batch size: the enforcer's CPU per alert (user + system,
// from /proc/<pid>/stat) and the rate, with 20 followers that never read. Each batch costs the enforcer a
// wake-up, a read, a log write and an acknowledgement whatever its size, so the CPU per alert falls as
// batches grow: this is why the helper batches (64 KiB or 4 ms). The whole pipeline is bench/enforcer/main.ts.
// Run: `node --import tsx bench/enforcer/control-plane.ts [--out FILE]` (no root needed).
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { startEnforcer } from '../../test/enforcer/support/enforcer-process.js';
import { standInProtocolServer } from './stand-in-protocol.js';
import { printResult } from '../support/measure.js';

const FOLLOWERS = 20;
/** Events per batch, and alerts sent at that size. */
const RUNS: readonly { perBatch: number; alerts: number }[] = [
  { perBatch: 8, alerts: 10000 },
  { perBatch: 40, alerts: 20000 },
  { perBatch: 400, alerts: 50000 },
];

function eventLine(seq: number, generation: number): string {
  return `${JSON.stringify({
    t: 'event',
    seq,
    workload: 'host',
    generation,
    timeNs: `${BigInt(Date.now()) * 1_000_000n + BigInt(seq % 1_000_000)}`,
    class: 1,
    action: 1,
    posture: 0,
    errno: 0,
    rule: 0,
    policy: 'flood-audit',
    severity: 1,
    message: '',
    tags: [],
    pid: 1000 + (seq % 4),
    ppid: 900,
    nspid: 1000 + (seq % 4),
    nsppid: 900,
    uid: 0,
    exe: '/bin/busybox',
    pexe: '/containerd-shim-runc-v2',
    path: '/data/hello.txt',
    syscall: 'SYS_OPENAT',
    args: 'fd=-100 flags=O_RDONLY|O_LARGEFILE',
    cwd: '/',
  })}\n`;
}

/** The stand-in helper: answers the control connection, keeps the event connection and the newest ACK. */
function standInHelper(socketPath: string): Promise<{
  events: () => Socket | undefined;
  acked: () => number;
  generation: () => number;
  close: () => void;
}> {
  let acked = 0;
  let events: Socket | undefined;
  const { server, generation } = standInProtocolServer({
    reported: () => 0,
    onEvents: (c) => {
      events = c;
    },
    onAck: (seq) => {
      acked = Math.max(acked, seq);
    },
  });
  return new Promise((resolve) =>
    server.listen(socketPath, () =>
      resolve({
        events: () => events,
        acked: () => acked,
        generation,
        close: () => server.close(),
      }),
    ),
  );
}

async function main(): Promise<void> {
  const outIndex = process.argv.indexOf('--out');
  const out = outIndex > 0 ? process.argv[outIndex + 1] : undefined;
  const work = mkdtempSync(join(tmpdir(), 'rtctl-bench-cp-'));
  const loadAtStart = loadavg();
  const stateDir = join(work, 'state');
  mkdirSync(stateDir);
  mkdirSync(join(work, 'policies'));
  const helper = await standInHelper(join(stateDir, 'fanotify.sock'));
  const enforcer = await startEnforcer([
    '--policy-dir',
    join(work, 'policies'),
    '--data-plane',
    'fanotify',
    '--node-name',
    'bench-node',
    '--containerd-socket',
    join(work, 'no-containerd.sock'),
    '--state-dir',
    stateDir,
    '--alert-log',
    join(work, 'alerts.jsonl'),
  ]);
  const results: {
    eventsPerBatch: number;
    alerts: number;
    enforcerCpuMicrosPerAlert: number;
    perSecond: number;
  }[] = [];
  try {
    const deadline = Date.now() + 30_000;
    while (helper.events() === undefined && Date.now() < deadline) await sleep(10);
    const conn = helper.events();
    if (conn === undefined) throw new Error('the enforcer never asked for events');
    const pid = enforcer.child.pid ?? 0;
    const cpuMicros = (): number => {
      const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
      return ((Number(f[11]) + Number(f[12])) * 1e6) / 100;
    };
    let seq = 0;
    for (const run of RUNS) {
      const { port } = new URL(enforcer.url);
      const followers: Socket[] = Array.from({ length: FOLLOWERS }, () => {
        const s = connect(Number(port), '127.0.0.1');
        s.write(`GET /alerts?after=${seq}&follow=1 HTTP/1.1\r\nHost: x\r\n\r\n`);
        s.pause();
        s.on('error', () => undefined);
        return s;
      });
      await sleep(300);
      const last = seq + run.alerts;
      const cpu0 = cpuMicros();
      const t0 = process.hrtime.bigint();
      while (seq < last) {
        let chunk = '';
        const end = Math.min(last, seq + run.perBatch);
        while (seq < end) chunk += eventLine(++seq, helper.generation());
        if (!conn.write(chunk)) await new Promise((r) => conn.once('drain', r));
        // The next batch after the enforcer took this one (it acknowledges once written), as a helper
        // whose batches are cut by time; the last is waited for below.
        const until = Date.now() + 10_000;
        while (helper.acked() < seq && Date.now() < until) await sleep(0);
      }
      const ackDeadline = Date.now() + 60_000;
      while (helper.acked() < last && Date.now() < ackDeadline) await sleep(1);
      if (helper.acked() < last) throw new Error(`alerts up to ${last} never acknowledged`);
      const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
      results.push({
        eventsPerBatch: run.perBatch,
        alerts: run.alerts,
        enforcerCpuMicrosPerAlert: (cpuMicros() - cpu0) / run.alerts,
        perSecond: run.alerts / seconds,
      });
      for (const s of followers) s.destroy();
    }
  } finally {
    await enforcer.kill('SIGTERM');
    helper.close();
    rmSync(work, { recursive: true, force: true });
  }
  const result = {
    benchmark: 'enforcer-control-plane',
    date: new Date().toISOString(),
    loadAverage: { start: loadAtStart, end: loadavg() },
    helper: 'stand-in (unix socket, no kernel)',
    followers: FOLLOWERS,
    runs: results,
  };
  printResult(result, out);
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(1);
  },
);
