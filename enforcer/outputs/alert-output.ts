// The contract of an alert output (syslog, HTTP webhook, stdout) and its counters. Every alert handed to an
// output ends in exactly one counter: sent, failed (delivery tried and refused or lost), dropped (the output's
// bounded queue was full, or it was closed with alerts still queued) or filtered (below its minSeverity);
// `queued` is what is still on its way. /status and /metrics show them.
import type { AlertRecord } from '../alerts/alert-record.js';

/** Counters of one output. */
export interface AlertOutputStats {
  name: string;
  kind: string;
  /** The spec, without credentials. */
  target: string;
  minSeverity: number;
  sent: number;
  failed: number;
  dropped: number;
  filtered: number;
  queued: number;
  /** Delivery attempts repeated after a failure (HTTP), reconnections (syslog streams). */
  retries: number;
  /** The last delivery error, if any. */
  lastError?: string;
}

/** One output. */
export interface AlertOutput {
  readonly name: string;
  /** Takes one alert (with its JSON line); never throws, never blocks. */
  send(alert: AlertRecord, line: string): void;
  stats(): AlertOutputStats;
  /** Delivers what is queued within `deadlineMs`, counts the rest as dropped, releases sockets and timers. */
  close(deadlineMs?: number): Promise<void>;
}

/** Mutable counters shared by the implementations. */
export function createCounters(): Omit<
  AlertOutputStats,
  'name' | 'kind' | 'target' | 'minSeverity' | 'queued'
> {
  return { sent: 0, failed: 0, dropped: 0, filtered: 0, retries: 0 };
}

/** A message from anything thrown. */
export function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
