// Benchmark of the enforcer's TypeScript alert path alone, with no kernel: recorded helper event lines are
// fed into the real `rtctl enforcer run` (fanotify plane parser → alert record → hub → NDJSON log → stream
// followers) by a STAND-IN helper in a separate process, so that the enforcer's CPU is measured alone and
// repeatably. The stand-in speaks the helper's protocol (STATE, STATUS, EVENTS, ACK) and streams the lines
// as the real helper does: batches of up to 64 KiB, with at most a ring's worth (16 MiB) of lines not yet
// acknowledged. Followers: 20 that never read (disconnected once behind), and 1 that reads everything.
// Printed JSON, per run: `pipelinePerSecond` (alerts from the first line sent to the acknowledgement of the
// last), `cpuMicrosPerAlert` (the enforcer process's user + system CPU over the run, per alert), and checks
// that every alert was logged once and received by the reading follower (`unreportedLoss` must be 0).
// Run: `node --import tsx bench/enforcer/alert-pipeline.ts [--alerts N] [--runs R] [--lines FILE]
// [--baseline CHECKOUT] [--batch-events N] [--cpu-prof DIR] [--out FILE]` (no root needed). `--batch-events N`
// sends batches of N events, each once the last is acknowledged (a helper whose batches are cut by its 4 ms
// timer at a low rate): the cost of each batch (a wake-up, a read, a log write, an acknowledgement) shows. `--baseline CHECKOUT` measures that
// checkout's enforcer too (e.g. the main branch), its runs alternating with ours: `cpuRatio` and `rateRatio`
// compare the two under the same load. `--lines FILE` replays recorded event lines (one per line,
// as the helper writes them; their seq, workload and generation are rewritten); without it the lines are
// generated. `--cpu-prof DIR` writes a V8 CPU profile of the enforcer there when it exits.
import { fork, spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { median, printResult } from '../support/measure.js';
import { standInProtocolServer } from './stand-in-protocol.js';

const SELF = fileURLToPath(import.meta.url);
const REPO_ROOT = join(dirname(SELF), '../..');
const BATCH_BYTES = 64 * 1024;
const RING_BYTES = 16 * 1024 * 1024;
const STALLED_FOLLOWERS = 20;

function argValue(name: string): string | undefined {
  const i = process.argv.indexOf(name);
  return i > 0 ? process.argv[i + 1] : undefined;
}

// ---------------------------------------------------------------------------------------------------------
// Recorded lines.

const PATHS = ['/data/hello.txt', '/etc/passwd', '/usr/lib/x86_64-linux-gnu/libc.so.6', '/tmp/ü-file'];
const EXES = ['/bin/busybox', '/usr/bin/python3.11', '/usr/sbin/nginx'];

/** Event lines as the helper writes them (field order of fanotify-helper.c emit_report), `n` of them. */
function generatedLines(n: number): string[] {
  const lines: string[] = [];
  const start = BigInt(Date.now()) * 1_000_000n;
  for (let i = 0; i < n; i++) {
    const block = i % 10 === 0;
    const ns = start + BigInt(i) * 7_919n;
    const text = ns.toString();
    lines.push(
      JSON.stringify({
        t: 'event',
        seq: i + 1,
        workload: 'host',
        generation: 1,
        timeNs: text,
        class: 1,
        action: block ? 2 : 1,
        posture: 0,
        errno: block ? 1 : 0,
        rule: i % 7,
        policy: block ? 'block-secrets' : 'flood-audit',
        severity: block ? 8 : 1,
        message: block ? 'secret read "denied"' : '',
        tags: block ? ['NIST', 'CIS 5.1'] : [],
        pid: 1000 + (i % 4),
        ppid: 900,
        nspid: 10 + (i % 4),
        nsppid: 9,
        uid: i % 3 === 0 ? 0 : 1000,
        exe: EXES[i % EXES.length],
        pexe: '/containerd-shim-runc-v2',
        path: PATHS[i % PATHS.length],
        syscall: 'SYS_OPENAT',
        args: 'fd=-100 flags=O_RDONLY|O_LARGEFILE',
        cwd: i % 5 === 0 ? '' : '/srv/app',
      }),
    );
  }
  return lines;
}

/** Recorded lines from a file, sequence numbers, workload and generation set for this run. */
function recordedLines(file: string, n: number): string[] {
  const recorded = readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l.startsWith('{"t":"event"'));
  if (recorded.length === 0) throw new Error(`${file}: no event lines`);
  const out: string[] = [];
  for (let i = 0; i < n; i++) {
    const e = JSON.parse(recorded[i % recorded.length] ?? '') as Record<string, unknown>;
    out.push(JSON.stringify({ ...e, seq: i + 1, workload: 'host', generation: 1 }));
  }
  return out;
}

