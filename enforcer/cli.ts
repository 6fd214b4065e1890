// Subcommands of the enforcer component: `rtctl enforcer run|relay|status`, `rtctl logs`, `rtctl probe`.
import { Command, Option } from 'commander';
import { get } from 'node:http';
import { mkdirSync } from 'node:fs';
import { pino, type Logger } from 'pino';
import * as k8s from '@kubernetes/client-node';
import {
  ConfigError,
  parseListen,
  readEnforcerConfig,
  type EnforcerConfig,
  type EnforcerFlags,
} from './config.js';
import { DATA_PLANES, findDataPlane } from './data-planes.js';
import { createEnforcer } from './enforcer.js';
import { findEnforcementTarget } from '../compiler/enforcement/enforcement-table.js';
import { createAlertHub } from './alerts/alert-hub.js';
import { matchesAlertFilter, type AlertFilter } from './alerts/alert-filter.js';
import { startAlertServer } from './alerts/alert-server.js';
import { followAlerts } from './alerts/follow-alerts.js';
import { formatAlert } from './alerts/format-alert.js';
import { createContainerdLister } from './io/containerd-workloads.js';
import { createDirectoryPolicySource } from './io/directory-policy-source.js';
import { createInformerFeeds } from './io/kubernetes-informer-feeds.js';
import { createKubernetesPolicySource } from './kubernetes/kubernetes-policy-source.js';
import {
  RuleTableLoadError,
  createRuleTablePolicySource,
  readRuleTableSnapshot,
} from './io/rule-table-policy-source.js';
import type { PolicySnapshot, PolicySource } from './policy-source.js';
import { formatProbeReport, probeKernel } from './probe.js';

/** Default address of the alert stream. */
export const DEFAULT_ALERT_ADDRESS = '127.0.0.1:4280';

const collect = (value: string, previous: string[]): string[] => [...previous, value];

function createLogger(): Logger {
  return pino({ level: process.env['RTCTL_LOG_LEVEL'] ?? 'info' }, pino.destination(2));
}

async function chooseDataPlane(name: string, logger: Logger): Promise<string> {
  if (name !== 'auto') {
    if (findDataPlane(name) === undefined) {
      throw new ConfigError(
        `--data-plane: unknown "${name}" (known: auto, ${DATA_PLANES.map((p) => p.name).join(', ')})`,
      );
    }
    return name;
  }
  const report = await probeKernel();
  for (const p of DATA_PLANES) {
    if (report.checks.some((c) => c.name === p.probe && c.supported)) {
      logger.info({ dataPlane: p.name }, 'data plane chosen by trial');
      return p.name;
    }
  }
  throw new ConfigError('no data plane works on this kernel (see rtctl probe)');
}

function createSource(config: EnforcerConfig, logger: Logger, preloaded?: PolicySnapshot): PolicySource {
  if (config.source.kind === 'directory')
    return createDirectoryPolicySource({ dir: config.source.dir, logger });
  if (config.source.kind === 'rule-table')
    return createRuleTablePolicySource({
      file: config.source.file,
      logger,
      ...(preloaded !== undefined ? { initial: preloaded } : {}),
    });
  const kc = new k8s.KubeConfig();
  if (config.source.kubeconfig) kc.loadFromFile(config.source.kubeconfig);
  else kc.loadFromDefault();
  return createKubernetesPolicySource({
    feeds: createInformerFeeds(kc, config.nodeName, logger),
    nodeName: config.nodeName,
    logger,
  });
}

async function runEnforcer(flags: EnforcerFlags): Promise<void> {
  const config = readEnforcerConfig(flags);
  const logger = createLogger();
  // A compiled table is validated before any data plane starts: a bad table leaves nothing running.
  const preloaded =
    config.source.kind === 'rule-table' ? await readRuleTableSnapshot(config.source.file) : undefined;
  mkdirSync(config.stateDir, { recursive: true });
  const planeName = await chooseDataPlane(config.dataPlane, logger);
  const factory = findDataPlane(planeName);
  if (factory === undefined) throw new ConfigError(`unknown data plane ${planeName}`);
  const plane = await factory.create({ stateDir: config.stateDir, logger });
  const enforcementTarget = findEnforcementTarget(planeName);
  if (enforcementTarget === undefined)
    throw new Error(`data plane ${planeName} has no enforcement table column`);
  const hub = createAlertHub();
  const enforcer = createEnforcer({
    source: createSource(config, logger, preloaded),
    containers: createContainerdLister({
      socket: config.containerdSocket,
      namespace: config.containerdNamespace,
      logger,
    }),
    plane,
    enforcementTarget,
    hub,
    clusterName: config.clusterName,
    nodeName: config.nodeName,
    nodeLabels: config.nodeLabels,
    pollMs: config.pollMs,
    logger,
    ...(config.alertLog !== undefined ? { alertLog: config.alertLog } : {}),
  });
  await enforcer.start();
  const server = await startAlertServer({
    hub,
    host: config.listenHost,
    port: config.listenPort,
    logger,
    status: () => enforcer.status(),
  });
  logger.info({ url: server.url, dataPlane: plane.name }, 'enforcer running; alert stream at /alerts');
  process.stdout.write(`alerts: ${server.url}/alerts\n`);
  await new Promise<void>((resolve) => {
    const stop = (): void => resolve();
    process.once('SIGTERM', stop);
    process.once('SIGINT', stop);
  });
  await server.close();
  await enforcer.stop({ keepEnforcing: !config.releaseOnExit });
  logger.info({ released: config.releaseOnExit }, 'enforcer stopped');
}

