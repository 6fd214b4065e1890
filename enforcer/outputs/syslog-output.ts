// RFC 5424 syslog output over UDP (one datagram per alert, RFC 5426), TCP or a unix stream socket (frames
// counted by octets, RFC 6587). The stream transports keep a bounded queue of frames while disconnected and
// reconnect with exponential backoff and jitter; a full queue drops the new alert (counted). Frames the
// kernel refused, or that a broken connection lost before they were written, are counted as failed.
import { createSocket, type Socket as DgramSocket } from 'node:dgram';
import { connect, isIPv6, type Socket } from 'node:net';
import type { Logger } from 'pino';
import { createCounters, messageOf, type AlertOutput } from './alert-output.js';
import type { SyslogOutputSpec } from './output-spec.js';
import { formatSyslogMessage, frameOctetCounted } from './syslog-message.js';

/** Largest UDP payload (IPv4). */
const MAX_DATAGRAM = 65507;
/** A stream is not written while its socket buffer holds this many bytes. */
const STREAM_BUFFER_BYTES = 256 * 1024;
const RECONNECT_MIN_MS = 100;
const RECONNECT_MAX_MS = 30_000;

/** Options besides the spec. */
export interface SyslogOutputOptions {
  logger: Logger;
  /** PROCID of the messages (default: this process's id). */
  procId?: number;
}

/** Creates a syslog output and starts connecting (stream transports). */
export function createSyslogOutput(spec: SyslogOutputSpec, options: SyslogOutputOptions): AlertOutput {
  const counters = createCounters();
  const messageOptions = {
    facility: spec.facility,
    appName: spec.appName,
    format: spec.format,
    procId: options.procId ?? process.pid,
  };
  let lastError: string | undefined;
  let inflight = 0;
  let closed = false;
  const idle: (() => void)[] = [];
  const settle = (): void => {
    if (inflight === 0 && queue.length === 0) for (const f of idle.splice(0)) f();
  };
  const fail = (err: unknown): void => {
    counters.failed++;
    lastError = messageOf(err);
  };
  const queue: Buffer[] = [];

  // --- UDP
  let dgram: DgramSocket | undefined;
  if (spec.transport === 'udp') {
    dgram = createSocket(isIPv6(spec.host) ? 'udp6' : 'udp4');
    dgram.on('error', (err) => {
      lastError = messageOf(err);
    });
    dgram.unref();
  }

  // --- TCP and unix stream
  let socket: Socket | undefined;
  let connected = false;
  let attempt = 0;
  let reconnectTimer: NodeJS.Timeout | undefined;
  const pump = (): void => {
    while (socket && connected && queue.length > 0 && socket.writableLength < STREAM_BUFFER_BYTES) {
      const frame = queue.shift();
      if (frame === undefined) break;
      inflight++;
      socket.write(frame, (err) => {
        inflight--;
        if (err) fail(err);
        else counters.sent++;
        settle();
      });
    }
    settle();
  };
  const scheduleReconnect = (): void => {
    if (closed || reconnectTimer !== undefined) return;
    const base = Math.min(RECONNECT_MAX_MS, RECONNECT_MIN_MS * 2 ** Math.min(attempt, 16));
    attempt++;
    counters.retries++;
    reconnectTimer = setTimeout(
      () => {
        reconnectTimer = undefined;
        open();
      },
      base / 2 + Math.random() * (base / 2),
    );
    reconnectTimer.unref();
  };
  const open = (): void => {
    if (closed) return;
    const s =
      spec.transport === 'unix'
        ? connect({ path: spec.path })
        : connect({ host: spec.host, port: spec.port });
    socket = s;
    s.unref();
    s.setNoDelay(true);
    s.on('connect', () => {
      connected = true;
      attempt = 0;
      pump();
    });
    s.on('drain', pump);
    // A syslog receiver sends nothing: read and discard, so a chatty peer cannot fill our buffers.
    s.on('data', () => undefined);
    s.on('error', (err) => {
      lastError = messageOf(err);
    });
    s.on('close', () => {
      if (socket === s) {
        socket = undefined;
        connected = false;
      }
      if (!closed) {
        options.logger.warn(
          { output: spec.name, error: lastError },
          'syslog output disconnected; reconnecting',
        );
        scheduleReconnect();
      }
      settle();
    });
  };
  if (spec.transport !== 'udp') open();

  return {
    name: spec.name,
    send(alert) {
      if (closed) {
        counters.dropped++;
        return;
      }
      const message = formatSyslogMessage(alert, messageOptions);
      if (dgram) {
        const body = Buffer.from(message, 'utf8');
        if (body.length > MAX_DATAGRAM) {
          fail(new Error(`a message of ${body.length} bytes does not fit in one UDP datagram`));
          return;
        }
        inflight++;
        dgram.send(body, spec.port, spec.host, (err) => {
          inflight--;
          if (err) fail(err);
          else counters.sent++;
          settle();
        });
        return;
      }
      if (queue.length >= spec.queueSize) {
        counters.dropped++;
        return;
      }
      queue.push(frameOctetCounted(message));
      pump();
    },
    stats: () => ({
      name: spec.name,
      kind: `syslog+${spec.transport}`,
      target: spec.display,
      minSeverity: spec.minSeverity,
      ...counters,
      queued: queue.length + inflight,
      ...(lastError !== undefined ? { lastError } : {}),
    }),
    async close(deadlineMs = 5000) {
      if (inflight > 0 || queue.length > 0) {
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, deadlineMs);
          timer.unref();
          idle.push(() => {
            clearTimeout(timer);
            resolve();
          });
        });
      }
      closed = true;
      if (reconnectTimer) clearTimeout(reconnectTimer);
      counters.dropped += queue.splice(0).length;
      if (socket) {
        const s = socket;
        await new Promise<void>((resolve) => {
          s.once('close', () => resolve());
          s.end();
          setTimeout(() => s.destroy(), 1000).unref();
        });
      }
      dgram?.close();
    },
  };
}
