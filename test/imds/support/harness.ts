// Test harness: runs the real service (express over real HTTP on loopback) with a manual clock and scheduler,
// and a raw HTTP client that sends exactly the headers it is given.
import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { pino } from 'pino';
import { createManualClock, type ManualClock } from '../../../imds/clock.js';
import { parseConfig, type ImdsConfig } from '../../../imds/config.js';
import { createManualScheduler, type ManualScheduler } from '../../../imds/scheduler.js';
import { startImds, type RunningImds } from '../../../imds/serve.js';
import type { SocketTtl } from '../../../imds/socket-ttl.js';

/** A response as seen on the wire. */
export interface WireResponse {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
}

/** Sends one request on a fresh connection. */
export function sendRequest(
  base: string,
  method: string,
  path: string,
  headers: Record<string, string> = {},
  body?: string,
): Promise<WireResponse> {
  const url = new URL(base);
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      { host: url.hostname, port: url.port, method, path, headers, agent: false, timeout: 5000 },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            body: Buffer.concat(chunks).toString('utf8'),
          }),
        );
        res.on('error', reject);
      },
    );
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', reject);
    if (body !== undefined) req.write(body);
    req.end();
  });
}

/** The management token of every harness (the CLI generates a random one; tests use a fixed one). */
export const MANAGE_TOKEN = 'test-manage-token-0123456789abcdefghijklmnopq';

/** Sends one request to a management endpoint with the harness's bearer token. */
export function sendManage(
  base: string,
  method: string,
  path: string,
  headers: Record<string, string> = {},
  body?: string,
): Promise<WireResponse> {
  return sendRequest(base, method, path, { authorization: `Bearer ${MANAGE_TOKEN}`, ...headers }, body);
}

/** A running service under test. */
export interface Harness {
  imds: RunningImds;
  clock: ManualClock;
  scheduler: ManualScheduler;
  config: ImdsConfig;
  /** Base URL of the first instance's metadata service. */
  metadataUrl: string;
  manageUrl: string;
  get(path: string, headers?: Record<string, string>): Promise<WireResponse>;
  putToken(ttl: string | undefined, headers?: Record<string, string>): Promise<WireResponse>;
  /** Issues a token (asserting success) and returns it. */
  token(ttl?: number): Promise<string>;
  modify(body: unknown): Promise<WireResponse>;
  close(): Promise<void>;
}

/** The test epoch: a fixed instant, so expiry and rotation are exact. */
export const T0 = Date.parse('2026-01-01T00:00:00Z');

/** Starts the service with `overrides` merged into a one-instance config on loopback ports. */
export async function startHarness(
  overrides: Record<string, unknown> = {},
  instance: Record<string, unknown> = {},
  socketTtl?: SocketTtl,
): Promise<Harness> {
  const parsed = parseConfig({
    listen: '127.0.0.1:0',
    manageListen: '127.0.0.1:0',
    applyDelayMs: 0,
    ...overrides,
    instances: [{ userData: '#!/bin/sh\necho hello from user data\n', ...instance }],
    ...(overrides['instances'] === undefined ? {} : { instances: overrides['instances'] }),
  });
  if (!parsed.ok) throw new Error(`bad test config: ${JSON.stringify(parsed.errors)}`);
  const clock = createManualClock(T0);
  const scheduler = createManualScheduler();
  const imds = await startImds({
    config: parsed.config,
    logger: pino({ level: 'silent' }),
    clock,
    scheduler,
    socketTtl,
    manageToken: MANAGE_TOKEN,
  });
  const first = [...imds.metadata.values()][0];
  if (first === undefined) throw new Error('no metadata listener');
  const metadataUrl = `http://${first.host}:${first.port}`;
  const manageUrl = `http://${imds.manage.host}:${imds.manage.port}`;
  const h: Harness = {
    imds,
    clock,
    scheduler,
    config: parsed.config,
    metadataUrl,
    manageUrl,
    get: (path, headers = {}) => sendRequest(metadataUrl, 'GET', path, headers),
    putToken: (ttl, headers = {}) =>
      sendRequest(metadataUrl, 'PUT', '/latest/api/token', {
        ...(ttl === undefined ? {} : { 'X-cloud-metadata-token-ttl-seconds': ttl }),
        ...headers,
      }),
    async token(ttl = 21600) {
      const res = await h.putToken(String(ttl));
      if (res.status !== 200) throw new Error(`token PUT answered ${res.status}`);
      return res.body;
    },
    modify: (body) =>
      sendManage(
        manageUrl,
        'POST',
        '/modify-instance-metadata-options',
        { 'content-type': 'application/json' },
        JSON.stringify(body),
      ),
    close: () => imds.close(),
  };
  return h;
}

/** Extracts the <title> of an HTML body. */
export function readTitle(html: string): string | undefined {
  return /<title>([^<]*)<\/title>/.exec(html)?.[1];
}
