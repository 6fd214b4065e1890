// Test support for the webhook: real certificates in a temporary directory, a real HTTPS server on loopback,
// and a keep-alive client that trusts the generated CA.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import https from 'node:https';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { pino, type Logger } from 'pino';
import { generateWebhookCertificates, type WebhookCertificates } from '../../../webhook/certs.js';
import { checkAdmissionObject } from '../../../compiler/lint.js';
import type { ObjectCheck } from '../../../webhook/rules/checker-rule.js';
import { startWebhook, type RunningWebhook } from '../../../webhook/serve.js';
import type { ConnectionLimits } from '../../../webhook/connection-guard.js';

/** The DNS name the test certificates are issued for; clients send it as SNI and verify against it. */
export const TEST_DNS = 'rtctl-webhook.rtctl-system.svc';

/** Certificates written to a temporary directory. */
export interface TestCertificates extends WebhookCertificates {
  dir: string;
  certFile: string;
  keyFile: string;
  caFile: string;
  cleanup(): void;
}

/** Generates a CA and serving certificate into a fresh temporary directory. */
export function createTestCertificates(): TestCertificates {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'rtctl-webhook-test-'));
  const certs = generateWebhookCertificates({
    dnsNames: [TEST_DNS, 'localhost'],
    ipAddresses: ['127.0.0.1'],
  });
  const certFile = path.join(dir, 'tls.crt');
  const keyFile = path.join(dir, 'tls.key');
  const caFile = path.join(dir, 'ca.crt');
  writeFileSync(certFile, certs.tlsCert);
  writeFileSync(keyFile, certs.tlsKey);
  writeFileSync(caFile, certs.caCert);
  return {
    ...certs,
    dir,
    certFile,
    keyFile,
    caFile,
    cleanup: () => rmSync(dir, { recursive: true, force: true }),
  };
}

/** A logger whose JSON lines are kept in memory for assertions. */
export function createCapturingLogger(): { logger: Logger; lines: string[] } {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _enc, done) {
      lines.push(chunk.toString());
      done();
    },
  });
  return { logger: pino({ level: 'info' }, stream), lines };
}

/** A webhook on 127.0.0.1 with an ephemeral port. */
export interface TestWebhook {
  webhook: RunningWebhook;
  port: number;
  certs: TestCertificates;
  logLines: string[];
  stop(): Promise<void>;
}

/** Starts the real webhook (real HTTPS, real rules) on loopback. */
export async function startTestWebhook(
  options: {
    policyDir?: string;
    check?: ObjectCheck;
    certs?: TestCertificates;
    reloadIntervalMs?: number;
    connectionLimits?: ConnectionLimits;
  } = {},
): Promise<TestWebhook> {
  const certs = options.certs ?? createTestCertificates();
  const { logger, lines } = createCapturingLogger();
  const webhook = await startWebhook(
    {
      certFile: certs.certFile,
      keyFile: certs.keyFile,
      host: '127.0.0.1',
      port: 0,
      ...(options.policyDir === undefined ? {} : { policyDir: options.policyDir }),
      shutdownDelayMs: 0,
      drainTimeoutMs: 2000,
      reloadIntervalMs: options.reloadIntervalMs ?? 1000,
      ...(options.connectionLimits === undefined ? {} : { connectionLimits: options.connectionLimits }),
    },
    logger,
    options.check ?? checkAdmissionObject,
  );
  return {
    webhook,
    port: webhook.server.address.port,
    certs,
    logLines: lines,
    stop: async () => {
      await webhook.shutdown();
      if (options.certs === undefined) certs.cleanup();
    },
  };
}

/** A response as the tests see it. */
export interface TestResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  json: unknown;
  localPort: number | undefined;
}

/** A keep-alive HTTPS client trusting `ca`, sending SNI `TEST_DNS`. */
export interface TestClient {
  request(
    method: string,
    pathname: string,
    body?: string | Buffer,
    timeoutMs?: number,
  ): Promise<TestResponse>;
  post(pathname: string, body: unknown): Promise<TestResponse>;
  agent: https.Agent;
  close(): void;
}