/** `rtctl enforcer stop`: attaches to what the data plane left in force (pins, helper) and releases it. */
async function releaseDataPlane(flags: { dataPlane: string; stateDir: string }): Promise<void> {
  const logger = createLogger();
  mkdirSync(flags.stateDir, { recursive: true });
  const name = await chooseDataPlane(flags.dataPlane, logger);
  const factory = findDataPlane(name);
  if (factory === undefined) throw new ConfigError(`unknown data plane ${name}`);
  const plane = await factory.create({ stateDir: flags.stateDir, logger });
  await plane.start();
  await plane.stop({ keepEnforcing: false });
  process.stdout.write(`released the ${name} data plane\n`);
}

function toUrl(address: string): string {
  if (/^https?:\/\//.test(address)) return address.replace(/\/+$/, '');
  const { host, port } = parseListen(address);
  return `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
}

interface LogsFlags {
  namespace?: string;
  json?: boolean;
  operation: string[];
  pod: string[];
  container: string[];
  server: string[];
  follow: boolean;
  limit?: string;
}

async function runLogs(flags: LogsFlags): Promise<void> {
  const filter: AlertFilter = { operations: flags.operation, pods: flags.pod, containers: flags.container };
  if (flags.namespace !== undefined) filter.namespace = flags.namespace;
  const limit = flags.limit !== undefined ? Number(flags.limit) : Infinity;
  if (!(limit > 0)) throw new ConfigError('--limit: a positive number');
  const servers = (flags.server.length > 0 ? flags.server : [DEFAULT_ALERT_ADDRESS]).map(toUrl);
  const abort = new AbortController();
  let printed = 0;
  const onSignal = (): void => abort.abort();
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  try {
    await followAlerts({
      servers,
      follow: flags.follow,
      signal: abort.signal,
      onAlert: (alert) => {
        if (printed >= limit || !matchesAlertFilter(alert, filter)) return;
        printed++;
        process.stdout.write(flags.json ? `${JSON.stringify(alert)}\n` : formatAlert(alert));
        if (printed >= limit) abort.abort();
      },
      onError: (message, server) => process.stderr.write(`rtctl logs: ${server}: ${message}; reconnecting\n`),
    });
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    // Writes to a pipe are asynchronous: wait until everything printed has left before the CLI exits.
    await new Promise<void>((resolve) => process.stdout.write('', () => resolve()));
  }
}

async function runRelay(flags: { upstream: string[]; listen: string }): Promise<void> {
  if (flags.upstream.length === 0) throw new ConfigError('give at least one --upstream');
  const logger = createLogger();
  const hub = createAlertHub();
  const { host, port } = parseListen(flags.listen);
  const server = await startAlertServer({ hub, host, port, logger });
  process.stdout.write(`alerts: ${server.url}/alerts\n`);
  const abort = new AbortController();
  process.once('SIGTERM', () => abort.abort());
  process.once('SIGINT', () => abort.abort());
  await followAlerts({
    servers: flags.upstream.map(toUrl),
    follow: true,
    signal: abort.signal,
    onAlert: (alert) => void hub.publish(alert),
    onError: (message, upstream) => logger.warn({ upstream }, message),
  });
  await server.close();
}

async function fetchJson(url: string): Promise<unknown> {
  return new Promise((resolve, reject) => {
    get(url, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () => {
        try {
          resolve(JSON.parse(body));
        } catch (err) {
          reject(err instanceof Error ? err : new Error(String(err)));
        }
      });
    }).on('error', reject);
  });
}

async function handleUsage(action: () => Promise<void>): Promise<void> {
  try {
    await action();
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`rtctl: ${err.message}\n`);
      process.exitCode = 2;
      return;
    }
    if (err instanceof RuleTableLoadError) {
      process.stderr.write(`rtctl: --rule-table ${err.message}\n`);
      process.exitCode = 2;
      return;
    }
    throw err;
  }
}

/** Registers the enforcer subcommands on the root program. */
export function registerEnforcerCommands(program: Command): void {
  const enforcer = program.command('enforcer').description('Run the node enforcer and its alert relay');
  enforcer
    .command('run')
    .description('Enforce policies on this node and serve its alerts')
    .option(
      '--policy-dir <dir>',
      'policy source: a directory of policy YAML, reloaded on change (systemd mode)',
    )
    .option(
      '--kubernetes',
      'policy source: the Kubernetes API (RuntimePolicy, RuntimeHostPolicy, Namespaces, Pods)',
    )
    .option('--kubeconfig <file>', 'kubeconfig for --kubernetes (default: in-cluster or $KUBECONFIG)')
    .option(
      '--rule-table <file>',
      'policy source: a compiled rule table (`rtctl compile --target rules` writes build/rules/rule-table.bin), reloaded on change; namespace postures take their defaults',
    )
    .addOption(new Option('--data-plane <name>', 'data plane: auto, or one by name').default('auto'))
    .option('--node-name <name>', 'node name (HostName in alerts; default: the host name)')
    .option('--cluster-name <name>', 'cluster name (ClusterName in alerts)', 'default')
    .option(
      '--node-label <key=value>',
      'node label for host-policy selection (repeatable; directory mode)',
      collect,
      [],
    )
    .option('--containerd-socket <path>', 'containerd socket', '/run/containerd/containerd.sock')
    .option('--containerd-namespace <ns>', 'containerd namespace', 'k8s.io')
    .option('--listen <host:port>', 'alert stream address', DEFAULT_ALERT_ADDRESS)
    .option('--state-dir <dir>', 'sockets and logs of the data plane', '/run/rtctl')
    .option('--alert-log <file>', 'append every alert to this NDJSON file (and replay its tail on start)')
    .option('--poll-ms <ms>', 'workload poll period', '1000')
    .option(
      '--release-on-exit',
      'stop enforcing when this process exits (default: the data plane keeps enforcing)',
    )
    .action((flags: EnforcerFlags) => handleUsage(() => runEnforcer(flags)));
  enforcer
    .command('stop')
    .description(
      'Release enforcement left in force by a stopped enforcer: detach the BPF-LSM programs and unpin their state, or stop the fanotify helper',
    )
    .addOption(
      new Option('--data-plane <name>', 'data plane to release: auto, or one by name').default('auto'),
    )
    .option('--state-dir <dir>', 'sockets and logs of the data plane', '/run/rtctl')
    .action((flags: { dataPlane: string; stateDir: string }) => handleUsage(() => releaseDataPlane(flags)));
  enforcer
    .command('relay')
    .description('Follow several enforcers and serve their alerts as one stream')
    .option('--upstream <address>', 'an enforcer (or relay) alert address (repeatable)', collect, [])
    .option('--listen <host:port>', 'address to serve on', '127.0.0.1:4281')
    .action((flags: { upstream: string[]; listen: string }) => handleUsage(() => runRelay(flags)));
  enforcer
    .command('status')
    .description("Print a running enforcer's status as JSON")
    .option('--server <address>', 'enforcer alert address', DEFAULT_ALERT_ADDRESS)
    .action((flags: { server: string }) =>
      handleUsage(async () => {
        process.stdout.write(
          `${JSON.stringify(await fetchJson(`${toUrl(flags.server)}/status`), null, 2)}\n`,
        );
      }),
    );
  program
    .command('logs')
    .description('Stream alerts from the enforcers (follows and reconnects)')
    .option('-n, --namespace <ns>', 'only alerts of this namespace')
    .option('--json', 'one JSON alert record per line')
    .option(
      '--operation <op>',
      'only this operation (Process, File, Network, Capabilities; repeatable)',
      collect,
      [],
    )
    .option('--pod <name>', 'only this pod (repeatable)', collect, [])
    .option('--container <name>', 'only this container (repeatable)', collect, [])
    .option(
      '--server <address>',
      `enforcer or relay address (repeatable; default ${DEFAULT_ALERT_ADDRESS})`,
      collect,
      [],
    )
    .option('--no-follow', 'print the alerts held now and exit')
    .option('--limit <n>', 'exit after n alerts')
    .action((flags: LogsFlags) => handleUsage(() => runLogs(flags)));
  program
    .command('probe')
    .description('Which data planes and LSMs this kernel supports, each checked by a trial')
    .option('--json', 'JSON output')
    .action((flags: { json?: boolean }) =>
      handleUsage(async () => {
        const report = await probeKernel();
        process.stdout.write(flags.json ? `${JSON.stringify(report, null, 2)}\n` : formatProbeReport(report));
      }),
    );
}
