// HTTP webhook output: alerts queued (bounded: a full queue drops the new alert, counted) and POSTed in
// batches of at most `batchSize`, as NDJSON or a JSON array, one request at a time. A batch is sent when it is
// full or `flushMs` after its first alert. A network error, a timeout, 408, 429 or a 5xx is retried up to
// `retries` times with exponential backoff and full jitter (delay uniform in [base/2, base], base doubling
// from `backoffMs` up to `maxBackoffMs`); any other non-2xx answer fails the batch at once. A batch that
// cannot be delivered is counted as failed, never retried forever.
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { Logger } from 'pino';
import { createCounters, messageOf, type AlertOutput } from './alert-output.js';
import type { HttpOutputSpec } from './output-spec.js';

/** Options besides the spec. */
export interface HttpOutputOptions {
  logger: Logger;
  /** Random source of the jitter (tests pass a fixed one). */
  random?: () => number;
}

/** Largest response body read (the rest is discarded). */
const MAX_RESPONSE_BYTES = 64 * 1024;

class RetryableError extends Error {}

/** The delay before retry `attempt` (1-based). */
export function backoffDelay(
  spec: Pick<HttpOutputSpec, 'backoffMs' | 'maxBackoffMs'>,
  attempt: number,
  random: () => number,
): number {
  const base = Math.min(spec.maxBackoffMs, spec.backoffMs * 2 ** Math.min(attempt - 1, 30));
  return Math.round(base / 2 + random() * (base / 2));
}

function post(spec: HttpOutputSpec, body: Buffer): Promise<void> {
  const url = new URL(spec.url);
  const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise((resolve, reject) => {
    const req = send(
      url,
      {
        method: 'POST',
        headers: {
          'content-type': spec.format === 'ndjson' ? 'application/x-ndjson' : 'application/json',
          'content-length': body.length,
          'user-agent': 'rtctl-alert-output',
        },
        timeout: spec.timeoutMs,
      },
      (res: IncomingMessage) => {
        let read = 0;
        res.on('data', (c: Buffer) => {
          read += c.length;
          if (read > MAX_RESPONSE_BYTES) res.destroy();
        });
        res.on('error', () => undefined);
        const status = res.statusCode ?? 0;
        const done = (): void => {
          if (status >= 200 && status < 300) resolve();
          else if (status === 408 || status === 429 || status >= 500)
            reject(new RetryableError(`HTTP ${status}`));
          else reject(new Error(`HTTP ${status} (not retried)`));
        };
        res.once('end', done);
        res.once('close', done);
      },
    );
    req.on('timeout', () => req.destroy(new RetryableError(`no answer within ${spec.timeoutMs} ms`)));
    req.on('error', (err) => reject(err instanceof RetryableError ? err : new RetryableError(err.message)));
    req.end(body);
  });
}

/** Creates the webhook output. */
export function createHttpOutput(spec: HttpOutputSpec, options: HttpOutputOptions): AlertOutput {
  const counters = createCounters();
  const random = options.random ?? Math.random;
  const queue: string[] = [];
  let inflight = 0;
  let lastError: string | undefined;
  let sending = false;
  let closed = false;
  let flushTimer: NodeJS.Timeout | undefined;
  let sleepTimer: { timer: NodeJS.Timeout; wake: () => void } | undefined;
  let deadlineAt = Infinity;
  const idle: (() => void)[] = [];

  const sleep = (ms: number): Promise<void> =>
    new Promise((resolve) => {
      const wake = (): void => {
        sleepTimer = undefined;
        resolve();
      };
      sleepTimer = { timer: setTimeout(wake, ms), wake };
      sleepTimer.timer.unref();
    });

  const deliver = async (lines: string[]): Promise<void> => {
    const body = Buffer.from(spec.format === 'ndjson' ? `${lines.join('\n')}\n` : `[${lines.join(',')}]`);
    for (let attempt = 0; ; attempt++) {
      try {
        await post(spec, body);
        counters.sent += lines.length;
        return;
      } catch (err) {
        lastError = messageOf(err);
        const retryable = err instanceof RetryableError;
        if (!retryable || attempt >= spec.retries || Date.now() >= deadlineAt) {
          counters.failed += lines.length;
          options.logger.warn(
            { output: spec.name, alerts: lines.length, attempts: attempt + 1, error: lastError },
            'alert webhook batch failed',
          );
          return;
        }
        counters.retries++;
        await sleep(Math.min(backoffDelay(spec, attempt + 1, random), Math.max(0, deadlineAt - Date.now())));
      }
    }
  };

  const run = async (): Promise<void> => {
    if (sending) return;
    sending = true;
    try {
      while (queue.length > 0) {
        const batch = queue.splice(0, spec.batchSize);
        inflight = batch.length;
        await deliver(batch);
        inflight = 0;
        // A partial batch waits for more alerts (or its flush time), unless the output is closing.
        if (!closed && queue.length > 0 && queue.length < spec.batchSize) {
          arm();
          break;
        }
      }
    } finally {
      sending = false;
      if (queue.length === 0) for (const f of idle.splice(0)) f();
    }
  };

  const arm = (): void => {
    if (flushTimer !== undefined) return;
    flushTimer = setTimeout(() => {
      flushTimer = undefined;
      void run();
    }, spec.flushMs);
    flushTimer.unref();
  };

  return {
    name: spec.name,
    send(_alert, line) {
      if (closed || queue.length >= spec.queueSize) {
        counters.dropped++;
        return;
      }
      queue.push(line);
      if (queue.length >= spec.batchSize && !sending) {
        if (flushTimer) clearTimeout(flushTimer);
        flushTimer = undefined;
        void run();
      } else arm();
    },
    stats: () => ({
      name: spec.name,
      kind: 'http',
      target: spec.display,
      minSeverity: spec.minSeverity,
      ...counters,
      queued: queue.length + inflight,
      ...(lastError !== undefined ? { lastError } : {}),
    }),
    async close(deadlineMs = 5000) {
      closed = true;
      deadlineAt = Date.now() + deadlineMs;
      if (flushTimer) clearTimeout(flushTimer);
      flushTimer = undefined;
      // Cut a backoff short: the last attempt happens now, within the deadline.
      if (sleepTimer) {
        clearTimeout(sleepTimer.timer);
        sleepTimer.wake();
      }
      if (queue.length > 0 || sending) {
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, deadlineMs + 1000);
          timer.unref();
          idle.push(() => {
            clearTimeout(timer);
            resolve();
          });
          void run();
        });
      }
      counters.dropped += queue.splice(0).length;
    },
  };
}
