// Subcommands of the status controller component: `rtctl controller run`.
import * as k8s from '@kubernetes/client-node';
import { Command } from 'commander';
import { pino } from 'pino';
import { ControllerConfigError, readControllerConfig, type ControllerFlags } from './config.js';
import { createControllerFeeds, createKubernetesStatusWriter } from './io/kubernetes-controller-io.js';
import { createKubernetesLeaseStore } from './io/kubernetes-lease-store.js';
import { startControllerReplica } from './run-controller.js';

async function runController(flags: ControllerFlags): Promise<void> {
  const config = readControllerConfig(flags);
  const logger = pino({ level: process.env['RTCTL_LOG_LEVEL'] ?? 'info' }, pino.destination(2));
  const kc = new k8s.KubeConfig();
  if (config.kubeconfig !== undefined) kc.loadFromFile(config.kubeconfig);
  else kc.loadFromDefault();
  const le = config.leaderElection;
  const replica = await startControllerReplica({
    feeds: createControllerFeeds(kc, config.namespace, logger),
    writer: createKubernetesStatusWriter(kc),
    logger,
    minWriteIntervalMs: config.minWriteIntervalMs,
    staleAfterMs: config.staleAfterMs,
    pendingGraceMs: config.pendingGraceMs,
    resyncMs: config.resyncMs,
    health: config.healthListen,
    ...(le === undefined
      ? {}
      : {
          election: {
            store: createKubernetesLeaseStore(kc, le.namespace, le.name),
            identity: le.identity,
            leaseDurationMs: le.leaseDurationMs,
            renewDeadlineMs: le.renewDeadlineMs,
            retryPeriodMs: le.retryPeriodMs,
          },
        }),
  });
  logger.info({ health: replica.healthUrl, leaderElection: le !== undefined }, 'controller running');
  await new Promise<void>((resolve) => {
    process.once('SIGTERM', () => resolve());
    process.once('SIGINT', () => resolve());
  });
  await replica.stop();
  logger.info('controller stopped');
}

/** Registers `rtctl controller` on the root program. */
export function registerControllerCommands(program: Command): void {
  const controller = program
    .command('controller')
    .description('Aggregate the node reports of the enforcers into the status of each policy');
  controller
    .command('run')
    .description('Run the status controller (leader-elected when --leader-elect)')
    .option('--kubeconfig <file>', 'kubeconfig (default: in-cluster or $KUBECONFIG)')
    .option(
      '--namespace <ns>',
      'install namespace holding the node reports (default $POD_NAMESPACE or rtctl-system)',
    )
    .option('--leader-elect', 'elect one writing replica with a coordination.k8s.io Lease')
    .option('--lease-namespace <ns>', 'namespace of the Lease (default --namespace)')
    .option('--lease-name <name>', 'name of the Lease', 'rtctl-controller')
    .option('--identity <id>', 'this replica in the Lease (default $POD_NAME or host-pid)')
    .option('--health-listen <address>', '/healthz and /readyz: host:port or a port', '127.0.0.1:8081')
    .option('--lease-duration-ms <ms>', 'a Lease not renewed expires after this', '15000')
    .option('--renew-deadline-ms <ms>', 'a leader that cannot renew for this long steps down', '10000')
    .option('--retry-period-ms <ms>', 'Lease acquisition and renewal period', '2000')
    .option('--min-write-interval-ms <ms>', 'least time between two status writes of one policy', '5000')
    .option('--stale-after-ms <ms>', 'a node report older than this counts as none', '180000')
    .option(
      '--pending-grace-ms <ms>',
      'nodes behind a new generation are pending this long, then stale',
      '60000',
    )
    .option('--resync-ms <ms>', 'recompute every status this often', '30000')
    .action(async (flags: ControllerFlags) => {
      try {
        await runController(flags);
      } catch (err) {
        if (err instanceof ControllerConfigError) {
          process.stderr.write(`rtctl: ${err.message}\n`);
          process.exitCode = 2;
          return;
        }
        throw err;
      }
    });
}
