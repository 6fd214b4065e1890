// Prometheus metrics of the enforcer and of the relay (`GET /metrics` on the alert server), on a registry of
// their own. Alerts are counted from the hub's subscription by policy, operation and action; the data plane's
// counters (decisions, cache hits, events reported and dropped, workloads), the alert server's followers,
// the alert log and the outputs are read from their stats at each scrape. Label values are bounded: operations
// and actions come from fixed lists (anything else is `other`), and at most `maxPolicies` policy names get a
// series of their own; alerts of further policies are counted under `policy="_other"` (and in
// rtctl_alert_policy_labels_overflow_total). Nothing is labelled per pid, path, pod or container.
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { Action, Operation } from '../../compiler/ir/rule-set.js';
import type { AlertHub } from '../alerts/alert-hub.js';
import type { AlertServerStats } from '../alerts/alert-server.js';
import type { DataPlaneStats } from '../data-plane.js';
import type { AlertLogStats } from '../io/alert-log.js';
import type { AlertOutputStats } from '../outputs/alert-output.js';

/** Where the metrics come from; each source is optional (the relay has no data plane). */
export interface MetricsSources {
  hub: AlertHub;
  /** `enforcer` or `relay` (the `role` label of rtctl_build_info). */
  role: 'enforcer' | 'relay';
  /** The data plane in use, when known at creation (else setPlane). */
  planeName?: string;
  /** The plane's counters; undefined while no plane runs yet. */
  planeStats?: () => Promise<DataPlaneStats | undefined>;
  serverStats?: () => AlertServerStats | undefined;
  alertLogStats?: () => AlertLogStats | undefined;
  outputStats?: () => AlertOutputStats[];
  /** Distinct policy label values at most (default 500). */
  maxPolicies?: number;
  /** Add the process metrics (CPU, memory, event loop): the real servers do, tests need not. */
  processMetrics?: boolean;
}

/** The metrics of one enforcer or relay. */
export interface EnforcerMetrics {
  registry: Registry;
  /** Names the data plane in use (rtctl_enforcer_data_plane_info). */
  setPlane(name: string): void;
  /** Records one apply of a state to the data plane. */
  observeApply(seconds: number, ok: boolean): void;
  /** The exposition text and its content type (reads every source). */
  render(): Promise<{ contentType: string; body: string }>;
  /** Stops counting alerts. */
  close(): void;
}

/** The label of policies beyond the bound. */
export const OTHER_POLICY = '_other';

const OPERATIONS = new Set<string>(Object.values(Operation));
const ACTIONS = new Set<string>([Action.Block, Action.Audit]);

/** A counter whose value is read from a source at scrape time. */
function mirroredCounter(
  registry: Registry,
  name: string,
  help: string,
): Counter & { mirror(v: number): void } {
  const counter = new Counter({ name, help, registers: [registry] });
  return Object.assign(counter, {
    mirror(v: number) {
      counter.reset();
      if (v > 0) counter.inc(v);
    },
  });
}

