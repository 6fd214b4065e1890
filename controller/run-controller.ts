// One controller replica: the status controller's caches, leader election (when asked) deciding whether this
// replica writes, and a health endpoint (/healthz: the process answers; /readyz: the caches are filled).
import { createServer, type Server } from 'node:http';
import type { Logger } from 'pino';
import type { ListenAddress } from '../compiler/net/listen-address.js';
import { startLeaderElection, type LeaderElection, type LeaseStore } from './leader-election.js';
import {
  createStatusController,
  type StatusController,
  type StatusControllerOptions,
} from './status-controller.js';

/** Options of a replica. */
export interface ControllerReplicaOptions extends StatusControllerOptions {
  /** Leader election; without it this replica always writes. */
  election?: {
    store: LeaseStore;
    identity: string;
    leaseDurationMs: number;
    renewDeadlineMs: number;
    retryPeriodMs: number;
  };
  health?: ListenAddress;
  logger: Logger;
}

/** A running replica. */
export interface ControllerReplica {
  controller: StatusController;
  isLeader(): boolean;
  /** The health server's URL, when one was asked for. */
  healthUrl?: string;
  stop(): Promise<void>;
}

/** Starts a replica: caches first, then the election. */
export async function startControllerReplica(options: ControllerReplicaOptions): Promise<ControllerReplica> {
  const { logger } = options;
  const controller = createStatusController(options);
  let ready = false;
  let server: Server | undefined;
  let healthUrl: string | undefined;
  if (options.health !== undefined) {
    const s = createServer((req, res) => {
      const path = (req.url ?? '/').split('?')[0];
      if (path === '/healthz') res.writeHead(200, { 'content-type': 'text/plain' }).end('ok\n');
      else if (path === '/readyz')
        res.writeHead(ready ? 200 : 503, { 'content-type': 'text/plain' }).end(ready ? 'ok\n' : 'starting\n');
      else res.writeHead(404, { 'content-type': 'text/plain' }).end('not found\n');
    });
    s.headersTimeout = 10000;
    s.requestTimeout = 10000;
    s.keepAliveTimeout = 5000;
    const { host, port } = options.health;
    await new Promise<void>((resolve, reject) => {
      s.once('error', reject);
      s.listen(port, host, () => resolve());
    });
    server = s;
    const address = s.address();
    const bound = typeof address === 'object' && address !== null ? address.port : port;
    healthUrl = `http://${host.includes(':') ? `[${host}]` : host}:${bound}`;
  }
  let election: LeaderElection | undefined;
  try {
    await controller.start();
    ready = true;
    if (options.election === undefined) controller.setLeader(true);
    else
      election = startLeaderElection({
        ...options.election,
        logger,
        onStartedLeading: () => controller.setLeader(true),
        onStoppedLeading: () => controller.setLeader(false),
      });
  } catch (err) {
    await controller.stop().catch(() => undefined);
    server?.close();
    throw err;
  }
  return {
    controller,
    isLeader: () => (election === undefined ? true : election.isLeader()),
    ...(healthUrl === undefined ? {} : { healthUrl }),
    async stop() {
      await election?.stop();
      controller.setLeader(false);
      await controller.stop();
      if (server) {
        server.closeAllConnections();
        await new Promise<void>((resolve) => server?.close(() => resolve()));
      }
    },
  };
}
