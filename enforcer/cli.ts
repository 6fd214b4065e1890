// Subcommands of the enforcer component: `rtctl enforcer run|relay|status`, `rtctl logs`, `rtctl probe`.
import { Command, Option } from 'commander';
import { get } from 'node:http';
import { chownSync, existsSync, mkdirSync } from 'node:fs';
import { pino, type DestinationStream, type Logger } from 'pino';
import {
  ConfigError,
  parseAddressFlag,
  parseGroupFlag,
  readEnforcerConfig,
  type EnforcerConfig,
  type EnforcerFlags,
} from './config.js';
import { DEFAULT_CONFIG_FILE, resolveEnforcerFlags } from './config-file.js';
import { DATA_PLANES, findDataPlane, type DataPlaneFactory } from './data-planes.js';
import { createEnforcer, type Enforcer } from './enforcer.js';
import { alertRequestOptions, formatAlertAddress } from './alerts/alert-address.js';
import { findEnforcementTarget } from '../compiler/enforcement/enforcement-table.js';
import { createAlertHub } from './alerts/alert-hub.js';
import { matchesAlertFilter, type AlertFilter } from './alerts/alert-filter.js';
import { startAlertServer, type AlertServer } from './alerts/alert-server.js';
import { AlertStreamError, followAlerts } from './alerts/follow-alerts.js';
import { formatAlert, formatAlertPretty } from './alerts/format-alert.js';
import { parseLabelSelector } from './alerts/label-selector.js';
import { parseSince } from './alerts/parse-since.js';
import { readAlertLogSince, type HistoryBoundary } from './io/alert-log-since.js';
import { openAlertLog, type AlertLog } from './io/alert-log.js';
import { readAlertLogTail } from './io/alert-log-tail.js';
import { createContainerdLister } from './io/containerd-workloads.js';
import { createContainerEvents } from './io/containerd-events.js';
import { createDirectoryPolicySource } from './io/directory-policy-source.js';
import { createKubernetesPolicySource } from './kubernetes/kubernetes-policy-source.js';
import { createNodeStatusReporting, type NodeStatusReporting } from './kubernetes/node-status-reporting.js';
import {
  RuleTableLoadError,
  createRuleTablePolicySource,
  readRuleTableSnapshot,
} from './io/rule-table-policy-source.js';
import type { PolicySnapshot, PolicySource } from './policy-source.js';
import type { DataPlane } from './data-plane.js';
import { DEFAULT_NON_KUBERNETES_NAMESPACE } from './workload.js';
import { formatProbeReport, probeKernel } from './probe.js';
import { OutputSpecError, parseOutputSpecs, type OutputSpec } from './outputs/output-spec.js';
import { createAlertOutput, createAlertOutputs, type AlertOutputs } from './outputs/alert-outputs.js';
import { createEnforcerMetrics } from './metrics/enforcer-metrics.js';
import { instrumentDataPlane } from './metrics/instrument-plane.js';
import { RTCTL_VERSION } from '../compiler/model/version.js';

/** Default state directory of the data planes and the alert socket. */
export const DEFAULT_STATE_DIR = '/run/rtctl';

/** Default address of the alert stream: a unix socket, reachable by root and the `--group`. */
export const DEFAULT_ALERT_ADDRESS = `unix:${DEFAULT_STATE_DIR}/alerts.sock`;

/** Alerts held in memory and replayed from the alert log on start. */
const HUB_CAPACITY = 10000;

/** rtctl's version (the node report's rtctlVersion). */

const collect = (value: string, previous: string[]): string[] => [...previous, value];

const messageOf = (err: unknown): string => (err instanceof Error ? err.message : String(err));

/** Keys pino puts on every line; a log call's own field of the same name is renamed, never repeated. */
const BASE_KEYS: Readonly<Record<string, string>> = { pid: 'targetPid', hostname: 'targetHostname' };

