// The alert stream over real HTTP on loopback: history then live NDJSON, resumption after a lost
// connection without duplicates or gaps, restart detection, several enforcers followed through a relay,
// and `rtctl logs` (readable blocks without --json, filters).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { get } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { pino } from 'pino';
import { createAlertHub, type AlertHub } from '../../../enforcer/alerts/alert-hub.js';
import type { AlertRecord } from '../../../enforcer/alerts/alert-record.js';
import { startAlertServer, type AlertServer } from '../../../enforcer/alerts/alert-server.js';
import { followAlerts } from '../../../enforcer/alerts/follow-alerts.js';
import { REPO_ROOT, fetchAlerts, rtctlArgs } from '../support/enforcer-process.js';

const logger = pino({ level: 'silent' });

function alert(n: number, over: Partial<AlertRecord> = {}): AlertRecord {
  return {
    Timestamp: 1795333130 + n,
    UpdatedTime: '2026-11-22T07:38:50.000000Z',
    ClusterName: 'c',
    HostName: 'node-1',
    NamespaceName: 'ns-a',
    PodName: 'web-1',
    Labels: 'app=web',
    ContainerID: 'abc',
    ContainerName: 'web',
    ContainerImage: 'img@sha256:00',
    HostPPID: 1,
    HostPID: 100 + n,
    PPID: 0,
    PID: n,
    ParentProcessName: '/bin/sh',
    ProcessName: '/bin/sleep',
    PolicyName: 'p',
    Severity: '5',
    Type: 'MatchedPolicy',
    Source: '/bin/sh',
    Operation: 'Process',
    Resource: `/bin/r${n}`,
    Data: 'syscall=SYS_EXECVE',
    Enforcer: 'Fanotify',
    Action: 'Block',
    Result: 'Operation not permitted',
    ...over,
  };
}

/** Polls `cond` until it holds; the bound only catches a hang (it does not judge speed). */
async function waitFor(cond: () => boolean, ms = 30_000): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error('condition not reached');
    await sleep(20);
  }
}

