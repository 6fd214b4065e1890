// JSON lines on standard output, for log collectors reading a container's stdout (Fluent Bit, Vector,
// Promtail). Bounded: when the stream holds more than `maxBufferBytes` unwritten (the reader stopped),
// alerts are dropped and counted rather than buffered without limit.
import type { Writable } from 'node:stream';
import { createCounters, messageOf, type AlertOutput } from './alert-output.js';
import type { StdoutOutputSpec } from './output-spec.js';

/** Creates the stdout output (the stream is injectable for tests). */
export function createStdoutOutput(spec: StdoutOutputSpec, stream: Writable = process.stdout): AlertOutput {
  const counters = createCounters();
  let pending = 0;
  let lastError: string | undefined;
  let closed = false;
  stream.on('error', (err) => {
    lastError = messageOf(err);
  });
  return {
    name: spec.name,
    send(_alert, line) {
      if (closed || stream.writableLength > spec.maxBufferBytes) {
        counters.dropped++;
        return;
      }
      pending++;
      stream.write(`${line}\n`, (err) => {
        pending--;
        if (err) {
          counters.failed++;
          lastError = messageOf(err);
        } else counters.sent++;
      });
    },
    stats: () => ({
      name: spec.name,
      kind: spec.kind,
      target: spec.display,
      minSeverity: spec.minSeverity,
      ...counters,
      queued: pending,
      ...(lastError !== undefined ? { lastError } : {}),
    }),
    async close() {
      closed = true;
      if (pending > 0) await new Promise<void>((resolve) => stream.write('', () => resolve()));
    },
  };
}
