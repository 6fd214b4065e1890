// Benchmark of the enforcer's alert path stage by stage, in this process (no socket, no kernel), printing
// JSON: the CPU per alert (µs, user + system of this process, best of 3 rounds) of parsing a helper event
// line (`JSON.parse` alone, and the plane's parseHelperEvent), building the alert record, serialising it,
// publishing it to a hub (the line kept as a string while nothing asks for its bytes), publishing with the
// bytes asked for once per 100 alerts (a burst, as the log and the streams ask once per turn), and the whole
// path (parse, build, publish, encode). Where the enforcer's CPU per alert goes, and what the end-to-end
// figures (alert-pipeline.ts, main.ts) add to it: the socket, the log and stream writes, the event loop.
// Run: `node --import tsx bench/enforcer/alert-stages.ts [--out FILE]`.
import { loadavg } from 'node:os';
import { createAlertHub } from '../../enforcer/alerts/alert-hub.js';
import { buildAlertRecord, eventTimeMs, type AlertRecord } from '../../enforcer/alerts/alert-record.js';
import type { DataPlaneEvent } from '../../enforcer/data-plane.js';
import { parseHelperEvent } from '../../enforcer/fanotify/fanotify-plane.js';
import { describeHost } from '../../enforcer/workload.js';
import { printResult } from '../support/measure.js';

const N = 200_000;
const DISTINCT = 1000;
const PATHS = ['/data/hello.txt', '/etc/passwd', '/tmp/ü-file', '/usr/lib/x86_64-linux-gnu/libc.so.6'];

function lines(): string[] {
  const start = BigInt(Date.now()) * 1_000_000n;
  return Array.from({ length: DISTINCT }, (_, i) =>
    JSON.stringify({
      t: 'event',
      seq: i + 1,
      workload: 'host',
      generation: 1,
      timeNs: (start + BigInt(i) * 7919n).toString(),
      class: 1,
      action: i % 10 === 0 ? 2 : 1,
      posture: 0,
      errno: i % 10 === 0 ? 1 : 0,
      rule: i % 7,
      policy: 'flood-audit',
      severity: 1,
      message: '',
      tags: i % 10 === 0 ? ['NIST'] : [],
      pid: 1000 + (i % 4),
      ppid: 900,
      nspid: 10,
      nsppid: 9,
      uid: 0,
      exe: '/bin/busybox',
      pexe: '/containerd-shim-runc-v2',
      path: PATHS[i % PATHS.length],
      syscall: 'SYS_OPENAT',
      args: 'fd=-100 flags=O_RDONLY|O_LARGEFILE',
      cwd: '/srv/app',
    }),
  );
}

/** CPU µs per iteration of `body` (N iterations), best of 3 rounds. */
function perAlert(body: (i: number) => void): number {
  let best = Infinity;
  for (let round = 0; round < 3; round++) {
    const before = process.cpuUsage();
    for (let i = 0; i < N; i++) body(i);
    const used = process.cpuUsage(before);
    best = Math.min(best, (used.user + used.system) / N);
  }
  return Math.round(best * 1000) / 1000;
}

function main(): void {
  const out = process.argv.includes('--out') ? process.argv[process.argv.indexOf('--out') + 1] : undefined;
  const loadAtStart = loadavg();
  const text = lines();
  const workload = describeHost();
  const context = {
    clusterName: 'bench',
    hostName: 'bench-node',
    enforcer: 'Fanotify',
    auditEnforcer: 'Fanotify',
  };
  const events = text.map((l) => parseHelperEvent(l) as DataPlaneEvent);
  const records: AlertRecord[] = events.map((e) => buildAlertRecord(e, workload, context));
  let sink: unknown;
  const stages = {
    jsonParse: perAlert((i) => (sink = JSON.parse(text[i % DISTINCT] ?? '') as unknown)),
    parseHelperEvent: perAlert((i) => (sink = parseHelperEvent(text[i % DISTINCT] ?? ''))),
    buildAlertRecord: perAlert(
      (i) => (sink = buildAlertRecord(events[i % DISTINCT] as DataPlaneEvent, workload, context)),
    ),
    jsonStringify: perAlert((i) => (sink = JSON.stringify(records[i % DISTINCT]))),
    publishLineKept: (() => {
      const hub = createAlertHub(10000);
      return perAlert((i) => (sink = hub.publish(records[i % DISTINCT] as AlertRecord, 0)));
    })(),
    publishEncodedPerBurst: (() => {
      const hub = createAlertHub(10000);
      return perAlert((i) => {
        const item = hub.publish(records[i % DISTINCT] as AlertRecord, 0);
        if (i % 100 === 99) item.encoded();
      });
    })(),
    wholePath: (() => {
      const hub = createAlertHub(10000);
      return perAlert((i) => {
        const event = parseHelperEvent(text[i % DISTINCT] ?? '') as DataPlaneEvent;
        const item = hub.publish(buildAlertRecord(event, workload, context), eventTimeMs(event));
        if (i % 100 === 99) item.encoded();
      });
    })(),
  };
  void sink;
  const result = {
    benchmark: 'enforcer-alert-stages',
    date: new Date().toISOString(),
    loadAverage: { start: loadAtStart, end: loadavg() },
    alerts: N,
    bytesPerLine: text.reduce((n, l) => n + Buffer.byteLength(l) + 1, 0) / DISTINCT,
    cpuMicrosPerAlert: stages,
  };
  printResult(result, out);
}

main();
