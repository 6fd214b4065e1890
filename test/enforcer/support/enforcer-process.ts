// Test harness: runs `rtctl enforcer run` as a real child process (so it can be killed and restarted while
// the native helper keeps enforcing), reads its status, and reads alerts back with `rtctl logs`.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { get } from 'node:http';
import { connect } from 'node:net';
import { join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import type { AlertRecord } from '../../../enforcer/alerts/alert-record.js';
import type { EnforcerStatus } from '../../../enforcer/enforcer.js';

/** The repository root. */
export const REPO_ROOT = resolve(fileURLToPath(import.meta.url), '../../../..');

/** Arguments that run the rtctl CLI from the sources. */
export function rtctlArgs(args: readonly string[]): string[] {
  return ['--import', 'tsx', join(REPO_ROOT, 'bin/rtctl.ts'), ...args];
}

/** A running enforcer process. */
export interface EnforcerProcess {
  url: string;
  child: ChildProcess;
  stderr(): string;
  /** SIGKILL (a crash) or SIGTERM (a clean stop that keeps enforcing). */
  kill(signal: 'SIGKILL' | 'SIGTERM'): Promise<void>;
}

/** Starts `rtctl enforcer run` with the given flags and waits for its alert address (30 s unless told). */
export async function startEnforcer(
  flags: readonly string[],
  options: { startTimeoutMs?: number } = {},
): Promise<EnforcerProcess> {
  // No configuration file unless the test names one: a /etc/rtctl/enforcer.yaml on the machine running the
  // tests (an installed package) must not change what the test runs.
  const config = flags.some((f) => f === '--config' || f.startsWith('--config=')) ? [] : ['--no-config'];
  const listen = flags.includes('--listen') ? [] : ['--listen', '127.0.0.1:0'];
  const child = spawn(process.execPath, rtctlArgs(['enforcer', 'run', ...listen, ...config, ...flags]), {
    cwd: REPO_ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let err = '';
  let out = '';
  child.stderr.setEncoding('utf8').on('data', (c: string) => (err += c));
  child.stdout.setEncoding('utf8').on('data', (c: string) => (out += c));
  const url = await new Promise<string>((resolveUrl, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`enforcer did not start:\n${err.slice(-3000)}\nstdout:\n${out.slice(-3000)}`)),
      options.startTimeoutMs ?? 30000,
    );
    const check = (): void => {
      const m = /alerts: (http:\/\/\S+)\/alerts/.exec(out);
      if (m?.[1]) {
        clearTimeout(timer);
        resolveUrl(m[1]);
      }
    };
    child.stdout.on('data', check);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`enforcer exited with ${String(code)}:\n${err.slice(-3000)}`));
    });
  });
  return {
    url,
    child,
    stderr: () => err,
    kill: async (signal) => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise((r) => child.once('exit', r));
      child.kill(signal);
      await exited;
    },
  };
}

/** GET a JSON document. */
export function getJson<T>(url: string): Promise<T> {
  return new Promise((resolveJson, reject) => {
    get(url, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () => {
        try {
          resolveJson(JSON.parse(body) as T);
        } catch (e) {
          reject(e instanceof Error ? e : new Error(String(e)));
        }
      });
    }).on('error', reject);
  });
}

/** Waits until the enforcer's status satisfies the predicate. */
export async function waitForStatus(
  url: string,
  predicate: (s: EnforcerStatus) => boolean,
  timeoutMs = 15000,
): Promise<EnforcerStatus> {
  const end = Date.now() + timeoutMs;
  let last: EnforcerStatus | undefined;
  while (Date.now() < end) {
    try {
      last = await getJson<EnforcerStatus>(`${url}/status`);
      if (predicate(last)) return last;
    } catch {
      // not up yet
    }
    await sleep(100);
  }
  throw new Error(`status condition not reached; last status ${JSON.stringify(last)}`);
}

/** The alerts the enforcer holds now (fast path over HTTP, for waiting). */
export async function fetchAlerts(url: string): Promise<AlertRecord[]> {
  return new Promise((resolveAlerts, reject) => {
    get(`${url}/alerts?follow=0`, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () =>
        resolveAlerts(
          body
            .split('\n')
            .filter((l) => l.trim() !== '')
            .map((l) => JSON.parse(l) as AlertRecord),
        ),
      );
    }).on('error', reject);
  });
}

/** Waits until an alert matching the predicate is held by the enforcer. */
export async function waitForAlert(
  url: string,
  predicate: (a: AlertRecord) => boolean,
  timeoutMs = 10000,
): Promise<AlertRecord> {
  const end = Date.now() + timeoutMs;
  while (Date.now() < end) {
    const found = (await fetchAlerts(url)).find(predicate);
    if (found) return found;
    await sleep(100);
  }
  throw new Error('expected alert did not arrive');
}

/** Reads alerts with the real CLI: `rtctl logs [-n ns] --json --no-follow --server <url>`. */
export function readLogs(url: string, extra: readonly string[], timeoutMs = 30000): AlertRecord[] {
  const r = spawnSync(
    process.execPath,
    rtctlArgs(['logs', '--json', '--no-follow', '--server', url, ...extra]),
    {
      cwd: REPO_ROOT,
      encoding: 'utf8',
      timeout: timeoutMs,
    },
  );
  if (r.status !== 0) throw new Error(`rtctl logs failed (${String(r.status)}): ${r.stderr}`);
  return r.stdout
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as AlertRecord);
}

/** Asks a fanotify helper to exit (cleanup after tests; enforcement ends with it). */
export async function stopHelper(socketPath: string): Promise<void> {
  await new Promise<void>((resolveStop) => {
    const s = connect(socketPath);
    s.on('connect', () => s.end('STOP\n'));
    s.on('close', () => resolveStop());
    s.on('error', () => resolveStop());
  });
}
