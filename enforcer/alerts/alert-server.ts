// The alert stream endpoint (docs/enforcer.md "Alert stream"): HTTP over a unix socket (default) or TCP, NDJSON.
//   GET /alerts?after=<seq>&follow=<0|1>   history after <seq>, then (follow=1, default) live alerts
//       headers: X-Alert-Stream (hub id), X-Alert-First-Seq (seq of the first line sent)
//   GET /alerts?since=<ms>&follow=<0|1>    the same, from the first held alert at or after that time (ms since
//       the epoch); when every held alert is newer, older ones come first from the alert log (`history`):
//       X-Alert-Log-Lines: N says the first N lines are such log alerts and carry no sequence number, and
//       X-Alert-Log-Truncated: 1 that a bound cut them (alert-log-since.ts)
//   GET /status                            enforcer status as JSON (from the given callback)
//   GET /healthz                           ok
//   GET /metrics                           Prometheus metrics (when given: enforcer/metrics/)
// Bounded under hostile clients: each follower is a cursor into the hub's history, written only while its
// socket buffer holds less than `followerBufferBytes` (backpressure), so a follower that stops reading costs
// one bounded buffer; one that falls more than `maxLag` alerts behind (and further behind than it started:
// a stream that asked for a long backlog is given time to read it) gets a final stream-end line
// (stream-end.ts) and is disconnected, as is one whose next alert the hub no longer holds. Streams are
// pumped once per turn of the event loop, so a burst of alerts is written in one batch. Connections, streams, header time and idle time are capped.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { chmodSync, chownSync, lstatSync, unlinkSync } from 'node:fs';
import { connect, type AddressInfo } from 'node:net';
import type { Logger } from 'pino';
import { formatAlertAddress, type AlertAddress } from './alert-address.js';
import type { AlertHub } from './alert-hub.js';
import type { AlertRecord } from './alert-record.js';
import type { HistoryBoundary } from '../io/alert-log-since.js';
import { formatStreamEnd } from './stream-end.js';

/** What the server holds for its streams now (tests and /status read it). */
export interface AlertServerStats {
  connections: number;
  streams: number;
  /** Bytes waiting in each stream's socket buffer, largest first. */
  bufferedBytes: number[];
  /** Streams ended because their reader fell behind, since start. */
  endedBehind: number;
}

/** A running alert server. */
export interface AlertServer {
  /** `http://host:port` or `unix:/path`. */
  url: string;
  address: AlertAddress;
  stats(): AlertServerStats;
  close(): Promise<void>;
}

/** Options. */
export interface AlertServerOptions {
  hub: AlertHub;
  listen: AlertAddress;
  logger: Logger;
  /** The `/status` document; undefined while not ready (503). */
  status?: () => Promise<unknown>;
  /** Alerts older than the hub holds, for `since=` (from the alert log); absent: the hub's history only. */
  history?: (
    sinceMs: number,
    boundary: HistoryBoundary | undefined,
  ) => { alerts: AlertRecord[]; truncated: boolean };
  /** The `/metrics` exposition; absent: 404. */
  metrics?: () => Promise<{ contentType: string; body: string }>;
  /** Unix socket mode (default 0o660) and owning group id (default: the process's). */
  socketMode?: number;
  socketGid?: number;
  /** Keep-alive interval (an empty line, sent only when nothing is waiting), ms. Default 15 000. */
  keepAliveMs?: number;
  /** Open connections at most (more are closed on accept). Default 256. */
  maxConnections?: number;
  /** `/alerts` streams at most (more get 503). Default 64. */
  maxStreams?: number;
  /** A stream is not written while its socket buffer holds this many bytes. Default 256 KiB. */
  followerBufferBytes?: number;
  /** A follower more than this many alerts behind is disconnected with a stream-end line. Default 5 000. */
  maxLag?: number;
  /** A connection with no completed read or write for this long is closed. Default 60 000 ms. */
  idleTimeoutMs?: number;
  /** Time to receive a request's headers. Default 5 000 ms. */
  headersTimeoutMs?: number;
}

