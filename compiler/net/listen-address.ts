// The one parser of listen addresses for every server CLI (enforcer alert stream, relay, webhook, IMDS):
// `host:port` (`127.0.0.1:9180`), `[v6]:port` (`[::1]:8080`), a bare port when the caller has a default host,
// and `unix:/absolute/path` where the caller accepts unix sockets. Parsed as data: a bad address is an error
// value naming what was expected. It lives under compiler/ because that is the one package every component
// already imports; it imports nothing of the compiler.
import { isIP } from 'node:net';

/** A TCP listen address. */
export interface ListenAddress {
  host: string;
  port: number;
}

/** A unix socket path (absolute). */
export interface UnixSocketAddress {
  path: string;
}

/** A TCP address or a unix socket. */
export type SocketAddress = ListenAddress | UnixSocketAddress;

/** The result of parsing: the address, or what is wrong with the text. */
export type ParsedAddress<T> = { ok: true; value: T } | { ok: false; error: string };

/** How strict the host part is. */
export interface ListenAddressOptions {
  /** When set, a bare port (`4280`) listens on this host. */
  defaultHost?: string;
  /** Accept host names (`localhost:4280`) besides IP literals. */
  hostNames?: boolean;
}

/** The prefix of unix socket addresses. */
export const UNIX_PREFIX = 'unix:';

const HOST_NAME =
  /^(?=.{1,253}$)[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$/;

/** Parses a TCP listen address. */
export function parseListenAddress(
  text: string,
  options: ListenAddressOptions = {},
): ParsedAddress<ListenAddress> {
  if (options.defaultHost !== undefined && /^[0-9]{1,5}$/.test(text)) {
    return checkPort({ host: options.defaultHost, port: Number(text) });
  }
  const m = /^(?:\[([^\]]+)\]|([^:[\]]+)):([0-9]{1,5})$/.exec(text);
  if (m === null) {
    const forms = options.defaultHost === undefined ? 'host:port' : 'host:port or a port';
    return { ok: false, error: `"${text}" is not ${forms} (IPv6 as [addr]:port)` };
  }
  const host = m[1] ?? m[2] ?? '';
  if (isIP(host) === 0 && !(options.hostNames === true && m[1] === undefined && HOST_NAME.test(host))) {
    return { ok: false, error: `"${host}" is not an IP address` };
  }
  if (m[1] !== undefined && isIP(host) !== 6)
    return { ok: false, error: `"${host}" in brackets must be IPv6` };
  return checkPort({ host, port: Number(m[3]) });
}

function checkPort(address: ListenAddress): ParsedAddress<ListenAddress> {
  if (address.port > 65535) return { ok: false, error: `port ${address.port} is above 65535` };
  return { ok: true, value: address };
}

/** Parses a TCP listen address or `unix:/absolute/path`. */
export function parseSocketAddress(
  text: string,
  options: ListenAddressOptions = {},
): ParsedAddress<SocketAddress> {
  if (!text.startsWith(UNIX_PREFIX)) return parseListenAddress(text, options);
  const path = text.slice(UNIX_PREFIX.length);
  if (!path.startsWith('/')) return { ok: false, error: `"${text}": a unix socket path must be absolute` };
  if (path.includes('\0')) return { ok: false, error: 'a unix socket path cannot contain a NUL byte' };
  // sockaddr_un holds 108 bytes with the terminating NUL.
  if (Buffer.byteLength(path) > 107) return { ok: false, error: `unix socket path longer than 107 bytes` };
  return { ok: true, value: { path } };
}

/** True for a unix socket address. */
export function isUnixSocketAddress(address: SocketAddress): address is UnixSocketAddress {
  return 'path' in address;
}

/** Formats an address back to its text (`host:port`, `[v6]:port`, `unix:/path`). */
export function formatListenAddress(address: SocketAddress): string {
  if (isUnixSocketAddress(address)) return `${UNIX_PREFIX}${address.path}`;
  return isIP(address.host) === 6 ? `[${address.host}]:${address.port}` : `${address.host}:${address.port}`;
}