describe('alert stream (HTTP NDJSON on loopback)', function () {
  this.timeout(60000);
  const servers: AlertServer[] = [];
  const start = async (hub: AlertHub, port = 0): Promise<AlertServer> => {
    const s = await startAlertServer({
      hub,
      listen: { kind: 'tcp', host: '127.0.0.1', port },
      logger,
      keepAliveMs: 100,
    });
    servers.push(s);
    return s;
  };
  after(async () => {
    for (const s of servers) await s.close();
  });

  it('serves history then live alerts, one JSON object per line', async () => {
    const hub = createAlertHub();
    hub.publish(alert(1));
    const s = await start(hub);
    const got: AlertRecord[] = [];
    const abort = new AbortController();
    const done = followAlerts({
      servers: [s.url],
      follow: true,
      signal: abort.signal,
      onAlert: (a) => got.push(a),
    });
    await waitFor(() => got.length === 1);
    hub.publish(alert(2));
    await waitFor(() => got.length === 2);
    abort.abort();
    await done;
    assert.deepEqual(
      got.map((a) => a.Resource),
      ['/bin/r1', '/bin/r2'],
    );
  });

  it('resumes after a lost connection with nothing repeated or skipped', async () => {
    const hub = createAlertHub();
    const first = await start(hub);
    const port = Number(new URL(first.url).port);
    const got: string[] = [];
    const errors: string[] = [];
    const abort = new AbortController();
    const done = followAlerts({
      servers: [first.url],
      follow: true,
      signal: abort.signal,
      retryMs: 50,
      onAlert: (a) => got.push(a.Resource),
      onError: (m) => errors.push(m),
    });
    hub.publish(alert(1));
    hub.publish(alert(2));
    await waitFor(() => got.length === 2);
    await first.close();
    hub.publish(alert(3)); // while nobody listens
    await waitFor(() => errors.length > 0); // the client has seen the loss before the server comes back
    await start(hub, port); // same hub, same stream: resume after seq 2
    hub.publish(alert(4));
    await waitFor(() => got.length === 4);
    abort.abort();
    await done;
    assert.deepEqual(got, ['/bin/r1', '/bin/r2', '/bin/r3', '/bin/r4']);
    assert.ok(errors.length > 0, 'the loss was noticed and retried');
  });

  it('streams at different positions, and at the same one, each get exactly the lines after their start', async () => {
    // Streams at one position share the batch the server builds for it: none may get another's lines.
    const hub = createAlertHub();
    for (let i = 1; i <= 50; i++) hub.publish(alert(i));
    const s = await start(hub);
    const total = 300;
    const read = (after: number): Promise<string[]> =>
      new Promise((resolve, reject) => {
        const got: string[] = [];
        let partial = '';
        const req = get(`${s.url}/alerts?after=${after}&follow=1`, (res) => {
          res.setEncoding('utf8');
          res.on('data', (chunk: string) => {
            const lines = (partial + chunk).split('\n');
            partial = lines.pop() ?? '';
            for (const l of lines) if (l !== '') got.push((JSON.parse(l) as AlertRecord).Resource);
            if (got.length >= total - after) {
              req.destroy();
              resolve(got);
            }
          });
        });
        req.on('error', reject);
      });
    const starts = [0, 0, 10, 25, 49, 50, 50];
    const streams = starts.map(read);
    for (let n = 51; n <= total; n += 10) {
      for (let k = n; k < n + 10 && k <= total; k++) hub.publish(alert(k));
      await sleep(1);
    }
    const results = await Promise.all(streams);
    results.forEach((got, i) => {
      const from = (starts[i] ?? 0) + 1;
      assert.deepEqual(
        got,
        Array.from({ length: total - from + 1 }, (_, k) => `/bin/r${from + k}`),
        `the stream after ${from - 1}`,
      );
    });
  });

  it('starts over from a restarted server (new stream id)', async () => {
    const hubA = createAlertHub();
    const a = await start(hubA);
    const port = Number(new URL(a.url).port);
    const got: string[] = [];
    const abort = new AbortController();
    const done = followAlerts({
      servers: [a.url],
      follow: true,
      signal: abort.signal,
      retryMs: 50,
      onAlert: (x) => got.push(x.Resource),
    });
    hubA.publish(alert(1));
    hubA.publish(alert(2));
    await waitFor(() => got.length === 2);
    await a.close();
    const hubB = createAlertHub(10000, [alert(7)]);
    await start(hubB, port);
    await waitFor(() => got.length === 3);
    abort.abort();
    await done;
    assert.deepEqual(got, ['/bin/r1', '/bin/r2', '/bin/r7']);
  });

  it('answers bad requests with an error and keeps serving', async () => {
    const hub = createAlertHub(10000, [alert(1)]);
    const s = await start(hub);
    const status = (path: string): Promise<number> =>
      new Promise((resolve, reject) =>
        get(`${s.url}${path}`, (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        }).on('error', reject),
      );
    assert.equal(await status('/alerts?after=-1'), 400);
    assert.equal(await status('/alerts?after=abc'), 400);
    assert.equal(await status('/nope'), 404);
    assert.equal(await status('/healthz'), 200);
    assert.equal(await status('/alerts?follow=0'), 200);
  });

  it('`rtctl logs` follows two enforcers through `rtctl enforcer relay`, readable without --json and filtered', async () => {
    const hub1 = createAlertHub(10000, [
      alert(1, { NamespaceName: 'ns-a', PodName: 'web-1' }),
      alert(2, { NamespaceName: 'ns-b', PodName: 'api-1' }),
    ]);
    const hub2 = createAlertHub(10000, [
      alert(3, { NamespaceName: 'ns-a', PodName: 'db-1', HostName: 'node-2', Operation: 'File' }),
    ]);
    const s1 = await start(hub1);
    const s2 = await start(hub2);
    const { spawn } = await import('node:child_process');
    const relay = spawn(
      process.execPath,
      rtctlArgs(['enforcer', 'relay', '--listen', '127.0.0.1:0', '--upstream', s1.url, '--upstream', s2.url]),
      { cwd: REPO_ROOT, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    try {
      let out = '';
      relay.stdout.setEncoding('utf8').on('data', (c: string) => (out += c));
      await waitFor(() => /alerts: (http:\S+)\/alerts/.test(out), 30000);
      const url = /alerts: (http:\S+)\/alerts/.exec(out)?.[1] ?? '';
      // The relay has caught up when it holds all three.
      let held = 0;
      await waitFor(() => {
        fetchAlerts(url).then(
          (a) => (held = a.length),
          () => undefined,
        );
        return held === 3;
      }, 30000);
      const text = spawnSync(
        process.execPath,
        rtctlArgs(['logs', '-n', 'ns-a', '--no-follow', '--server', url]),
        { cwd: REPO_ROOT, encoding: 'utf8' },
      );
      assert.equal(text.status, 0, text.stderr);
      assert.equal((text.stdout.match(/^== Alert /gm) ?? []).length, 2, text.stdout);
      assert.match(text.stdout, /HostName: node-2/);
      assert.doesNotMatch(text.stdout, /api-1/);
      const files = spawnSync(
        process.execPath,
        rtctlArgs(['logs', '--json', '--operation', 'File', '--no-follow', '--server', url]),
        { cwd: REPO_ROOT, encoding: 'utf8' },
      );
      const lines = files.stdout
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as AlertRecord);
      assert.deepEqual(
        lines.map((l) => l.PodName),
        ['db-1'],
      );
      // Following with a limit: exits after n alerts.
      // (async: this process serves s1, a synchronous spawn would stall it)
      const limited = await new Promise<{ status: number | null; stdout: string; stderr: string }>(
        (resolve) => {
          const child = spawn(
            process.execPath,
            rtctlArgs(['logs', '--json', '--limit', '2', '--server', s1.url]),
            { cwd: REPO_ROOT },
          );
          let stdout = '';
          let stderr = '';
          child.stdout.setEncoding('utf8').on('data', (c: string) => (stdout += c));
          child.stderr.setEncoding('utf8').on('data', (c: string) => (stderr += c));
          child.on('exit', (status) => resolve({ status, stdout, stderr }));
        },
      );
      assert.equal(limited.status, 0, limited.stderr);
      assert.equal(limited.stdout.trim().split('\n').length, 2);
    } finally {
      relay.kill('SIGTERM');
    }
  });
});