const DEFAULTS = {
  keepAliveMs: 15000,
  maxConnections: 256,
  maxStreams: 64,
  followerBufferBytes: 256 * 1024,
  maxLag: 5000,
  idleTimeoutMs: 60000,
  headersTimeoutMs: 5000,
};

/** Most bytes written to a stream in one write call (lines are joined up to this). */
const WRITE_BATCH_BYTES = 64 * 1024;

interface Stream {
  res: ServerResponse;
}

/** Lines `first`..`last` of a hub joined (each with its newline), as bytes. */
interface Batch {
  first: number;
  last: number;
  bytes: Buffer;
}

/**
 * The last batch built per hub: followers at the same position (the usual case: every follower of a live
 * stream waits at the newest alert) write the same bytes, built and encoded once instead of once per stream.
 * A held line never changes, so a batch stays right for its sequence numbers.
 */
const lastBatch = new WeakMap<AlertHub, Batch>();

/** The lines after `cursor` (up to WRITE_BATCH_BYTES, at least one); undefined when none is held. */
function batchAfter(hub: AlertHub, cursor: number): Batch | undefined {
  const cached = lastBatch.get(hub);
  if (cached !== undefined && cached.first === cursor + 1) return cached;
  const head = hub.count();
  // The hub's encoded bytes, shared with the log and every other stream: a view of one segment when the
  // lines are in one (the usual case), else the views joined.
  const parts: Buffer[] = [];
  let buffer: Buffer | undefined;
  let start = 0;
  let end = 0;
  let size = 0;
  let last = cursor;
  while (last < head && size < WRITE_BATCH_BYTES) {
    const item = hub.at(last + 1);
    if (item === undefined) break;
    const span = item.encoded();
    if (span.buffer !== buffer || span.start !== end) {
      if (buffer !== undefined) parts.push(buffer.subarray(start, end));
      ({ buffer, start } = span);
    }
    end = span.end;
    size += span.end - span.start;
    last = item.seq;
  }
  if (buffer === undefined) return undefined;
  parts.push(buffer.subarray(start, end));
  const bytes = parts.length === 1 ? (parts[0] as Buffer) : Buffer.concat(parts, size);
  const batch = { first: cursor + 1, last, bytes };
  lastBatch.set(hub, batch);
  return batch;
}

