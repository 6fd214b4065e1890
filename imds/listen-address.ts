// `host:port` listen addresses (`169.254.169.254:80`, `127.0.0.1:9180`, `[::1]:8080`), parsed as data.
import { isIP } from 'node:net';

/** A parsed listen address. */
export interface ListenAddress {
  host: string;
  port: number;
}

/** Parses `host:port`; the host must be an IP literal (IPv6 in brackets), the port 0..65535. */
export function parseListenAddress(
  text: string,
): { ok: true; value: ListenAddress } | { ok: false; error: string } {
  const m = /^(?:\[([^\]]+)\]|([^:[\]]+)):([0-9]{1,5})$/.exec(text);
  if (m === null) return { ok: false, error: `"${text}" is not host:port (IPv6 as [addr]:port)` };
  const host = m[1] ?? m[2] ?? '';
  const port = Number(m[3]);
  if (isIP(host) === 0) return { ok: false, error: `"${host}" is not an IP address` };
  if (m[1] !== undefined && isIP(host) !== 6)
    return { ok: false, error: `"${host}" in brackets must be IPv6` };
  if (port > 65535) return { ok: false, error: `port ${port} is above 65535` };
  return { ok: true, value: { host, port } };
}

/** Formats an address back to `host:port`. */
export function formatListenAddress(address: ListenAddress): string {
  return isIP(address.host) === 6 ? `[${address.host}]:${address.port}` : `${address.host}:${address.port}`;
}
