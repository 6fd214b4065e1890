// The HTTPS server around the webhook app: TLS from files, reloaded when they change (new connections get the
// new certificate, open ones keep theirs), and a drain on shutdown that lets in-flight requests finish.
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { unwatchFile, watchFile } from 'node:fs';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import tls from 'node:tls';
import type { RequestListener } from 'node:http';
import type { Logger } from 'pino';
import {
  DEFAULT_CONNECTION_LIMITS,
  guardConnections,
  type ConnectionGuard,
  type ConnectionLimits,
} from './connection-guard.js';
import { messageOf } from './error-value.js';

/** How to run the server. */
export interface WebhookServerOptions {
  certFile: string;
  keyFile: string;
  host: string;
  port: number;
  handler: RequestListener;
  logger: Logger;
  /** How often the certificate files are checked for changes. */
  reloadIntervalMs?: number;
  /** Connection cap and timeouts; DEFAULT_CONNECTION_LIMITS when absent. */
  limits?: ConnectionLimits;
}

/** A running server. */
export interface RunningWebhookServer {
  server: https.Server;
  /** The bound address (port 0 resolves here). */
  address: AddressInfo;
  /** Connection accounting (open connections, evictions). */
  connections: ConnectionGuard;
  /** Reloads the certificate and key now; false (old pair kept) when the files do not form a valid pair. */
  reloadCertificate(): Promise<boolean>;
  /** Stops accepting connections, waits for in-flight requests (at most `deadlineMs`), then closes the rest. */
  close(deadlineMs: number): Promise<void>;
}

async function readPair(
  certFile: string,
  keyFile: string,
): Promise<{ cert: Buffer; key: Buffer; digest: string }> {
  const [cert, key] = await Promise.all([readFile(certFile), readFile(keyFile)]);
  const digest = createHash('sha256').update(cert).update('\0').update(key).digest('hex');
  return { cert, key, digest };
}

/** Starts the HTTPS server; resolves once it listens. */
export async function startWebhookServer(options: WebhookServerOptions): Promise<RunningWebhookServer> {
  const { certFile, keyFile, logger } = options;
  const first = await readPair(certFile, keyFile);
  let current = first.digest;
  const limits = options.limits ?? DEFAULT_CONNECTION_LIMITS;
  const server = https.createServer(
    {
      cert: first.cert,
      key: first.key,
      minVersion: 'TLSv1.2',
      handshakeTimeout: limits.handshakeTimeoutMs,
    },
    options.handler,
  );
  const connections = guardConnections(server, limits);

  let reloading: Promise<boolean> | undefined;
  const reload = async (): Promise<boolean> => {
    let pair;
    try {
      pair = await readPair(certFile, keyFile);
    } catch (err) {
      logger.warn({ err: messageOf(err) }, 'certificate files unreadable; keeping the current pair');
      return false;
    }
    if (pair.digest === current) return true;
    try {
      // Validates that the key matches the certificate before the server uses them.
      tls.createSecureContext({ cert: pair.cert, key: pair.key });
      server.setSecureContext({ cert: pair.cert, key: pair.key, minVersion: 'TLSv1.2' });
    } catch (err) {
      logger.warn(
        { err: messageOf(err) },
        'certificate and key do not form a pair yet; keeping the current pair',
      );
      return false;
    }
    current = pair.digest;
    logger.info({ certFile }, 'certificate reloaded');
    return true;
  };
  const reloadCertificate = (): Promise<boolean> => {
    // One reload at a time; a change seen during a reload triggers another afterwards.
    const run = (reloading ?? Promise.resolve(true)).then(reload, reload);
    reloading = run;
    return run;
  };
  const onChange = (): void => {
    void reloadCertificate();
  };
  const interval = options.reloadIntervalMs ?? 1000;
  watchFile(certFile, { interval, persistent: false }, onChange);
  watchFile(keyFile, { interval, persistent: false }, onChange);

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  server.on('error', (err) => logger.error({ err: err.message }, 'server error'));
  server.on('tlsClientError', (err) => logger.debug({ err: err.message }, 'TLS handshake failed'));
  const address = server.address() as AddressInfo;

  const close = async (deadlineMs: number): Promise<void> => {
    unwatchFile(certFile, onChange);
    unwatchFile(keyFile, onChange);
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    server.closeIdleConnections();
    // Connections finishing their last response become idle; close them as they do.
    const sweep = setInterval(() => server.closeIdleConnections(), 50);
    const deadline = new Promise<void>((resolve) => setTimeout(resolve, deadlineMs).unref());
    await Promise.race([closed, deadline]);
    clearInterval(sweep);
    server.closeAllConnections();
    await closed;
  };
  return { server, address, connections, reloadCertificate, close };
}
