// The alerts of an alert log from a point in time on, for `/alerts?since=` when the hub no longer holds them:
// read from the end backwards (alert-log-tail.ts), skipping what the hub still holds and stopping at the first
// alert older than the start, within a bound of alerts and bytes read.
import { alertTimeMs } from '../alerts/alert-filter.js';
import type { AlertRecord } from '../alerts/alert-record.js';
import { readAlertLogTail } from './alert-log-tail.js';

/** Where the hub's history begins: alerts at or after it are served from the hub, not the log. */
export interface HistoryBoundary {
  /** Time of the oldest alert the hub holds, ms. */
  timeMs: number;
  /** JSON lines of the held alerts with exactly that time (so one logged in the same ms is not lost). */
  lines: ReadonlySet<string>;
}

/** Bounds of one read. */
export interface AlertLogSinceOptions {
  maxFiles?: number;
  /** Alerts returned at most (default 20 000). */
  maxAlerts?: number;
  /** Bytes read at most (default 64 MiB). */
  maxScanBytes?: number;
}

/** Alerts with time ≥ sinceMs that precede the boundary, oldest first; `truncated` when a bound cut them. */
export function readAlertLogSince(
  path: string,
  sinceMs: number,
  boundary: HistoryBoundary | undefined,
  options: AlertLogSinceOptions = {},
): { alerts: AlertRecord[]; truncated: boolean } {
  const maxAlerts = options.maxAlerts ?? 20000;
  let reachedStart = false;
  const alerts = readAlertLogTail(path, maxAlerts, {
    maxFiles: options.maxFiles ?? 5,
    maxScanBytes: options.maxScanBytes ?? 64 * 1024 * 1024,
    keep: (alert) => {
      const t = alertTimeMs(alert);
      if (!Number.isFinite(t)) return 'skip';
      if (boundary !== undefined) {
        if (t > boundary.timeMs) return 'skip';
        if (t === boundary.timeMs && boundary.lines.has(JSON.stringify(alert))) return 'skip';
      }
      if (t < sinceMs) {
        reachedStart = true;
        return 'stop';
      }
      return 'keep';
    },
  });
  return { alerts, truncated: !reachedStart && alerts.length >= maxAlerts };
}