/** Creates a client for the server on `port`. */
export function createTestClient(
  port: number,
  ca: string | string[],
  options: { maxSockets?: number } = {},
): TestClient {
  const agent = new https.Agent({
    keepAlive: true,
    maxSockets: options.maxSockets ?? 8,
    ca,
    servername: TEST_DNS,
  });
  const request = (
    method: string,
    pathname: string,
    body?: string | Buffer,
    timeoutMs = 10_000,
  ): Promise<TestResponse> =>
    new Promise((resolve, reject) => {
      const req = https.request(
        {
          host: '127.0.0.1',
          port,
          method,
          path: pathname,
          agent,
          servername: TEST_DNS,
          headers:
            body === undefined
              ? {}
              : { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
        },
        (res) => {
          const localPort = res.socket.localPort;
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('error', reject);
          res.on('end', () => {
            const text = Buffer.concat(chunks).toString('utf8');
            let json: unknown;
            try {
              json = JSON.parse(text) as unknown;
            } catch {
              json = undefined;
            }
            resolve({
              status: res.statusCode ?? 0,
              headers: res.headers,
              text,
              json,
              localPort,
            });
          });
        },
      );
      req.setTimeout(timeoutMs, () =>
        req.destroy(new Error(`${method} ${pathname}: no answer within ${timeoutMs} ms`)),
      );
      req.on('error', reject);
      req.end(body);
    });
  return {
    agent,
    request,
    post: (pathname, body) =>
      request('POST', pathname, typeof body === 'string' ? body : JSON.stringify(body)),
    close: () => agent.destroy(),
  };
}

let uidCounter = 0;

/** Wraps an object in an AdmissionReview request. */
export function createReview(
  object: unknown,
  options: {
    operation?: 'CREATE' | 'UPDATE' | 'DELETE';
    dryRun?: boolean;
    oldObject?: unknown;
    uid?: string;
  } = {},
): Record<string, unknown> {
  const o = (typeof object === 'object' && object !== null ? object : {}) as Record<string, unknown>;
  const apiVersion = typeof o['apiVersion'] === 'string' ? o['apiVersion'] : 'v1';
  const slash = apiVersion.indexOf('/');
  const group = slash < 0 ? '' : apiVersion.slice(0, slash);
  const version = slash < 0 ? apiVersion : apiVersion.slice(slash + 1);
  const kind = typeof o['kind'] === 'string' ? o['kind'] : 'Unknown';
  const metadata = (
    typeof o['metadata'] === 'object' && o['metadata'] !== null ? o['metadata'] : {}
  ) as Record<string, unknown>;
  const operation = options.operation ?? 'CREATE';
  uidCounter += 1;
  return {
    apiVersion: 'admission.k8s.io/v1',
    kind: 'AdmissionReview',
    request: {
      uid: options.uid ?? `00000000-0000-4000-8000-${String(uidCounter).padStart(12, '0')}`,
      kind: { group, version, kind },
      resource: { group, version, resource: `${kind.toLowerCase()}s` },
      requestKind: { group, version, kind },
      name: typeof metadata['name'] === 'string' ? metadata['name'] : '',
      ...(typeof metadata['namespace'] === 'string' ? { namespace: metadata['namespace'] } : {}),
      operation,
      userInfo: { username: 'kubernetes-admin', groups: ['system:masters', 'system:authenticated'] },
      object: operation === 'DELETE' ? null : object,
      oldObject: options.oldObject ?? null,
      dryRun: options.dryRun ?? false,
      options: {
        apiVersion: 'meta.k8s.io/v1',
        kind: operation === 'UPDATE' ? 'UpdateOptions' : 'CreateOptions',
      },
    },
  };
}

/** Writes a file into a directory (helper for policy dirs). */
export function writeInto(dir: string, name: string, content: string | Uint8Array): string {
  const file = path.join(dir, name);
  writeFileSync(file, content);
  return file;
}
