// Client of the alert stream: follows one or more enforcers (or relays), reconnecting on loss and resuming
// after the last alert seen, so nothing is repeated or skipped while the server stays up; when the server
// restarts (a new stream id) it starts from the new server's beginning. A server that ended the stream
// because this reader fell behind names the sequence to resume after (stream-end.ts): the follower resumes
// there at once, and says so when the server no longer holds every alert after it. An upstream that is not
// an alert stream (no stream headers, a line that is not a JSON object, a line longer than the bound) is a
// fatal AlertStreamError, never buffered without limit and never retried.
import { get, type IncomingMessage } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { createLineReader, LineTooLongError } from '../io/line-reader.js';
import { alertRequestOptions, parseAlertAddress, type AlertAddress } from './alert-address.js';
import type { AlertRecord } from './alert-record.js';
import { asStreamEnd } from './stream-end.js';

/** Options of a follower. */
export interface FollowOptions {
  /** Addresses (`unix:/run/rtctl/alerts.sock`, `/path`, `127.0.0.1:4280`, `http://127.0.0.1:4280`). */
  servers: readonly string[];
  /** false: read the history once and return. */
  follow: boolean;
  onAlert: (alert: AlertRecord, server: string) => void;
  /** A lost connection (retried). */
  onError?: (message: string, server: string) => void;
  /** Something the reader should know: alerts it missed, a stream ended by the server. */
  onNotice?: (message: string, server: string) => void;
  signal?: AbortSignal;
  /** Delay between reconnection attempts, ms. */
  retryMs?: number;
  /** Longest line accepted, in characters (default 1 MiB). */
  maxLineLength?: number;
  /**
   * Start at this time (ms since the epoch) instead of the beginning of each server's history: the first
   * request asks `since=`, and the server adds older alerts from its alert log (X-Alert-Log-Lines).
   */
  sinceMs?: number;
}

/** The upstream is not an alert stream (or broke its framing); following it cannot go on. */
export class AlertStreamError extends Error {}

/** Default bound of one alert line. */
export const MAX_ALERT_LINE = 1024 * 1024;

function request(address: AlertAddress, path: string, signal: AbortSignal): Promise<IncomingMessage> {
  return new Promise((resolve, reject) => {
    const req = get({ ...alertRequestOptions(address, path), signal }, (res) => {
      if (res.statusCode !== 200) {
        res.resume();
        reject(new Error(`HTTP ${res.statusCode ?? 0}`));
      } else resolve(res);
    });
    req.on('error', reject);
  });
}

function header(res: IncomingMessage, name: string): string {
  const v = res.headers[name];
  return typeof v === 'string' ? v : '';
}

async function followOne(server: string, options: FollowOptions, signal: AbortSignal): Promise<void> {
  const address = parseAlertAddress(server);
  const maxLineLength = options.maxLineLength ?? MAX_ALERT_LINE;
  let streamId = '';
  let lastSeq = 0;
  for (;;) {
    if (signal.aborted) return;
    let retryNow = false;
    try {
      const useSince = options.sinceMs !== undefined && streamId === '' && lastSeq === 0;
      const from = useSince ? `since=${Math.max(0, Math.floor(options.sinceMs ?? 0))}` : `after=${lastSeq}`;
      const res = await request(address, `/alerts?${from}&follow=${options.follow ? 1 : 0}`, signal);
      const id = header(res, 'x-alert-stream');
      const firstText = header(res, 'x-alert-first-seq');
      if (id === '' || id.length > 256 || !/^[1-9]\d{0,15}$/.test(firstText)) {
        res.destroy();
        throw new AlertStreamError('not an rtctl alert stream (X-Alert-Stream/X-Alert-First-Seq missing)');
      }
      let seq = Number(firstText);
      if (streamId !== '' && id !== streamId && lastSeq > 0) {
        // The server restarted: its sequence numbers start over; read it from its beginning.
        res.destroy();
        streamId = id;
        lastSeq = 0;
        continue;
      }
      if (id === streamId && seq > lastSeq + 1 && lastSeq > 0) {
        options.onNotice?.(
          `${seq - lastSeq - 1} alerts (${lastSeq + 1}..${seq - 1}) are no longer held by the server; they remain in the enforcer's alert log`,
          server,
        );
      }
      streamId = id;
      // Lines from the server's alert log (a since= request) come first and carry no sequence number.
      const logText = header(res, 'x-alert-log-lines');
      let logLines = useSince && /^\d{1,9}$/.test(logText) ? Number(logText) : 0;
      if (useSince) {
        lastSeq = seq - 1;
        if (header(res, 'x-alert-log-truncated') === '1')
          options.onNotice?.(
            `the alert log holds more alerts since the requested time than one answer carries; the ${logLines} newest of the older ones are shown`,
            server,
          );
      }
      const lines = createLineReader(res, { maxLineLength });
      for (;;) {
        let line: string | undefined;
        try {
          line = await lines.next();
        } catch (err) {
          if (err instanceof LineTooLongError)
            throw new AlertStreamError(`a line longer than ${maxLineLength} characters: not an alert stream`);
          throw err;
        }
        if (line === undefined) break;
        if (line.trim() === '') continue;
        let value: unknown;
        try {
          value = JSON.parse(line);
        } catch {
          throw new AlertStreamError('a line that is not JSON: not an alert stream');
        }
        const end = asStreamEnd(value);
        if (end !== undefined) {
          options.onNotice?.(
            `the server ended the stream: this reader fell behind by ${end.missed} alerts; resuming after ${end.resumeAfter}`,
            server,
          );
          lastSeq = end.resumeAfter;
          retryNow = true;
          res.destroy();
          break;
        }
        if (typeof value !== 'object' || value === null || Array.isArray(value))
          throw new AlertStreamError('a line that is not a JSON object: not an alert stream');
        if (logLines > 0) {
          logLines--;
          options.onAlert(value as AlertRecord, server);
          continue;
        }
        lastSeq = seq++;
        options.onAlert(value as AlertRecord, server);
      }
      if (logLines > 0)
        options.onNotice?.(
          `the connection ended before ${logLines} older alerts from the alert log arrived; they remain in the log`,
          server,
        );
      if (!retryNow) {
        if (lines.truncated()) {
          if (!options.follow) throw new AlertStreamError('the stream ended inside a line');
          throw new Error('the stream ended inside a line');
        }
        if (!options.follow) return;
      }
    } catch (err) {
      if (signal.aborted) return;
      if (err instanceof AlertStreamError) throw err;
      const message = err instanceof Error ? err.message : String(err);
      if (!options.follow) throw err instanceof Error ? err : new Error(message);
      options.onError?.(message, server);
    }
    if (retryNow) continue;
    try {
      await sleep(options.retryMs ?? 1000, undefined, { signal });
    } catch {
      return;
    }
  }
}

/**
 * Follows every server until the signal aborts (or, without follow, until each history is read). Rejects
 * with AlertStreamError (naming the server) when an upstream is not an alert stream; the others stop too.
 */
export async function followAlerts(options: FollowOptions): Promise<void> {
  const abort = new AbortController();
  const onAbort = (): void => abort.abort();
  options.signal?.addEventListener('abort', onAbort);
  if (options.signal?.aborted) abort.abort();
  try {
    await Promise.all(
      options.servers.map((s) =>
        followOne(s, options, abort.signal).catch((err: unknown) => {
          abort.abort();
          if (err instanceof AlertStreamError) throw new AlertStreamError(`${s}: ${err.message}`);
          throw err;
        }),
      ),
    );
  } finally {
    options.signal?.removeEventListener('abort', onAbort);
  }
}
