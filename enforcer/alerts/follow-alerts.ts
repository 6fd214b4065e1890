// Client of the alert stream: follows one or more enforcers (or relays), reconnecting on loss and resuming
// after the last alert seen, so nothing is repeated or skipped while the server stays up; when the server
// restarts (a new stream id) it starts from the new server's beginning.
import { get, type IncomingMessage } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { createLineReader } from '../io/line-reader.js';
import type { AlertRecord } from './alert-record.js';

/** Options of a follower. */
export interface FollowOptions {
  /** Base URLs (`http://127.0.0.1:4280`). */
  servers: readonly string[];
  /** false: read the history once and return. */
  follow: boolean;
  onAlert: (alert: AlertRecord, server: string) => void;
  onError?: (message: string, server: string) => void;
  signal?: AbortSignal;
  /** Delay between reconnection attempts, ms. */
  retryMs?: number;
}

function request(url: string, signal?: AbortSignal): Promise<IncomingMessage> {
  return new Promise((resolve, reject) => {
    const req = get(url, { ...(signal ? { signal } : {}) }, (res) => {
      if (res.statusCode !== 200) {
        res.resume();
        reject(new Error(`HTTP ${res.statusCode ?? 0} from ${url}`));
      } else resolve(res);
    });
    req.on('error', reject);
  });
}

async function followOne(server: string, options: FollowOptions): Promise<void> {
  let streamId = '';
  let lastSeq = 0;
  for (;;) {
    if (options.signal?.aborted) return;
    try {
      const res = await request(
        `${server}/alerts?after=${lastSeq}&follow=${options.follow ? 1 : 0}`,
        options.signal,
      );
      const id = String(res.headers['x-alert-stream'] ?? '');
      let seq = Number(res.headers['x-alert-first-seq'] ?? '1');
      if (streamId !== '' && id !== streamId && lastSeq > 0) {
        // The server restarted: its sequence numbers start over; read it from its beginning.
        res.destroy();
        streamId = id;
        lastSeq = 0;
        continue;
      }
      streamId = id;
      const lines = createLineReader(res);
      for (;;) {
        const line = await lines.next();
        if (line === undefined) break;
        if (line.trim() === '') continue;
        lastSeq = seq++;
        options.onAlert(JSON.parse(line) as AlertRecord, server);
      }
      if (!options.follow) return;
    } catch (err) {
      if (options.signal?.aborted) return;
      const message = err instanceof Error ? err.message : String(err);
      if (!options.follow) throw err instanceof Error ? err : new Error(message);
      options.onError?.(message, server);
    }
    try {
      await sleep(options.retryMs ?? 1000, undefined, options.signal ? { signal: options.signal } : {});
    } catch {
      return;
    }
  }
}

/** Follows every server until the signal aborts (or, without follow, until each history is read). */
export async function followAlerts(options: FollowOptions): Promise<void> {
  await Promise.all(options.servers.map((s) => followOne(s, options)));
}