/** Creates the metrics and starts counting alerts published on the hub. */
export function createEnforcerMetrics(sources: MetricsSources): EnforcerMetrics {
  const registry = new Registry();
  if (sources.processMetrics === true) collectDefaultMetrics({ register: registry, prefix: 'rtctl_' });
  const maxPolicies = sources.maxPolicies ?? 500;

  new Gauge({
    name: 'rtctl_build_info',
    help: 'Always 1; the role of this process (enforcer or relay)',
    labelNames: ['role'] as const,
    registers: [registry],
  }).set({ role: sources.role }, 1);

  // Alerts are counted per series in a plain map and added to the counter when it is read (collect): a
  // counter's inc hashes its labels, which cost more per alert than the rest of its accounting.
  const alertCounts = new Map<
    string,
    { labels: { policy: string; operation: string; action: string }; n: number }
  >();
  const alerts: Counter<'policy' | 'operation' | 'action'> = new Counter({
    name: 'rtctl_alerts_total',
    help: 'Alerts published (reported decisions), by policy, operation and action (Block: denied, Audit: allowed and reported)',
    labelNames: ['policy', 'operation', 'action'] as const,
    registers: [registry],
    collect() {
      for (const series of alertCounts.values())
        if (series.n > 0) {
          alerts.inc(series.labels, series.n);
          series.n = 0;
        }
    },
  });
  const overflow = new Counter({
    name: 'rtctl_alert_policy_labels_overflow_total',
    help: `Alerts counted under policy="${OTHER_POLICY}" because ${maxPolicies} policy names already had a series`,
    registers: [registry],
  });
  const published = mirroredCounter(
    registry,
    'rtctl_alerts_published_total',
    'Alerts published on the stream since start (hub sequence)',
  );
  const policies = new Set<string>();
  const policyLabel = (name: string): string => {
    if (policies.has(name)) return name;
    if (policies.size < maxPolicies && name.length <= 253) {
      policies.add(name);
      return name;
    }
    overflow.inc();
    return OTHER_POLICY;
  };
  const unsubscribe = sources.hub.subscribe(({ alert }) => {
    const operation =
      typeof alert.Operation === 'string' && OPERATIONS.has(alert.Operation) ? alert.Operation : 'other';
    const action = typeof alert.Action === 'string' && ACTIONS.has(alert.Action) ? alert.Action : 'other';
    const policy = typeof alert.PolicyName === 'string' ? policyLabel(alert.PolicyName) : OTHER_POLICY;
    const key = `${policy}\n${operation}\n${action}`;
    const series = alertCounts.get(key);
    if (series !== undefined) series.n++;
    else alertCounts.set(key, { labels: { policy, operation, action }, n: 1 });
  });

  // Data plane.
  const planeInfo = new Gauge({
    name: 'rtctl_enforcer_data_plane_info',
    help: 'Always 1; the data plane in use',
    labelNames: ['plane'] as const,
    registers: [registry],
  });
  if (sources.planeName !== undefined) planeInfo.set({ plane: sources.planeName }, 1);
  const decisions = mirroredCounter(
    registry,
    'rtctl_enforcer_decisions_total',
    'Permission decisions taken by the data plane (every outcome, allowed ones included)',
  );
  const cacheHits = mirroredCounter(
    registry,
    'rtctl_enforcer_decision_cache_hits_total',
    'Decisions answered from the data plane decision cache',
  );
  const reported = mirroredCounter(
    registry,
    'rtctl_enforcer_events_reported_total',
    'Decision events the data plane reported',
  );
  const dropped = mirroredCounter(
    registry,
    'rtctl_enforcer_events_dropped_total',
    'Decision events the data plane could not report (buffer full, reader gone)',
  );
  const workloads = new Gauge({
    name: 'rtctl_enforcer_workloads',
    help: 'Workloads enforced by the data plane',
    registers: [registry],
  });
  const statsErrors = new Counter({
    name: 'rtctl_enforcer_stats_errors_total',
    help: 'Scrapes at which the data plane did not answer for its counters',
    registers: [registry],
  });
  const apply = new Histogram({
    name: 'rtctl_enforcer_apply_duration_seconds',
    help: 'Time to put a new enforcement state in force in the kernel',
    labelNames: ['result'] as const,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [registry],
  });

  // Alert server.
  const followers = new Gauge({
    name: 'rtctl_alert_followers',
    help: 'Alert streams being followed (/alerts)',
    registers: [registry],
  });
  const connections = new Gauge({
    name: 'rtctl_alert_connections',
    help: 'Open connections of the alert server',
    registers: [registry],
  });
  const endedBehind = mirroredCounter(
    registry,
    'rtctl_alert_followers_ended_behind_total',
    'Followers disconnected for reading too slowly',
  );

  // Alert log.
  const logBytes = new Gauge({
    name: 'rtctl_alert_log_bytes',
    help: 'Size of the alert log file being written',
    registers: [registry],
  });
  const logRotations = mirroredCounter(registry, 'rtctl_alert_log_rotations_total', 'Alert log rotations');
  const logErrors = mirroredCounter(
    registry,
    'rtctl_alert_log_write_errors_total',
    'Alert log batches that could not be written',
  );

  // Outputs.
  const outputAlerts = new Counter({
    name: 'rtctl_alert_output_alerts_total',
    help: 'Alerts handed to each output, by outcome (sent, failed, dropped, filtered)',
    labelNames: ['output', 'kind', 'result'] as const,
    registers: [registry],
  });
  const outputQueued = new Gauge({
    name: 'rtctl_alert_output_queued',
    help: 'Alerts on their way in each output',
    labelNames: ['output', 'kind'] as const,
    registers: [registry],
  });
  const outputRetries = new Counter({
    name: 'rtctl_alert_output_retries_total',
    help: 'Repeated deliveries (HTTP) and reconnections (syslog streams) of each output',
    labelNames: ['output', 'kind'] as const,
    registers: [registry],
  });

  const refresh = async (): Promise<void> => {
    published.mirror(sources.hub.count());
    if (sources.planeStats) {
      try {
        const s = await sources.planeStats();
        if (s !== undefined) {
          decisions.mirror(s.decisions);
          cacheHits.mirror(s.cacheHits);
          reported.mirror(s.reported);
          dropped.mirror(s.dropped);
          workloads.set(s.workloads);
        }
      } catch {
        statsErrors.inc();
      }
    }
    const server = sources.serverStats?.();
    if (server) {
      followers.set(server.streams);
      connections.set(server.connections);
      endedBehind.mirror(server.endedBehind);
    }
    const log = sources.alertLogStats?.();
    if (log) {
      logBytes.set(log.bytes);
      logRotations.mirror(log.rotations);
      logErrors.mirror(log.writeErrors);
    }
    const outputs = sources.outputStats?.() ?? [];
    // Counters mirrored from the outputs' own: reset, then set to their totals.
    outputAlerts.reset();
    outputRetries.reset();
    for (const o of outputs) {
      const labels = { output: o.name, kind: o.kind };
      for (const result of ['sent', 'failed', 'dropped', 'filtered'] as const)
        outputAlerts.inc({ ...labels, result }, o[result]);
      outputQueued.set(labels, o.queued);
      outputRetries.inc(labels, o.retries);
    }
  };

  return {
    registry,
    setPlane(name) {
      planeInfo.reset();
      planeInfo.set({ plane: name }, 1);
    },
    observeApply(seconds, ok) {
      apply.observe({ result: ok ? 'ok' : 'error' }, seconds);
    },
    async render() {
      await refresh();
      return { contentType: registry.contentType, body: await registry.metrics() };
    },
    close: () => void unsubscribe(),
  };
}
