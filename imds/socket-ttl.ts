// Sets the IP TTL (IPv4) or unicast hop limit (IPv6) of one TCP connection through the ip-ttl addon, so a
// token response leaves with TTL = http-put-response-hop-limit. Loading is explicit and reports failure as data.
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { Socket } from 'node:net';
import { locateAddon } from './native/build-addon.js';

/** Sets and reads the TTL of connected sockets. */
export interface SocketTtl {
  /** Sets the TTL of the socket's connection; returns an error message instead of throwing. */
  set(socket: Socket, ttl: number): { ok: true } | { ok: false; error: string };
  /** Reads the TTL of the socket's connection, or undefined when it cannot be read. */
  get(socket: Socket): number | undefined;
}

interface IpTtlAddon {
  setTtl(fd: number, ttl: number): void;
  getTtl(fd: number): number;
}

function isIpTtlAddon(v: unknown): v is IpTtlAddon {
  if (typeof v !== 'object' || v === null) return false;
  const o = v as Record<string, unknown>;
  return typeof o['setTtl'] === 'function' && typeof o['getTtl'] === 'function';
}

/** The file descriptor under a net.Socket (Node exposes it on its TCP handle on Unix). */
function readSocketFd(socket: Socket): number | undefined {
  const handle = (socket as unknown as { _handle?: { fd?: unknown } | null })._handle;
  const fd = handle?.fd;
  return typeof fd === 'number' && fd >= 0 ? fd : undefined;
}

/** Creates a SocketTtl over a loaded addon. */
export function createSocketTtl(addon: IpTtlAddon): SocketTtl {
  return {
    set(socket, ttl) {
      const fd = readSocketFd(socket);
      if (fd === undefined) return { ok: false, error: 'socket has no file descriptor' };
      try {
        addon.setTtl(fd, ttl);
        return { ok: true };
      } catch (err) {
        return { ok: false, error: err instanceof Error ? err.message : String(err) };
      }
    },
    get(socket) {
      const fd = readSocketFd(socket);
      if (fd === undefined) return undefined;
      try {
        return addon.getTtl(fd);
      } catch {
        return undefined;
      }
    },
  };
}

/**
 * Loads the prebuilt addon (`npm run build:native` builds it; nothing is compiled at run time).
 * Returns the SocketTtl or the reason it is unavailable.
 */
export function loadSocketTtl(): { ok: true; ttl: SocketTtl } | { ok: false; error: string } {
  const file = locateAddon();
  if (!existsSync(file))
    return { ok: false, error: `ip-ttl addon not built (${file}); run \`npm run build:native\`` };
  try {
    const loaded: unknown = createRequire(import.meta.url)(file);
    if (!isIpTtlAddon(loaded)) return { ok: false, error: `${file} does not export setTtl/getTtl` };
    return { ok: true, ttl: createSocketTtl(loaded) };
  } catch (err) {
    return { ok: false, error: err instanceof Error ? err.message : String(err) };
  }
}