function serveAlerts(
  req: IncomingMessage,
  res: ServerResponse,
  url: URL,
  options: AlertServerOptions,
  streams: Set<Stream>,
  onBehind: () => void,
): void {
  const afterText = url.searchParams.get('after') ?? '0';
  const after = /^\d{1,15}$/.test(afterText) ? Number(afterText) : NaN;
  const follow = url.searchParams.get('follow') !== '0';
  if (!Number.isSafeInteger(after)) {
    res
      .writeHead(400, { 'content-type': 'application/json' })
      .end('{"error":"after must be a non-negative integer"}\n');
    return;
  }
  const sinceText = url.searchParams.get('since');
  const since = sinceText === null ? undefined : /^\d{1,15}$/.test(sinceText) ? Number(sinceText) : NaN;
  if (since !== undefined && (Number.isNaN(since) || url.searchParams.has('after'))) {
    res
      .writeHead(400, { 'content-type': 'application/json' })
      .end('{"error":"since must be milliseconds since the epoch, and not given with after"}\n');
    return;
  }
  if (streams.size >= (options.maxStreams ?? DEFAULTS.maxStreams)) {
    res
      .writeHead(503, { 'content-type': 'application/json', 'retry-after': '5' })
      .end('{"error":"too many alert streams; try again later"}\n');
    return;
  }
  const { hub } = options;
  const bufferBytes = options.followerBufferBytes ?? DEFAULTS.followerBufferBytes;
  const maxLag = options.maxLag ?? DEFAULTS.maxLag;
  // The cursor: the last sequence number written to this stream.
  let cursor = Math.max(after, hub.firstHeld() - 1);
  let fromLog: { alerts: AlertRecord[]; truncated: boolean } = { alerts: [], truncated: false };
  if (since !== undefined) {
    // From the newest held alert backwards to the first one older than `since`.
    let start = hub.count() + 1;
    for (let s = hub.count(); s >= hub.firstHeld(); s--) {
      const item = hub.at(s);
      if (item === undefined || item.timeMs < since) break;
      start = s;
    }
    cursor = start - 1;
    const oldest = hub.at(start);
    if (start === hub.firstHeld() && options.history) {
      let boundary: HistoryBoundary | undefined;
      if (oldest !== undefined) {
        const timeMs = oldest.timeMs;
        const lines = new Set<string>();
        for (let s = start; hub.at(s) !== undefined && hub.at(s)?.timeMs === timeMs; s++)
          lines.add(hub.at(s)?.line ?? '');
        boundary = { timeMs, lines };
      }
      fromLog = options.history(since, boundary);
    }
  }
  res.writeHead(200, {
    'content-type': 'application/x-ndjson',
    'cache-control': 'no-store',
    'x-alert-stream': hub.streamId,
    'x-alert-first-seq': String(cursor + 1),
    ...(since !== undefined ? { 'x-alert-log-lines': String(fromLog.alerts.length) } : {}),
    ...(fromLog.truncated ? { 'x-alert-log-truncated': '1' } : {}),
  });
  if (fromLog.alerts.length > 0) res.write(`${fromLog.alerts.map((a) => JSON.stringify(a)).join('\n')}\n`);
  const stream: Stream = { res };
  streams.add(stream);
  let ended = false;
  let waitingDrain = false;
  let scheduled = false;
  // How far behind this stream may fall before it is ended: maxLag, or more while it is still working
  // through a backlog it asked for (after= or since= far back). The allowance shrinks as the stream
  // catches up, so a stream is only ended while it is losing ground: never before its first write, and
  // so never in a loop of reconnections that make no progress.
  let allowedLag = Math.max(maxLag, hub.count() - cursor);

  const finish = (): void => {
    if (ended) return;
    ended = true;
    clearInterval(keepAlive);
    unsubscribe();
    streams.delete(stream);
  };
  const endBehind = (): void => {
    const missed = hub.count() - cursor;
    finish();
    onBehind();
    options.logger.warn({ missed, resumeAfter: cursor }, 'alert follower fell behind; disconnected');
    res.end(`${formatStreamEnd(missed, cursor)}\n`);
    // A reader that does not read cannot take the final line: close it after a grace period.
    setTimeout(() => res.destroy(), 5000).unref();
  };
  const pump = (): void => {
    if (ended) return;
    const head = hub.count();
    // The next alert it needs is no longer held: it cannot be sent, whatever the allowance.
    if (cursor < head && hub.at(cursor + 1) === undefined) {
      endBehind();
      return;
    }
    if (!waitingDrain) {
      while (cursor < head && res.writableLength < bufferBytes) {
        const batch = batchAfter(hub, cursor);
        if (batch === undefined) break;
        cursor = batch.last;
        if (!res.write(batch.bytes)) break;
      }
    }
    const lag = head - cursor;
    if (lag > allowedLag) {
      endBehind();
      return;
    }
    allowedLag = Math.max(maxLag, Math.min(allowedLag, lag));
    if (waitingDrain) return;
    if (cursor < head || res.writableLength >= bufferBytes) {
      waitingDrain = true;
      res.once('drain', () => {
        waitingDrain = false;
        pump();
      });
      return;
    }
    if (!follow) {
      finish();
      res.end();
    }
  };
  // Alerts are published in bursts (a batch from the data plane): the stream is pumped once per turn of the
  // event loop, so a burst is one write, not one per alert.
  const schedule = (): void => {
    if (scheduled || ended) return;
    scheduled = true;
    setImmediate(() => {
      scheduled = false;
      pump();
    });
  };
  const unsubscribe = follow ? hub.subscribe(schedule) : (): boolean => true;
  const keepAlive = setInterval(() => {
    if (!ended && res.writableLength === 0) res.write('\n');
  }, options.keepAliveMs ?? DEFAULTS.keepAliveMs);
  keepAlive.unref();
  req.on('close', finish);
  res.on('close', finish);
  res.on('error', finish);
  pump();
}

