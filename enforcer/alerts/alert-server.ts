// The alert stream endpoint (docs/enforcer.md "Alert stream"): HTTP on a local address, NDJSON.
//   GET /alerts?after=<seq>&follow=<0|1>   history after <seq>, then (follow=1, default) live alerts
//       headers: X-Alert-Stream (hub id), X-Alert-First-Seq (seq of the first line sent)
//   GET /status                            enforcer status as JSON (from the given callback)
//   GET /healthz                           ok
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger } from 'pino';
import type { AlertHub } from './alert-hub.js';

/** A running alert server. */
export interface AlertServer {
  /** `http://host:port`. */
  url: string;
  close(): Promise<void>;
}

/** Options. */
export interface AlertServerOptions {
  hub: AlertHub;
  host: string;
  port: number;
  logger: Logger;
  status?: () => Promise<unknown>;
  /** Keep-alive interval (an empty line), ms. */
  keepAliveMs?: number;
}

function serveAlerts(req: IncomingMessage, res: ServerResponse, url: URL, options: AlertServerOptions): void {
  const after = Number(url.searchParams.get('after') ?? '0');
  const follow = url.searchParams.get('follow') !== '0';
  if (!Number.isInteger(after) || after < 0) {
    res
      .writeHead(400, { 'content-type': 'application/json' })
      .end('{"error":"after must be a non-negative integer"}\n');
    return;
  }
  const { hub } = options;
  const past = hub.since(after);
  res.writeHead(200, {
    'content-type': 'application/x-ndjson',
    'cache-control': 'no-store',
    'x-alert-stream': hub.streamId,
    'x-alert-first-seq': String(past[0]?.seq ?? hub.count() + 1),
  });
  let last = after;
  for (const a of past) {
    res.write(`${a.line}\n`);
    last = a.seq;
  }
  if (!follow) {
    res.end();
    return;
  }
  const unsubscribe = hub.subscribe((a) => {
    if (a.seq <= last) return;
    last = a.seq;
    res.write(`${a.line}\n`);
  });
  const keepAlive = setInterval(() => res.write('\n'), options.keepAliveMs ?? 15000);
  const done = (): void => {
    clearInterval(keepAlive);
    unsubscribe();
  };
  req.on('close', done);
  res.on('error', done);
}

/** Starts the alert server. */
export async function startAlertServer(options: AlertServerOptions): Promise<AlertServer> {
  const server: Server = createServer((req, res) => {
    try {
      const url = new URL(req.url ?? '/', 'http://local');
      if (req.method !== 'GET') {
        res.writeHead(405).end();
      } else if (url.pathname === '/alerts') {
        serveAlerts(req, res, url, options);
      } else if (url.pathname === '/healthz') {
        res.writeHead(200, { 'content-type': 'text/plain' }).end('ok\n');
      } else if (url.pathname === '/status' && options.status) {
        options.status().then(
          (s) => res.writeHead(200, { 'content-type': 'application/json' }).end(`${JSON.stringify(s)}\n`),
          (err: unknown) => {
            options.logger.error({ err }, 'status failed');
            res.writeHead(500, { 'content-type': 'application/json' }).end('{"error":"internal error"}\n');
          },
        );
      } else {
        res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":"not found"}\n');
      }
    } catch (err) {
      options.logger.error({ err, url: req.url }, 'alert server request failed');
      if (!res.headersSent) res.writeHead(500).end();
      else res.end();
    }
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => resolve());
  });
  const addr = server.address() as AddressInfo;
  const host = addr.family === 'IPv6' ? `[${addr.address}]` : addr.address;
  return {
    url: `http://${host}:${addr.port}`,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
