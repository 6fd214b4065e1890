// The alert outputs of one enforcer (`--alert-output`, repeatable): created from parsed specs, fed from the
// hub's subscription (every alert published after start; alerts replayed from the log on start are not sent
// again), each behind its own minimum-severity filter. Filtered alerts are counted per output.
import type { Logger } from 'pino';
import type { AlertHub } from '../alerts/alert-hub.js';
import { meetsMinSeverity } from '../alerts/alert-filter.js';
import type { AlertRecord } from '../alerts/alert-record.js';
import type { AlertOutput, AlertOutputStats } from './alert-output.js';
import { createHttpOutput } from './http-output.js';
import { OutputKind, type OutputSpec } from './output-spec.js';
import { createStdoutOutput } from './stdout-output.js';
import { createSyslogOutput } from './syslog-output.js';

/** The running outputs. */
export interface AlertOutputs {
  /** Hands one alert to every output whose filter it passes. */
  send(alert: AlertRecord, line: string): void;
  stats(): AlertOutputStats[];
  /** Stops taking alerts, delivers what is queued within the deadline, closes every output. */
  close(deadlineMs?: number): Promise<void>;
}

/** True when the alert reaches an output with this minimum severity (a non-numeric severity always does). */
export function passesMinSeverity(alert: Pick<AlertRecord, 'Severity'>, minSeverity: number): boolean {
  return meetsMinSeverity(alert, minSeverity);
}

/** Creates one output from its spec. */
export function createAlertOutput(spec: OutputSpec, logger: Logger): AlertOutput {
  switch (spec.kind) {
    case OutputKind.Stdout:
      return createStdoutOutput(spec);
    case OutputKind.Syslog:
      return createSyslogOutput(spec, { logger });
    case OutputKind.Http:
      return createHttpOutput(spec, { logger });
  }
}

/** Wires outputs to a hub (or, without one, to explicit send calls). */
export function createAlertOutputs(
  entries: readonly { spec: OutputSpec; output: AlertOutput }[],
  hub?: AlertHub,
): AlertOutputs {
  const filtered = entries.map(() => 0);
  const send = (alert: AlertRecord, line: string): void => {
    entries.forEach(({ spec, output }, i) => {
      if (passesMinSeverity(alert, spec.minSeverity)) output.send(alert, line);
      else filtered[i] = (filtered[i] ?? 0) + 1;
    });
  };
  const unsubscribe = hub?.subscribe((item) => send(item.alert, item.line));
  return {
    send,
    stats: () => entries.map(({ output }, i) => ({ ...output.stats(), filtered: filtered[i] ?? 0 })),
    async close(deadlineMs) {
      unsubscribe?.();
      await Promise.all(entries.map(({ output }) => output.close(deadlineMs)));
    },
  };
}
