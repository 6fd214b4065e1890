// Keeps this node's report ConfigMap current with bounded writes: a write only when the content changes
// (updatedAt aside), at most one per `minIntervalMs` (changes in between are coalesced into the next write),
// and a heartbeat write every `heartbeatMs` so a silent node is told from an unchanged one. A failed write is
// retried on the same schedule. The writer is the narrow interface to the API server (node-status-writer.ts).
import type { Logger } from 'pino';
import {
  NODE_STATUS_VERSION,
  formatNodeStatusReport,
  type NodePolicyReport,
  type NodeStatusReport,
} from '../../compiler/model/node-status.js';
import type { NodeStatusWriter } from './node-status-writer.js';

/** Options of the reporter. */
export interface NodeReporterOptions {
  writer: NodeStatusWriter;
  node: string;
  plane: string;
  rtctlVersion: string;
  logger: Logger;
  /** Least time between two writes (default 5 s). */
  minIntervalMs?: number;
  /** A write at least this often, changed or not (default 60 s). */
  heartbeatMs?: number;
  /** The clock (tests). */
  now?: () => number;
}

/** The reporter. */
export interface NodeReporter {
  /** The node's policies now (call as often as wanted: unchanged content writes nothing). */
  update(policies: readonly NodePolicyReport[]): void;
  /** Marks the node released (its report says so, with no policies) and writes it at once. */
  release(): Promise<void>;
  /** Writes what is pending now, without waiting for the interval (tests, shutdown). */
  flush(): Promise<void>;
  /** Writes issued so far. */
  writes(): number;
  /** True while the content differs from what was last written (a write is due). */
  pending(): boolean;
  stop(): void;
}

/** Starts the reporter (the first write happens on the first update). */
export function createNodeReporter(options: NodeReporterOptions): NodeReporter {
  const minInterval = options.minIntervalMs ?? 5000;
  const heartbeat = options.heartbeatMs ?? 60000;
  const now = options.now ?? Date.now;
  let policies: readonly NodePolicyReport[] | undefined;
  let released = false;
  /** Content of the last successful write, updatedAt left out. */
  let written: string | undefined;
  let lastWriteAt = -Infinity;
  let timer: NodeJS.Timeout | undefined;
  let inFlight: Promise<void> | undefined;
  let count = 0;
  let stopped = false;

  const report = (): NodeStatusReport => ({
    version: NODE_STATUS_VERSION,
    node: options.node,
    plane: options.plane,
    rtctlVersion: options.rtctlVersion,
    updatedAt: new Date(now()).toISOString(),
    released,
    policies: released ? [] : [...(policies ?? [])],
  });
  const contentOf = (r: NodeStatusReport): string => formatNodeStatusReport({ ...r, updatedAt: '' });

  const writeNow = async (force: boolean): Promise<void> => {
    if (policies === undefined && !released) return;
    const r = report();
    const content = contentOf(r);
    // A change that was undone before its turn came needs no write until the heartbeat.
    if (!force && content === written && now() - lastWriteAt < heartbeat) return;
    lastWriteAt = now();
    count++;
    try {
      await options.writer.write(r);
      written = content;
    } catch (err) {
      options.logger.warn({ err }, 'cannot write the node status report; retrying');
    }
  };

  const schedule = (): void => {
    if (stopped) return;
    if (timer) clearTimeout(timer);
    const current = policies === undefined && !released ? undefined : contentOf(report());
    const dirty = current !== undefined && current !== written;
    const due = dirty ? lastWriteAt + minInterval : lastWriteAt + heartbeat;
    timer = setTimeout(
      () => {
        timer = undefined;
        const run = (inFlight ?? Promise.resolve()).then(() => writeNow(false));
        inFlight = run.finally(() => {
          if (inFlight === run) inFlight = undefined;
          schedule();
        });
      },
      Math.max(0, due - now()),
    );
    timer.unref();
  };

  return {
    update(next) {
      if (released || stopped) return;
      policies = next;
      // A timer already set for a change keeps its time (coalescing); a heartbeat timer is moved earlier.
      schedule();
    },
    async release() {
      released = true;
      await inFlight;
      await writeNow(true);
      schedule();
    },
    async flush() {
      await inFlight;
      if (timer) clearTimeout(timer);
      await writeNow(true);
      schedule();
    },
    writes: () => count,
    pending: () => (policies !== undefined || released) && contentOf(report()) !== written,
    stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
    },
  };
}