// ---------------------------------------------------------------------------------------------------------
// The stand-in helper (child process): `--sender SOCKET LINES`; told over IPC to send lines from..to.

type SenderMessage = { send: { from: number; to: number } } | { stop: true };

function runSender(socketPath: string, linesFile: string, batchEvents: number): void {
  const lines = readFileSync(linesFile, 'utf8').split('\n');
  const lineEnd: number[] = []; // byte offset after line i (0-based), in the ring's accounting
  let total = 0;
  for (const l of lines) lineEnd.push((total += Buffer.byteLength(l) + 1));
  let acked = 0;
  let sent = 0;
  let target = 0;
  let events: Socket | undefined;
  let waitingDrain = false;
  const pump = (): void => {
    if (events === undefined || waitingDrain) return;
    while (sent < target) {
      // Bytes not acknowledged (a ring of RING_BYTES): wait for an ACK when full. With `batchEvents`, one
      // batch of that many events at a time, the next once it is acknowledged.
      const ackedBytes = acked === 0 ? 0 : (lineEnd[acked - 1] ?? 0);
      if ((lineEnd[sent - 1] ?? 0) - ackedBytes >= RING_BYTES) return;
      if (batchEvents > 0 && acked < sent) return;
      let end = sent;
      let bytes = 0;
      if (batchEvents > 0) end = Math.min(target, sent + batchEvents);
      else while (end < target && bytes < BATCH_BYTES) bytes += Buffer.byteLength(lines[end++] ?? '') + 1;
      const chunk = `${lines.slice(sent, end).join('\n')}\n`;
      sent = end;
      if (!events.write(chunk)) {
        waitingDrain = true;
        events.once('drain', () => {
          waitingDrain = false;
          pump();
        });
        return;
      }
    }
  };
  const { server } = standInProtocolServer({
    reported: () => sent,
    onEvents: (c) => {
      events = c;
      process.send?.({ ready: true });
    },
    onAck: (a) => {
      if (a > acked) {
        acked = a;
        if (acked >= target && target > 0) process.send?.({ acked });
        pump();
      }
    },
  });
  server.listen(socketPath);
  process.on('message', (m: SenderMessage) => {
    if ('stop' in m) {
      server.close();
      events?.destroy();
      process.exit(0);
    }
    target = m.send.to;
    sent = m.send.from;
    pump();
  });
}

// ---------------------------------------------------------------------------------------------------------
// The driver.

interface RunResult {
  alerts: number;
  seconds: number;
  pipelinePerSecond: number;
  /** The enforcer's CPU (user + system, every thread) per alert, µs; then the two parts. */
  cpuMicrosPerAlert: number;
  userMicrosPerAlert: number;
  systemMicrosPerAlert: number;
  logged: number;
  /** Alert lines the reading follower received (the stream-end line included, when it was ended). */
  followerReceived: number;
  /** The server ended the reading follower for falling behind (it is in this process, on a busy machine). */
  followerEndedBehind: boolean;
  unreportedLoss: number;
}

/** User and system CPU of a process (every thread), µs. */
function cpuMicrosOf(pid: number): { user: number; system: number } {
  const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
  return { user: (Number(f[11]) * 1e6) / 100, system: (Number(f[12]) * 1e6) / 100 };
}

function countNewlines(file: string): number {
  const b = readFileSync(file);
  let n = 0;
  for (let i = b.indexOf(10); i !== -1; i = b.indexOf(10, i + 1)) n++;
  return n;
}

async function startEnforcerProcess(
  repo: string,
  flags: readonly string[],
  nodeArgs: readonly string[],
): Promise<{ child: ChildProcess; port: number }> {
  const child = spawn(
    process.execPath,
    [
      ...nodeArgs,
      '--import',
      'tsx',
      join(repo, 'bin/rtctl.ts'),
      'enforcer',
      'run',
      '--listen',
      '127.0.0.1:0',
      '--no-config',
      ...flags,
    ],
    { cwd: repo, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let out = '';
  let err = '';
  child.stderr?.setEncoding('utf8').on('data', (c: string) => (err += c));
  child.stdout?.setEncoding('utf8').on('data', (c: string) => (out += c));
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`enforcer did not start:\n${err.slice(-2000)}`)), 30000);
    child.stdout?.on('data', () => {
      const m = /alerts: http:\/\/127\.0\.0\.1:(\d+)\/alerts/.exec(out);
      if (m?.[1]) {
        clearTimeout(timer);
        resolve(Number(m[1]));
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`enforcer exited with ${String(code)}:\n${err.slice(-2000)}`));
    });
  });
  return { child, port };
}

