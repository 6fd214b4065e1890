// The enforcer's side of policy status in Kubernetes mode: after every reconcile, the node's report (what each
// policy selects here, whether the plane has it in force, the rules the plane cannot enforce) goes to the
// reporter (bounded writes); when `rtctl uninstall` asks for release, the data plane is released and the
// report says so.
import type { UnavailableForms } from '../../compiler/enforcement/summarize-enforcement.js';
import type { Logger } from 'pino';
import type { EnforcementTarget } from '../../compiler/enforcement/enforcement-table.js';
import type { NodePolicyReport } from '../../compiler/model/node-status.js';
import type { NodeState } from '../node-state.js';
import type { PolicySnapshot } from '../policy-source.js';
import { buildPolicyReports } from './build-node-report.js';
import { createNodeReporter, type NodeReporter } from './node-reporter.js';
import type { NodeStatusWriter, ReleaseWatch } from './node-status-writer.js';

/** Options of the node status reporting. */
export interface NodeStatusReportingOptions {
  writer: NodeStatusWriter;
  releaseWatch: ReleaseWatch;
  node: string;
  /** Data plane name (the report's `plane`). */
  plane: string;
  target: EnforcementTarget;
  /** What the running plane has off although the table says enforced (DataPlane.unavailableForms). */
  unavailable?: UnavailableForms;
  rtctlVersion: string;
  logger: Logger;
  minIntervalMs?: number;
  heartbeatMs?: number;
}

/** The reporting, wired to an enforcer by onStateApplied and start(). */
export interface NodeStatusReporting {
  /** Pass as the enforcer's onStateApplied. */
  onStateApplied: (snapshot: PolicySnapshot, state: NodeState) => void;
  /** Watches for the release request; `release` releases the enforcer's data plane. */
  start(release: () => Promise<void>): Promise<void>;
  /** Resolves once a release request has been carried out and reported. */
  released(): Promise<void>;
  reporter: NodeReporter;
  stop(): Promise<void>;
}

/** Creates the reporting. */
export function createNodeStatusReporting(options: NodeStatusReportingOptions): NodeStatusReporting {
  const { logger } = options;
  const reporter = createNodeReporter({
    writer: options.writer,
    node: options.node,
    plane: options.plane,
    rtctlVersion: options.rtctlVersion,
    logger,
    ...(options.minIntervalMs === undefined ? {} : { minIntervalMs: options.minIntervalMs }),
    ...(options.heartbeatMs === undefined ? {} : { heartbeatMs: options.heartbeatMs }),
  });
  /** The entries of the last snapshot object seen (a snapshot is immutable once built). */
  let last: { snapshot: PolicySnapshot; state: NodeState; entries: NodePolicyReport[] } | undefined;
  let done: () => void = () => undefined;
  const releasedP = new Promise<void>((resolve) => (done = resolve));
  return {
    onStateApplied: (snapshot, state) => {
      try {
        if (last?.snapshot !== snapshot || last.state !== state)
          last = {
            snapshot,
            state,
            entries: buildPolicyReports(snapshot, state, options.target, options.unavailable),
          };
        reporter.update(last.entries);
      } catch (err) {
        logger.error({ err }, 'cannot build the node status report');
      }
    },
    async start(release) {
      await options.releaseWatch.start(() => {
        logger.info('release requested (rtctl uninstall): releasing the data plane');
        release()
          .then(() => reporter.release())
          .then(done)
          .catch((err: unknown) => logger.error({ err }, 'release failed'));
      });
    },
    released: () => releasedP,
    reporter,
    async stop() {
      reporter.stop();
      await options.releaseWatch.stop();
    },
  };
}
