// Starts the metadata service: one metadata listener per instance and one management listener. The only
// module here that opens sockets; everything it needs (config, logger, clock, scheduler, TTL setter) is passed in.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger } from 'pino';
import type { Clock } from './clock.js';
import { resolveInstanceListen, type ImdsConfig } from './config.js';
import { createInstanceRegistry, type InstanceRegistry } from './instance-registry.js';
import {
  formatListenAddress,
  parseListenAddress,
  type ListenAddress,
} from '../compiler/net/listen-address.js';
import { createManageApp } from './manage-app.js';
import { createMetadataApp } from './metadata-app.js';
import type { Scheduler } from './scheduler.js';
import type { SocketTtl } from './socket-ttl.js';

/** A running service. */
export interface RunningImds {
  registry: InstanceRegistry;
  /** Bound metadata addresses by instance id (ports resolved when 0 was asked for). */
  metadata: Map<string, ListenAddress>;
  manage: ListenAddress;
  close(): Promise<void>;
}

/** What `startImds` needs. */
export interface StartImdsDeps {
  config: ImdsConfig;
  logger: Logger;
  clock: Clock;
  scheduler: Scheduler;
  socketTtl: SocketTtl | undefined;
  /** The management token (cli.ts generates it and writes it 0600 before starting). */
  manageToken: string;
}

function listen(server: Server, address: ListenAddress): Promise<ListenAddress> {
  return new Promise((resolve, reject) => {
    const onError = (err: Error) => reject(err);
    server.once('error', onError);
    server.listen(address.port, address.host, () => {
      server.off('error', onError);
      const bound = server.address() as AddressInfo;
      resolve({ host: address.host, port: bound.port });
    });
  });
}

function closeServer(server: Server): Promise<void> {
  return new Promise((resolve) => {
    if (!server.listening) return resolve();
    server.close(() => resolve());
    server.closeAllConnections();
  });
}

function requireAddress(text: string, what: string): ListenAddress {
  const parsed = parseListenAddress(text);
  if (!parsed.ok) throw new Error(`${what}: ${parsed.error}`);
  return parsed.value;
}

/** Creates an HTTP server that survives bad clients: parse errors answer 400 and close that connection only. */
function createHardenedServer(handler: Parameters<typeof createServer>[1], logger: Logger): Server {
  const server = createServer(
    { requestTimeout: 30000, headersTimeout: 10000, maxHeaderSize: 16384 },
    handler,
  );
  server.on('clientError', (err: NodeJS.ErrnoException, socket) => {
    logger.debug({ code: err.code }, 'client error');
    if (socket.writable)
      socket.end('HTTP/1.1 400 Bad Request\r\nConnection: close\r\nContent-Length: 0\r\n\r\n');
    else socket.destroy();
  });
  return server;
}

/** Starts every listener; on failure closes what was opened and rejects. */
export async function startImds(deps: StartImdsDeps): Promise<RunningImds> {
  const { config, logger } = deps;
  const registry = createInstanceRegistry({ config, clock: deps.clock, scheduler: deps.scheduler });
  const servers: Server[] = [];
  const metadata = new Map<string, ListenAddress>();
  const close = async () => {
    registry.close();
    await Promise.all(servers.map(closeServer));
  };
  try {
    for (const [i, instanceConfig] of config.instances.entries()) {
      const record = registry.get(instanceConfig.instanceId);
      const text = resolveInstanceListen(config, i);
      if (record === undefined || text === undefined) throw new Error(`instance ${i} has no listen address`);
      const app = createMetadataApp({ instance: record, logger, socketTtl: deps.socketTtl });
      const server = createHardenedServer(app, logger);
      servers.push(server);
      const bound = await listen(server, requireAddress(text, `instances[${i}].listen`));
      metadata.set(instanceConfig.instanceId, bound);
      logger.info(
        { instanceId: instanceConfig.instanceId, address: formatListenAddress(bound) },
        'metadata listening',
      );
    }
    const manageServer = createHardenedServer(
      createManageApp({ registry, logger, manageToken: deps.manageToken }),
      logger,
    );
    servers.push(manageServer);
    const manage = await listen(manageServer, requireAddress(config.manageListen, 'manageListen'));
    for (const bound of metadata.values()) {
      if (bound.host === manage.host && bound.port === manage.port)
        throw new Error('management and metadata share a port');
    }
    logger.info({ address: formatListenAddress(manage) }, 'management listening');
    return { registry, metadata, manage, close };
  } catch (err) {
    await close();
    throw err;
  }
}
