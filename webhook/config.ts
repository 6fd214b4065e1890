// The webhook server's configuration, read once from the command line and passed in.
import type { ConnectionLimits } from './connection-guard.js';

/** Everything `rtctl webhook serve` needs. */
export interface WebhookServeConfig {
  certFile: string;
  keyFile: string;
  host: string;
  port: number;
  /** Directory of OPA `*.wasm` policies, if any. */
  policyDir?: string;
  /** After SIGTERM, how long to keep serving with /readyz failing, so the API server stops sending. */
  shutdownDelayMs: number;
  /** After that, how long in-flight requests get before connections are closed. */
  drainTimeoutMs: number;
  /** How often the certificate files are checked for changes. */
  reloadIntervalMs: number;
  /** Connection cap and timeouts; DEFAULT_CONNECTION_LIMITS when absent. */
  connectionLimits?: ConnectionLimits;
}

/** Default listen address: all interfaces, port 8443. */
export const DEFAULT_LISTEN = '0.0.0.0:8443';

/** Parses a non-negative integer flag. */
export function parseMillis(name: string, text: string): number | { error: string } {
  const n = Number(text);
  return /^[0-9]+$/.test(text) && Number.isSafeInteger(n)
    ? n
    : { error: `${name} ${JSON.stringify(text)}: expected milliseconds` };
}