/** The enforcer's logger: JSON lines on stderr (or the given destination), no key twice on a line. */
export function createLogger(destination: DestinationStream = pino.destination(2)): Logger {
  return pino(
    {
      level: process.env['RTCTL_LOG_LEVEL'] ?? 'info',
      formatters: {
        log(object) {
          if (!Object.keys(BASE_KEYS).some((k) => k in object)) return object;
          const out: Record<string, unknown> = {};
          for (const [k, v] of Object.entries(object)) out[BASE_KEYS[k] ?? k] = v;
          return out;
        },
      },
    },
    destination,
  );
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

/** The Kubernetes clients, loaded only by the Kubernetes source (kubernetes-clients.ts). */
const loadKubernetesClients = (): Promise<typeof import('./io/kubernetes-clients.js')> =>
  import('./io/kubernetes-clients.js');

async function createSource(
  config: EnforcerConfig,
  logger: Logger,
  preloaded?: PolicySnapshot,
): Promise<PolicySource> {
  if (config.source.kind === 'directory')
    return createDirectoryPolicySource({ dir: config.source.dir, logger });
  if (config.source.kind === 'rule-table')
    return createRuleTablePolicySource({
      file: config.source.file,
      logger,
      ...(preloaded !== undefined ? { initial: preloaded } : {}),
    });
  const { loadKubeConfig, createInformerFeeds } = await loadKubernetesClients();
  const kc = loadKubeConfig(config.source.kubeconfig);
  return createKubernetesPolicySource({
    feeds: createInformerFeeds(kc, config.nodeName, logger),
    nodeName: config.nodeName,
    logger,
  });
}

/** Creates the state directory (0750, the configured group) unless it exists. */
function prepareStateDir(dir: string, gid: number | undefined): void {
  if (existsSync(dir)) return;
  try {
    mkdirSync(dir, { recursive: true, mode: 0o750 });
    if (gid !== undefined) chownSync(dir, -1, gid);
  } catch (err) {
    throw new ConfigError(`--state-dir: cannot create ${dir}: ${messageOf(err)}`);
  }
}

/** `--alert-output` specs, parsed before anything starts (a bad one is a usage error). */
function readOutputSpecs(texts: readonly string[] | undefined): OutputSpec[] {
  try {
    return parseOutputSpecs(texts ?? []);
  } catch (err) {
    if (err instanceof OutputSpecError) throw new ConfigError(err.message);
    throw err;
  }
}

async function runEnforcer(flags: EnforcerFlags & { alertOutput?: string[] }): Promise<void> {
  const config = readEnforcerConfig(flags);
  const outputSpecs = readOutputSpecs(flags.alertOutput);
  const logger = createLogger();
  // Files this process and the helpers it starts create (logs, sockets) are not readable by others.
  process.umask(0o027);
  prepareStateDir(config.stateDir, config.gid);
  // Everything that can fail on a user's mistake is checked before any data plane starts: a compiled
  // table, the alert log, the alert socket.
  const preloaded =
    config.source.kind === 'rule-table' ? await readRuleTableSnapshot(config.source.file) : undefined;
  let log: AlertLog | undefined;
  if (config.alertLog !== undefined) {
    try {
      log = openAlertLog({
        path: config.alertLog,
        maxBytes: config.alertLogMaxBytes,
        maxFiles: config.alertLogFiles,
        ...(config.gid !== undefined ? { gid: config.gid } : {}),
        logger,
      });
    } catch (err) {
      throw new ConfigError(`--alert-log: cannot open ${config.alertLog}: ${messageOf(err)}`);
    }
  }
  let server: AlertServer | undefined;
  let enforcer: Enforcer | undefined;
  let reporting: NodeStatusReporting | undefined;
  let outputs: AlertOutputs | undefined;
  try {
    const replay =
      config.alertLog !== undefined
        ? readAlertLogTail(config.alertLog, HUB_CAPACITY, { maxFiles: config.alertLogFiles })
        : [];
    const hub = createAlertHub(HUB_CAPACITY, replay);
    const alertOutputs = createAlertOutputs(
      outputSpecs.map((spec) => ({ spec, output: createAlertOutput(spec, logger) })),
      hub,
    );
    outputs = alertOutputs;
    const inUse: { plane?: DataPlane } = {};
    const alertLogPath = config.alertLog;
    const metrics = createEnforcerMetrics({
      hub,
      role: 'enforcer',
      processMetrics: true,
      planeStats: () => (inUse.plane ? inUse.plane.stats() : Promise.resolve(undefined)),
      serverStats: () => server?.stats(),
      alertLogStats: () => log?.stats(),
      outputStats: () => alertOutputs.stats(),
    });
    try {
      server = await startAlertServer({
        hub,
        listen: config.listen,
        logger,
        metrics: () => metrics.render(),
        ...(alertLogPath !== undefined
          ? {
              history: (sinceMs: number, boundary: HistoryBoundary | undefined) =>
                readAlertLogSince(alertLogPath, sinceMs, boundary, { maxFiles: config.alertLogFiles }),
            }
          : {}),
        maxConnections: config.maxConnections,
        ...(config.gid !== undefined ? { socketGid: config.gid } : {}),
        status: async () =>
          enforcer ? { ...(await enforcer.status()), outputs: alertOutputs.stats() } : undefined,
      });
    } catch (err) {
      throw new ConfigError(`--listen ${formatAlertAddress(config.listen)}: ${messageOf(err)}`);
    }
    const planeName = await chooseDataPlane(config.dataPlane, logger);
    const factory = findDataPlane(planeName);
    if (factory === undefined) throw new ConfigError(`unknown data plane ${planeName}`);
    const enforcementTarget = findEnforcementTarget(planeName);
    if (enforcementTarget === undefined)
      throw new Error(`data plane ${planeName} has no enforcement table column`);
    const plane = instrumentDataPlane(await factory.create({ stateDir: config.stateDir, logger }), (s, ok) =>
      metrics.observeApply(s, ok),
    );
    metrics.setPlane(planeName);
    inUse.plane = plane;
    if (config.source.kind === 'kubernetes') {
      // Policy status: this node's report ConfigMap, and the release request of `rtctl uninstall`.
      const { loadKubeConfig, createConfigMapReleaseWatch, createConfigMapStatusWriter } =
        await loadKubernetesClients();
      const kc = loadKubeConfig(config.source.kubeconfig);
      const { namespace } = config.nodeStatus;
      reporting = createNodeStatusReporting({
        writer: createConfigMapStatusWriter(kc, namespace),
        releaseWatch: createConfigMapReleaseWatch(kc, namespace, logger),
        node: config.nodeName,
        plane: planeName,
        target: enforcementTarget,
        ...(plane.unavailableForms ? { unavailable: plane.unavailableForms } : {}),
        rtctlVersion: RTCTL_VERSION,
        logger,
        minIntervalMs: config.nodeStatus.minIntervalMs,
        heartbeatMs: config.nodeStatus.heartbeatMs,
      });
    }
    const status = reporting;
    const starting = createEnforcer({
      source: await createSource(config, logger, preloaded),
      containers: createContainerdLister({
        socket: config.containerdSocket,
        namespace: config.containerdNamespace,
        namespaces: config.containerdNamespaces,
        nonKubernetesNamespace: config.nonKubernetesNamespace,
        logger,
      }),
      ...(config.containerDiscovery === 'events'
        ? {
            containerEvents: createContainerEvents({
              socket: config.containerdSocket,
              namespaces: config.containerdNamespaces,
              logger,
            }),
            resyncMs: config.resyncMs,
          }
        : {}),
      plane,
      enforcementTarget,
      hub,
      clusterName: config.clusterName,
      nodeName: config.nodeName,
      nodeLabels: config.nodeLabels,
      postureSettings: config.postures,
      pollMs: config.pollMs,
      logger,
      ...(log !== undefined ? { alertLog: log } : {}),
      ...(status !== undefined ? { onStateApplied: status.onStateApplied } : {}),
    });
    await starting.start();
    enforcer = starting;
    await status?.start(() => starting.release());
  } catch (err) {
    await reporting?.stop();
    // The enforcer released what it had started; close what was opened here.
    await server?.close();
    await outputs?.close(0);
    await log?.close();
    throw err;
  }
  logger.info({ url: server.url }, 'enforcer running; alert stream at /alerts');
  // With a stdout output, stdout holds JSON alert lines only: the address goes to stderr.
  const announce = outputSpecs.some((s) => s.kind === 'stdout') ? process.stderr : process.stdout;
  announce.write(`alerts: ${server.url}/alerts\n`);
  await new Promise<void>((resolve) => {
    const stop = (): void => resolve();
    process.once('SIGTERM', stop);
    process.once('SIGINT', stop);
  });
  await reporting?.stop();
  await server.close();
  await enforcer.stop({ keepEnforcing: !config.releaseOnExit });
  await outputs.close();
  logger.info({ released: config.releaseOnExit, outputs: outputs.stats() }, 'enforcer stopped');
}

/**
 * `rtctl enforcer stop`: releases what a stopped enforcer left in force (pins, helper). Needs root; starts
 * nothing when nothing is in force.
 */
export async function releaseDataPlane(flags: { dataPlane: string; stateDir: string }): Promise<void> {
  if (typeof process.getuid === 'function' && process.getuid() !== 0) {
    throw new ConfigError(
      'enforcer stop: permission denied: releasing a data plane needs root (kernel marks and pinned programs)',
    );
  }
  let candidates: DataPlaneFactory[] = DATA_PLANES;
  if (flags.dataPlane !== 'auto') {
    const one = findDataPlane(flags.dataPlane);
    if (one === undefined) {
      throw new ConfigError(
        `--data-plane: unknown "${flags.dataPlane}" (known: auto, ${DATA_PLANES.map((p) => p.name).join(', ')})`,
      );
    }
    candidates = [one];
  }
  const logger = createLogger();
  const context = { stateDir: flags.stateDir, logger };
  let released = 0;
  for (const factory of candidates) {
    if (!(await factory.leftInForce(context))) continue;
    const plane = await factory.create(context);
    await plane.start();
    await plane.stop({ keepEnforcing: false });
    process.stdout.write(`released the ${factory.name} data plane\n`);
    released++;
  }
  if (released === 0) {
    process.stdout.write(
      `nothing to release: no ${candidates.map((c) => c.name).join(' or ')} data plane is enforcing (state dir ${flags.stateDir})\n`,
    );
  }
}

interface LogsFlags {
  namespace?: string;
  json?: boolean;
  output?: string;
  selector: string[];
  resource: string[];
  source: string[];
  policy: string[];
  action: string[];
  severity?: string;
  since?: string;
  operation: string[];
  pod: string[];
  container: string[];
  server: string[];
  follow: boolean;
  limit?: string;
}

/** Output forms of `rtctl logs`. */
const LOG_FORMATS = ['text', 'json', 'pretty'] as const;

/** The filter and output form of `rtctl logs`, from its flags (usage errors as ConfigError). */
export function readLogsFlags(
  flags: LogsFlags,
  nowMs: number,
): { filter: AlertFilter; format: (typeof LOG_FORMATS)[number]; sinceMs?: number } {
  const filter: AlertFilter = { operations: flags.operation, pods: flags.pod, containers: flags.container };
  if (flags.namespace !== undefined) filter.namespace = flags.namespace;
  if (flags.selector.length > 0) {
    const text = flags.selector.join(',');
    const parsed = parseLabelSelector(text);
    if (!parsed.ok) throw new ConfigError(`-l "${text}": column ${parsed.column}: ${parsed.error}`);
    filter.labels = parsed.value;
  }
  filter.resources = flags.resource;
  filter.sources = flags.source;
  filter.policies = flags.policy;
  for (const a of flags.action)
    if (!['block', 'audit'].includes(a.toLowerCase()))
      throw new ConfigError(`--action: "${a}" is neither Block nor Audit`);
  filter.actions = flags.action;
  if (flags.severity !== undefined) {
    if (!/^\d{1,2}$/.test(flags.severity) || Number(flags.severity) > 10)
      throw new ConfigError(`--severity: a minimum severity from 0 to 10, got "${flags.severity}"`);
    filter.minSeverity = Number(flags.severity);
  }
  let sinceMs: number | undefined;
  if (flags.since !== undefined) {
    const parsed = parseSince(flags.since, nowMs);
    if (!parsed.ok) throw new ConfigError(`--since: ${parsed.error}`);
    sinceMs = parsed.ms;
    filter.sinceMs = parsed.ms;
  }
  const output = flags.output ?? (flags.json ? 'json' : 'text');
  const format = LOG_FORMATS.find((f) => f === output);
  if (format === undefined) throw new ConfigError(`-o: "${output}" is not one of ${LOG_FORMATS.join(', ')}`);
  if (flags.json && format !== 'json')
    throw new ConfigError(`--json is -o json; it cannot be given with -o ${format}`);
  return { filter, format, ...(sinceMs !== undefined ? { sinceMs } : {}) };
}

const PRINT = {
  text: formatAlert,
  json: (a: unknown) => `${JSON.stringify(a)}\n`,
  pretty: formatAlertPretty,
};

async function runLogs(flags: LogsFlags): Promise<void> {
  const { filter, format, sinceMs } = readLogsFlags(flags, Date.now());
  const print = PRINT[format];
  const limit = flags.limit !== undefined ? Number(flags.limit) : Infinity;
  if (!(limit > 0)) throw new ConfigError('--limit: a positive number');
  const servers = (flags.server.length > 0 ? flags.server : [DEFAULT_ALERT_ADDRESS]).map((s) =>
    formatAlertAddress(parseAddressFlag('--server', s)),
  );
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
      ...(sinceMs !== undefined ? { sinceMs } : {}),
      onAlert: (alert) => {
        if (printed >= limit || !matchesAlertFilter(alert, filter)) return;
        printed++;
        process.stdout.write(print(alert));
        if (printed >= limit) abort.abort();
      },
      onError: (message, server) => process.stderr.write(`rtctl logs: ${server}: ${message}; reconnecting\n`),
      onNotice: (message, server) => process.stderr.write(`rtctl logs: ${server}: ${message}\n`),
    });
  } catch (err) {
    if (err instanceof AlertStreamError) throw new ConfigError(`logs: ${err.message}`);
    throw err;
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    // Writes to a pipe are asynchronous: wait until everything printed has left before the CLI exits.
    await new Promise<void>((resolve) => process.stdout.write('', () => resolve()));
  }
}