/** Removes a stale unix socket left by a process that died; refuses a live one or a non-socket. */
async function clearStaleSocket(path: string): Promise<void> {
  let isSocket: boolean;
  try {
    isSocket = lstatSync(path).isSocket();
  } catch {
    return; // absent
  }
  if (!isSocket) throw new Error(`${path} exists and is not a socket`);
  const live = await new Promise<boolean>((resolve) => {
    const s = connect(path);
    s.once('connect', () => {
      s.destroy();
      resolve(true);
    });
    s.once('error', () => resolve(false));
  });
  if (live) throw new Error(`${path}: another process is serving alerts there`);
  unlinkSync(path);
}

/** Starts the alert server. */
export async function startAlertServer(options: AlertServerOptions): Promise<AlertServer> {
  const streams = new Set<Stream>();
  let endedBehind = 0;
  let connections = 0;
  const headersTimeout = options.headersTimeoutMs ?? DEFAULTS.headersTimeoutMs;
  const server: Server = createServer(
    {
      headersTimeout,
      requestTimeout: headersTimeout,
      keepAliveTimeout: 5000,
      connectionsCheckingInterval: Math.min(1000, headersTimeout),
      maxHeaderSize: 8192,
    },
    (req, res) => {
      try {
        const url = new URL(req.url ?? '/', 'http://local');
        if (req.method !== 'GET') {
          res.writeHead(405).end();
        } else if (url.pathname === '/alerts') {
          serveAlerts(req, res, url, options, streams, () => endedBehind++);
        } else if (url.pathname === '/healthz') {
          res.writeHead(200, { 'content-type': 'text/plain' }).end('ok\n');
        } else if (url.pathname === '/metrics' && options.metrics) {
          options.metrics().then(
            (m) => res.writeHead(200, { 'content-type': m.contentType }).end(m.body),
            (err: unknown) => {
              options.logger.error({ err }, 'metrics failed');
              res.writeHead(500, { 'content-type': 'application/json' }).end('{"error":"internal error"}\n');
            },
          );
        } else if (url.pathname === '/status' && options.status) {
          options.status().then(
            (s) =>
              s === undefined
                ? res.writeHead(503, { 'content-type': 'application/json' }).end('{"error":"starting"}\n')
                : res.writeHead(200, { 'content-type': 'application/json' }).end(`${JSON.stringify(s)}\n`),
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
    },
  );
  server.maxConnections = options.maxConnections ?? DEFAULTS.maxConnections;
  // Idle and stalled connections (a stream whose reader stopped completes no write) are closed.
  server.timeout = options.idleTimeoutMs ?? DEFAULTS.idleTimeoutMs;
  server.on('connection', (socket) => {
    connections++;
    socket.once('close', () => connections--);
  });
  server.on('clientError', (_err, socket) => socket.destroy());
  const { listen } = options;
  if (listen.kind === 'unix') await clearStaleSocket(listen.path);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    if (listen.kind === 'unix') {
      // Bind with no access for others, then open it to the owner and the group.
      const umask = process.umask(0o177);
      try {
        server.listen(listen.path, () => resolve());
      } finally {
        process.umask(umask);
      }
    } else {
      server.listen(listen.port, listen.host, () => resolve());
    }
  });
  let address: AlertAddress = listen;
  if (listen.kind === 'unix') {
    try {
      if (options.socketGid !== undefined) chownSync(listen.path, -1, options.socketGid);
      chmodSync(listen.path, options.socketMode ?? 0o660);
    } catch (err) {
      server.close();
      throw err;
    }
  } else {
    const addr = server.address() as AddressInfo;
    address = { kind: 'tcp', host: addr.address, port: addr.port };
  }
  return {
    url: formatAlertAddress(address),
    address,
    stats: () => ({
      connections,
      streams: streams.size,
      bufferedBytes: [...streams].map((s) => s.res.writableLength).sort((a, b) => b - a),
      endedBehind,
    }),
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
