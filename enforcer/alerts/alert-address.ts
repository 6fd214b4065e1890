// Where an alert stream is served and reached: a unix socket (the default: access by file permissions) or
// TCP (opt-in, for the relay). Text forms: `unix:/run/rtctl/alerts.sock` or any absolute path for a unix
// socket; `host:port`, `[v6]:port`, a bare port or `http://host:port` for TCP (compiler/net/listen-address.ts).
import { parseListenAddress } from '../../compiler/net/listen-address.js';

/** An alert stream address. */
export type AlertAddress = { kind: 'unix'; path: string } | { kind: 'tcp'; host: string; port: number };

/** Why an address was refused. */
export class AlertAddressError extends Error {}

/** Parses an address; throws AlertAddressError with a message naming what was expected. */
export function parseAlertAddress(text: string): AlertAddress {
  if (text.startsWith('unix:') || text.startsWith('/')) {
    const path = text.startsWith('unix:') ? text.slice('unix:'.length) : text;
    if (!path.startsWith('/')) throw new AlertAddressError(`"${text}": a unix socket needs an absolute path`);
    if (path.includes('\0')) throw new AlertAddressError(`"${text}": a path cannot hold a NUL byte`);
    // sun_path holds 108 bytes with its terminating NUL.
    if (Buffer.byteLength(path) > 107)
      throw new AlertAddressError(`"${text}": a unix socket path is at most 107 bytes`);
    return { kind: 'unix', path };
  }
  const bare = /^https?:\/\//.test(text) ? text.replace(/^https?:\/\//, '').replace(/\/+$/, '') : text;
  const parsed = parseListenAddress(bare, { defaultHost: '127.0.0.1', hostNames: true });
  if (!parsed.ok)
    throw new AlertAddressError(`"${text}" is neither a unix socket path nor host:port (${parsed.error})`);
  return { kind: 'tcp', host: parsed.value.host, port: parsed.value.port };
}

/** The address as text: `unix:<path>` or `http://host:port`. */
export function formatAlertAddress(address: AlertAddress): string {
  if (address.kind === 'unix') return `unix:${address.path}`;
  return `http://${address.host.includes(':') ? `[${address.host}]` : address.host}:${address.port}`;
}

/** Options for node:http requests to a path on this address. */
export function alertRequestOptions(
  address: AlertAddress,
  path: string,
): { socketPath: string; path: string } | { host: string; port: number; path: string } {
  return address.kind === 'unix'
    ? { socketPath: address.path, path }
    : { host: address.host, port: address.port, path };
}