interface RelayFlags {
  upstream: string[];
  listen: string;
  group?: string;
  alertOutput?: string[];
}

async function runRelay(flags: RelayFlags): Promise<void> {
  const upstreams = (flags.upstream.length > 0 ? flags.upstream : [DEFAULT_ALERT_ADDRESS]).map((u) =>
    formatAlertAddress(parseAddressFlag('--upstream', u)),
  );
  const listen = parseAddressFlag('--listen', flags.listen);
  const gid = flags.group !== undefined ? parseGroupFlag(flags.group) : undefined;
  const outputSpecs = readOutputSpecs(flags.alertOutput);
  const logger = createLogger();
  const hub = createAlertHub(HUB_CAPACITY);
  const outputs = createAlertOutputs(
    outputSpecs.map((spec) => ({ spec, output: createAlertOutput(spec, logger) })),
    hub,
  );
  let server: AlertServer | undefined;
  const metrics = createEnforcerMetrics({
    hub,
    role: 'relay',
    processMetrics: true,
    serverStats: () => server?.stats(),
    outputStats: () => outputs.stats(),
  });
  try {
    server = await startAlertServer({
      hub,
      listen,
      logger,
      metrics: () => metrics.render(),
      status: () =>
        Promise.resolve({ role: 'relay', upstreams, alerts: hub.count(), outputs: outputs.stats() }),
      ...(gid !== undefined ? { socketGid: gid } : {}),
    });
  } catch (err) {
    await outputs.close(0);
    throw new ConfigError(`--listen ${formatAlertAddress(listen)}: ${messageOf(err)}`);
  }
  const announce = outputSpecs.some((s) => s.kind === 'stdout') ? process.stderr : process.stdout;
  announce.write(`alerts: ${server.url}/alerts\n`);
  const abort = new AbortController();
  process.once('SIGTERM', () => abort.abort());
  process.once('SIGINT', () => abort.abort());
  try {
    await followAlerts({
      servers: upstreams,
      follow: true,
      signal: abort.signal,
      onAlert: (alert) => void hub.publish(alert),
      onError: (message, upstream) => logger.warn({ upstream }, message),
      onNotice: (message, upstream) => logger.warn({ upstream }, message),
    });
  } catch (err) {
    if (err instanceof AlertStreamError) throw new ConfigError(`relay: ${err.message}`);
    throw err;
  } finally {
    await server.close();
    await outputs.close();
  }
}