/** A follower that reads everything and counts alert lines (the non-empty lines of its chunked body). */
function readingFollower(
  port: number,
  after: number,
): { received: () => number; endedBehind: () => boolean; close: () => void } {
  let received = 0;
  let endedBehind = false;
  let head: Buffer | undefined = Buffer.alloc(0);
  // Chunked transfer coding: a size line, that many data bytes, CRLF.
  let sizeLine = '';
  let left = 0;
  let skipCrlf = 0;
  let prev = 10;
  const s = connect(port, '127.0.0.1');
  s.on('error', () => undefined);
  s.write(`GET /alerts?after=${after}&follow=1 HTTP/1.1\r\nHost: x\r\n\r\n`);
  s.on('data', (chunk: Buffer) => {
    let d = chunk;
    if (head !== undefined) {
      head = Buffer.concat([head, d]);
      const end = head.indexOf('\r\n\r\n');
      if (end < 0) return;
      d = head.subarray(end + 4);
      head = undefined;
    }
    // The server ends a follower that fell more than its lag bound behind with a stream-end line.
    if (d.includes('"rtctlStreamEnd"')) endedBehind = true;
    let i = 0;
    while (i < d.length) {
      if (skipCrlf > 0) {
        skipCrlf--;
        i++;
      } else if (left > 0) {
        const end = Math.min(d.length, i + left);
        left -= end - i;
        for (; i < end; i++) {
          const c = d[i] ?? 0;
          if (c === 10 && prev !== 10) received++;
          prev = c;
        }
        if (left === 0) skipCrlf = 2;
      } else {
        const c = d[i++] ?? 0;
        if (c === 10) {
          left = parseInt(sizeLine.trim(), 16) || 0;
          sizeLine = '';
        } else sizeLine += String.fromCharCode(c);
      }
    }
  });
  return { received: () => received, endedBehind: () => endedBehind, close: () => s.destroy() };
}

/** One enforcer (of a checkout) with its stand-in helper, measured run after run. */
interface Pipeline {
  run(from: number, alerts: number): Promise<RunResult>;
  stop(): Promise<void>;
}

