// Connection accounting of the HTTPS server: a cap on open connections that never locks the API server out.
// When a new connection would pass the cap, the oldest connection that has not finished its TLS handshake is
// closed (a client that connects and never speaks holds nothing for long), and failing that, keep-alive
// connections idle between requests are closed. Node's own `maxConnections` is the hard ceiling above the cap.
import type { Server } from 'node:https';
import type { Socket } from 'node:net';
import type { TLSSocket } from 'node:tls';

/** Connection limits of the server. */
export interface ConnectionLimits {
  /** Open connections kept; above it, the oldest not yet secured (or idle) one is closed for the new one. */
  maxConnections: number;
  /** A TLS handshake must finish within this, ms. */
  handshakeTimeoutMs: number;
  /** Request headers must arrive within this, ms. */
  headersTimeoutMs: number;
  /** A whole request must arrive within this, ms. */
  requestTimeoutMs: number;
  /** A keep-alive connection idle for this long is closed, ms. */
  keepAliveTimeoutMs: number;
  /** Requests served on one connection before it is closed (0: no limit). */
  maxRequestsPerSocket: number;
}

/** Limits that suit the API server (5 s admission timeout by default, keep-alive connections). */
export const DEFAULT_CONNECTION_LIMITS: ConnectionLimits = {
  maxConnections: 1000,
  handshakeTimeoutMs: 5_000,
  headersTimeoutMs: 5_000,
  requestTimeoutMs: 10_000,
  keepAliveTimeoutMs: 30_000,
  maxRequestsPerSocket: 1000,
};

/** What the guard has done, for tests and metrics. */
export interface ConnectionGuard {
  /** Connections open now (TCP level). */
  open(): number;
  /** Connections closed to make room since start. */
  evicted(): number;
}

interface Tracked {
  socket: Socket;
  secured: boolean;
}

function keyOf(address: string | undefined, port: number | undefined): string {
  return `${address ?? ''}|${String(port ?? '')}`;
}

/** Applies the limits to `server` and starts accounting its connections. */
export function guardConnections(server: Server, limits: ConnectionLimits): ConnectionGuard {
  server.headersTimeout = limits.headersTimeoutMs;
  server.requestTimeout = limits.requestTimeoutMs;
  server.keepAliveTimeout = limits.keepAliveTimeoutMs;
  server.maxRequestsPerSocket = limits.maxRequestsPerSocket;
  // The hard ceiling: Node refuses connections above it before any JavaScript runs for them.
  server.maxConnections = limits.maxConnections + Math.max(16, Math.ceil(limits.maxConnections / 8));

  // Insertion order is age order: the first entry is the oldest connection.
  const tracked = new Map<string, Tracked>();
  let evictions = 0;

  const evictOne = (newcomer: Socket): void => {
    for (const [key, t] of tracked) {
      if (!t.secured && t.socket !== newcomer) {
        tracked.delete(key);
        evictions += 1;
        t.socket.destroy();
        return;
      }
    }
    // Every connection is past its handshake: close those idle between requests (Node knows which).
    server.closeIdleConnections();
  };

  server.on('connection', (socket: Socket) => {
    const key = keyOf(socket.remoteAddress, socket.remotePort);
    tracked.set(key, { socket, secured: false });
    socket.once('close', () => {
      if (tracked.get(key)?.socket === socket) tracked.delete(key);
    });
    if (tracked.size > limits.maxConnections) evictOne(socket);
  });
  server.on('secureConnection', (tls: TLSSocket) => {
    const t = tracked.get(keyOf(tls.remoteAddress, tls.remotePort));
    if (t !== undefined) t.secured = true;
  });
  return { open: () => tracked.size, evicted: () => evictions };
}