/** Largest /status document read. */
const MAX_STATUS_BYTES = 4 * 1024 * 1024;

async function fetchStatus(address: string): Promise<unknown> {
  const target = parseAddressFlag('--server', address);
  return new Promise((resolve, reject) => {
    get(alertRequestOptions(target, '/status'), (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => {
        body += c;
        if (body.length > MAX_STATUS_BYTES) {
          res.destroy();
          reject(new ConfigError(`${address}: /status larger than ${MAX_STATUS_BYTES} bytes`));
        }
      });
      res.on('end', () => {
        if (res.statusCode !== 200) {
          reject(new ConfigError(`${address}: HTTP ${res.statusCode ?? 0} ${body.slice(0, 200).trim()}`));
          return;
        }
        try {
          resolve(JSON.parse(body));
        } catch {
          reject(new ConfigError(`${address}: /status is not JSON`));
        }
      });
    }).on('error', (err) => reject(new ConfigError(`${address}: ${err.message}`)));
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
    .option(
      '--containerd-namespace <ns>',
      'containerd namespaces to list, comma-separated (k8s.io under the kubelet; default for ctr and nerdctl, moby for Docker)',
      'k8s.io',
    )
    .option(
      '--non-kubernetes-namespace <ns>',
      `namespace of containers without Kubernetes labels that name none with security.runtime.com/namespace (default ${DEFAULT_NON_KUBERNETES_NAMESPACE})`,
    )
    .option(
      '--listen <address>',
      'alert stream: a unix socket path (default <state-dir>/alerts.sock) or host:port for TCP (opt-in, for the relay)',
    )
    .option('--group <group>', 'group (name or id) given the alert socket (0660) and alert log files (0640)')
    .option('--max-connections <n>', 'open connections of the alert server at most', '256')
    .option('--state-dir <dir>', 'sockets and logs of the data plane', DEFAULT_STATE_DIR)
    .option('--alert-log <file>', 'append every alert to this NDJSON file (and replay its tail on start)')
    .option('--alert-log-max-bytes <size>', 'rotate the alert log at this size (bytes, or 64M, 1G)', '64M')
    .option('--alert-log-files <n>', 'alert log files kept, the one being written included', '5')
    .option(
      '--poll-ms <ms>',
      'container list period with --container-discovery poll, or while the event stream is down',
      '1000',
    )
    .option(
      '--container-discovery <mode>',
      'events: follow containerd events (ctr events), list on each change; poll: list every --poll-ms only',
      'events',
    )
    .option(
      '--resync-ms <ms>',
      'with events: a full container list at least this often (the safety net)',
      '30000',
    )
    .option(
      '--namespace <ns>',
      'install namespace of the node report and the release request (--kubernetes; default $POD_NAMESPACE or rtctl-system)',
    )
    .option('--status-interval-ms <ms>', 'node report: least time between two writes (--kubernetes)', '5000')
    .option(
      '--status-heartbeat-ms <ms>',
      'node report: rewritten at least this often (--kubernetes)',
      '60000',
    )
    .option(
      '--alert-output <spec>',
      'also send alerts to: stdout, syslog+udp://HOST:PORT, syslog+tcp://HOST:PORT, syslog+unix:///PATH, http(s)://URL; options as ?minSeverity=5&… (repeatable; docs/alerts.md)',
      collect,
      [],
    )
    .option(
      '--host-posture <postures>',
      'postures of the host workload: audit (default) or block (protect mode), or per class: file=block,network=audit,capabilities=audit',
    )
    .option(
      '--default-posture <postures>',
      'default postures of every namespace (a Namespace annotation overrides them per class): audit, block, or per class',
    )
    .option(
      '--release-on-exit',
      'stop enforcing when this process exits (default: the data plane keeps enforcing)',
    )
    .option(
      '--config <file>',
      `configuration file (default ${DEFAULT_CONFIG_FILE} when it exists); flags override it`,
    )
    .option('--no-config', 'read no configuration file')
    .action((flags: EnforcerFlags & { alertOutput: string[]; config?: string | false }, cmd: Command) =>
      handleUsage(() =>
        runEnforcer({
          ...resolveEnforcerFlags(flags, (key) => cmd.getOptionValueSource(key) === 'cli'),
          alertOutput: flags.alertOutput,
        }),
      ),
    );
  enforcer
    .command('stop')
    .description(
      'Release enforcement left in force by a stopped enforcer: detach the BPF-LSM programs and unpin their state, or stop the fanotify helper',
    )
    .addOption(
      new Option('--data-plane <name>', 'data plane to release: auto, or one by name').default('auto'),
    )
    .option('--state-dir <dir>', 'sockets and logs of the data plane', DEFAULT_STATE_DIR)
    .action((flags: { dataPlane: string; stateDir: string }) => handleUsage(() => releaseDataPlane(flags)));
  enforcer
    .command('relay')
    .description('Follow several enforcers and serve their alerts as one stream')
    .option(
      '--upstream <address>',
      `an enforcer (or relay) alert address: unix socket path or host:port (repeatable; default ${DEFAULT_ALERT_ADDRESS})`,
      collect,
      [],
    )
    .option('--listen <address>', 'address to serve on: host:port, or a unix socket path', '127.0.0.1:4281')
    .option('--group <group>', 'group (name or id) given the unix socket (0660)')
    .option(
      '--alert-output <spec>',
      'also send the relayed alerts to an output (as for enforcer run; repeatable)',
      collect,
      [],
    )
    .action((flags: RelayFlags) => handleUsage(() => runRelay(flags)));
  enforcer
    .command('status')
    .description("Print a running enforcer's status as JSON")
    .option('--server <address>', 'enforcer alert address', DEFAULT_ALERT_ADDRESS)
    .action((flags: { server: string }) =>
      handleUsage(async () => {
        process.stdout.write(`${JSON.stringify(await fetchStatus(flags.server), null, 2)}\n`);
      }),
    );
  program
    .command('logs')
    .description('Stream alerts from the enforcers (follows and reconnects)')
    .option('-n, --namespace <ns>', 'only alerts of this namespace')
    .option(
      '-o, --output <format>',
      'text (readable blocks, default), json (one record per line), pretty (indented JSON)',
    )
    .option('--json', 'one JSON alert record per line (-o json)')
    .option(
      '-l, --selector <selector>',
      'only pods whose labels match: app=web,tier!=db,env in (a,b),!canary (repeatable: all must hold)',
      collect,
      [],
    )
    .option(
      '--resource <path>',
      'only this resource (file or executable; * and ? glob; repeatable)',
      collect,
      [],
    )
    .option('--source <path>', 'only this acting executable (* and ? glob; repeatable)', collect, [])
    .option('--policy <name>', 'only alerts of this policy (repeatable)', collect, [])
    .option('--action <action>', 'only Block or Audit (repeatable)', collect, [])
    .option('--severity <n>', 'only alerts of at least this severity (0-10)')
    .option(
      '--since <when>',
      'start at this age (30s, 10m, 2h, 1d) or RFC 3339 time; older alerts come from the alert log',
    )
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