async function startPipeline(
  repo: string,
  work: string,
  feed: string,
  profDir: string | undefined,
  batchEvents: number,
): Promise<Pipeline> {
  const stateDir = join(work, 'state');
  mkdirSync(stateDir, { recursive: true });
  mkdirSync(join(work, 'policies'), { recursive: true });
  const socketPath = join(stateDir, 'fanotify.sock');
  const sender = fork(SELF, ['--sender', socketPath, feed, String(batchEvents)], {
    execArgv: ['--import', 'tsx'],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const messages: Record<string, unknown>[] = [];
  sender.on('message', (m: Record<string, unknown>) => messages.push(m));
  const waitMessage = async (key: string, ms: number): Promise<Record<string, unknown>> => {
    const deadline = Date.now() + ms;
    for (;;) {
      const i = messages.findIndex((m) => key in m);
      if (i >= 0) return messages.splice(i, 1)[0] ?? {};
      if (Date.now() > deadline) throw new Error(`stand-in helper: no ${key} within ${ms} ms`);
      await sleep(5);
    }
  };
  const socketDeadline = Date.now() + 30000;
  while (!existsSocket(socketPath)) {
    if (Date.now() > socketDeadline) throw new Error('the stand-in helper did not listen');
    await sleep(10);
  }
  const alertLog = join(work, 'alerts.jsonl');
  const nodeArgs = profDir ? ['--cpu-prof', '--cpu-prof-dir', profDir] : [];
  const { child, port } = await startEnforcerProcess(
    repo,
    [
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
      alertLog,
      '--alert-log-max-bytes',
      '4G',
    ],
    nodeArgs,
  );
  await waitMessage('ready', 30000);
  const pid = child.pid ?? 0;
  return {
    async run(from, alerts) {
      const stalled: Socket[] = Array.from({ length: STALLED_FOLLOWERS }, () => {
        const s = connect(port, '127.0.0.1');
        s.write(`GET /alerts?after=${from}&follow=1 HTTP/1.1\r\nHost: x\r\n\r\n`);
        s.pause();
        s.on('error', () => undefined);
        return s;
      });
      const follower = readingFollower(port, from);
      await sleep(300);
      const loggedBefore = countNewlines(alertLog);
      const cpu0 = cpuMicrosOf(pid);
      const t0 = process.hrtime.bigint();
      sender.send({ send: { from, to: from + alerts } });
      await waitMessage('acked', 120000);
      const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
      const cpu1 = cpuMicrosOf(pid);
      const deadline = Date.now() + 30000;
      while (follower.received() < alerts && !follower.endedBehind() && Date.now() < deadline)
        await sleep(10);
      const logged = countNewlines(alertLog) - loggedBefore;
      follower.close();
      for (const s of stalled) s.destroy();
      return {
        alerts,
        seconds,
        pipelinePerSecond: alerts / seconds,
        cpuMicrosPerAlert: (cpu1.user - cpu0.user + cpu1.system - cpu0.system) / alerts,
        userMicrosPerAlert: (cpu1.user - cpu0.user) / alerts,
        systemMicrosPerAlert: (cpu1.system - cpu0.system) / alerts,
        logged,
        followerReceived: follower.received(),
        followerEndedBehind: follower.endedBehind(),
        unreportedLoss: alerts - logged,
      };
    },
    async stop() {
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      await exited;
      sender.send({ stop: true });
    },
  };
}

function summary(results: readonly RunResult[]): Record<string, unknown> {
  return {
    pipelinePerSecond: median(results.map((r) => r.pipelinePerSecond)),
    cpuMicrosPerAlert: median(results.map((r) => r.cpuMicrosPerAlert)),
    userMicrosPerAlert: median(results.map((r) => r.userMicrosPerAlert)),
    systemMicrosPerAlert: median(results.map((r) => r.systemMicrosPerAlert)),
    unreportedLoss: results.reduce((n, r) => n + r.unreportedLoss, 0),
    followerEndedBehind: results.filter((r) => r.followerEndedBehind).length,
    followerMissed: results.reduce(
      (n, r) => n + (r.followerEndedBehind ? 0 : r.alerts - r.followerReceived),
      0,
    ),
    runs: results,
  };
}

async function main(): Promise<void> {
  const perRun = Number(argValue('--alerts') ?? 100000);
  const runs = Number(argValue('--runs') ?? 3);
  const profDir = argValue('--cpu-prof');
  const out = argValue('--out');
  const linesFile = argValue('--lines');
  const baselineRepo = argValue('--baseline');
  const batchEvents = Number(argValue('--batch-events') ?? 0);
  const work = mkdtempSync(join(tmpdir(), 'rtctl-bench-ap-'));
  const loadAtStart = loadavg();
  // A first run per enforcer warms it up (not counted).
  const warmUp = Math.min(perRun, 20000);
  const total = warmUp + perRun * runs;
  const lines = linesFile ? recordedLines(linesFile, total) : generatedLines(total);
  const feed = join(work, 'lines.ndjson');
  writeFileSync(feed, `${lines.join('\n')}\n`);
  const bytesPerLine = statSync(feed).size / total;
  const measured: RunResult[] = [];
  const baseline: RunResult[] = [];
  const pipelines: Pipeline[] = [];
  try {
    const current = await startPipeline(REPO_ROOT, join(work, 'current'), feed, profDir, batchEvents);
    pipelines.push(current);
    const before = baselineRepo
      ? await startPipeline(baselineRepo, join(work, 'baseline'), feed, undefined, batchEvents)
      : undefined;
    if (before) pipelines.push(before);
    for (const p of pipelines) await p.run(0, warmUp);
    // Runs alternate between the two enforcers, so that both see the same load.
    for (let run = 0; run < runs; run++) {
      const from = warmUp + run * perRun;
      measured.push(await current.run(from, perRun));
      if (before) baseline.push(await before.run(from, perRun));
    }
  } finally {
    for (const p of pipelines) await p.stop();
    rmSync(work, { recursive: true, force: true });
  }
  const result = {
    benchmark: 'enforcer-alert-pipeline',
    date: new Date().toISOString(),
    loadAverage: { start: loadAtStart, end: loadavg() },
    helper: 'stand-in (separate process, unix socket, no kernel)',
    lines: linesFile ? `recorded (${linesFile})` : 'generated',
    bytesPerLine,
    followers: { stalled: STALLED_FOLLOWERS, reading: 1 },
    batches: batchEvents > 0 ? `${batchEvents} events, each sent once the last is acknowledged` : '64 KiB',
    ...summary(measured),
    ...(baselineRepo
      ? {
          baseline: { repo: baselineRepo, ...summary(baseline) },
          cpuRatio:
            median(measured.map((r) => r.cpuMicrosPerAlert)) /
            median(baseline.map((r) => r.cpuMicrosPerAlert)),
          rateRatio:
            median(measured.map((r) => r.pipelinePerSecond)) /
            median(baseline.map((r) => r.pipelinePerSecond)),
        }
      : {}),
  };
  printResult(result, out);
}

function existsSocket(path: string): boolean {
  try {
    return statSync(path).isSocket();
  } catch {
    return false;
  }
}

if (process.argv.includes('--sender')) {
  const i = process.argv.indexOf('--sender');
  runSender(process.argv[i + 1] ?? '', process.argv[i + 2] ?? '', Number(process.argv[i + 3] ?? 0));
} else {
  main().then(
    () => process.exit(0),
    (err: unknown) => {
      process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
      process.exit(1);
    },
  );
}
