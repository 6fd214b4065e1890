// Configuration of `rtctl enforcer run`, read once from the command line and passed in.
import { hostname } from 'node:os';
import { parseListenAddress } from '../compiler/net/listen-address.js';
import { join } from 'node:path';
import { parsePostureSpec, type DeclaredPostures, type PostureSettings } from '../compiler/model/posture.js';
import { AlertAddressError, parseAlertAddress, type AlertAddress } from './alerts/alert-address.js';
import { ALERT_LOG_DEFAULTS } from './io/alert-log.js';
import { lookupGroupId } from './io/group-id.js';
import { DEFAULT_NON_KUBERNETES_NAMESPACE, isNamespaceName } from './workload.js';

/** Where policies come from. */
export type PolicySourceConfig =
  | { kind: 'directory'; dir: string }
  | { kind: 'kubernetes'; kubeconfig?: string }
  | { kind: 'rule-table'; file: string };

/** The enforcer's configuration. */
export interface EnforcerConfig {
  source: PolicySourceConfig;
  /** `auto` or a data plane name (enforcer/data-planes.ts). */
  dataPlane: string;
  nodeName: string;
  clusterName: string;
  nodeLabels: Record<string, string>;
  containerdSocket: string;
  /** The first of `containerdNamespaces` (kept for readers of one namespace). */
  containerdNamespace: string;
  /** containerd namespaces listed for containers, in order (`k8s.io` under the kubelet; `default`, `moby`). */
  containerdNamespaces: string[];
  /** Namespace of containers without Kubernetes labels that name none (docs/enforcer.md). */
  nonKubernetesNamespace: string;
  /** Alert stream address: a unix socket (default `<state-dir>/alerts.sock`) or TCP (opt-in). */
  listen: AlertAddress;
  /** Group id given the alert socket (0660) and the alert log files (0640); default the process's. */
  gid?: number;
  /** Open connections of the alert server at most. */
  maxConnections: number;
  stateDir: string;
  alertLog?: string;
  alertLogMaxBytes: number;
  alertLogFiles: number;
  pollMs: number;
  /**
   * How containers are found: `events` follows containerd's event stream (full list every `resyncMs`, and
   * every `pollMs` while the stream is down); `poll` lists every `pollMs` only.
   */
  containerDiscovery: ContainerDiscovery;
  resyncMs: number;
  /** On exit, stop enforcing too (default: the data plane keeps enforcing across restarts). */
  releaseOnExit: boolean;
  /** Kubernetes mode: the node report and the release request (install namespace, write bounds). */
  nodeStatus: { namespace: string; minIntervalMs: number; heartbeatMs: number };
  /** Host postures (protect or audit mode) and namespace default postures. */
  postures: PostureSettings;
}

/** Ways of finding containers (`--container-discovery`). */
export const CONTAINER_DISCOVERY = ['events', 'poll'] as const;
export type ContainerDiscovery = (typeof CONTAINER_DISCOVERY)[number];

/** Install namespace when neither --namespace nor POD_NAMESPACE gives one. */
export const DEFAULT_INSTALL_NAMESPACE = 'rtctl-system';

/** Raw flags as commander gives them. */
export interface EnforcerFlags {
  policyDir?: string;
  kubernetes?: boolean;
  ruleTable?: string;
  kubeconfig?: string;
  dataPlane: string;
  nodeName?: string;
  clusterName: string;
  nodeLabel: string[];
  containerdSocket: string;
  containerdNamespace: string;
  listen?: string;
  group?: string;
  maxConnections?: string;
  stateDir: string;
  alertLog?: string;
  alertLogMaxBytes?: string;
  alertLogFiles?: string;
  pollMs: string;
  containerDiscovery?: string;
  resyncMs?: string;
  releaseOnExit?: boolean;
  namespace?: string;
  statusIntervalMs?: string;
  statusHeartbeatMs?: string;
  hostPosture?: string;
  defaultPosture?: string;
  nonKubernetesNamespace?: string;
}

/** A configuration error, shown to the user with exit code 2. */
export class ConfigError extends Error {}

/** Parses `host:port`, `[v6]:port`, a host name and port, or a bare port (on 127.0.0.1); throws ConfigError. */
export function parseListen(value: string): { host: string; port: number } {
  const parsed = parseListenAddress(value, { defaultHost: '127.0.0.1', hostNames: true });
  if (!parsed.ok) throw new ConfigError(`--listen: ${parsed.error}`);
  return parsed.value;
}

/** Parses an alert stream address (`--listen`, `--server`, `--upstream`); ConfigError names the flag. */
export function parseAddressFlag(flag: string, value: string): AlertAddress {
  try {
    return parseAlertAddress(value);
  } catch (err) {
    if (err instanceof AlertAddressError) throw new ConfigError(`${flag}: ${err.message}`);
    throw err;
  }
}

/** The group id of `--group` (a name from /etc/group or a number). */
export function parseGroupFlag(value: string, lookup = lookupGroupId): number {
  const gid = lookup(value);
  if (gid === undefined) throw new ConfigError(`--group: no group "${value}"`);
  return gid;
}

/** Parses a size in bytes with an optional K, M or G (binary) suffix. */
export function parseSize(flag: string, value: string): number {
  const m = /^(\d{1,12})([KMG]i?B?)?$/i.exec(value.trim());
  const unit = (m?.[2] ?? '').charAt(0).toUpperCase();
  const n =
    m?.[1] === undefined
      ? NaN
      : Number(m[1]) * (unit === 'K' ? 1024 : unit === 'M' ? 1024 ** 2 : unit === 'G' ? 1024 ** 3 : 1);
  if (!Number.isSafeInteger(n) || n < 1)
    throw new ConfigError(`${flag}: a size in bytes such as 67108864 or 64M, got "${value}"`);
  return n;
}

function parseCount(flag: string, value: string, min: number, max: number): number {
  const n = /^\d{1,9}$/.test(value) ? Number(value) : NaN;
  if (!(n >= min && n <= max))
    throw new ConfigError(`${flag}: a whole number from ${min} to ${max}, got "${value}"`);
  return n;
}

/** Parses `--host-posture`/`--default-posture`: `block`, `audit`, or `file=block,network=audit`. */
export function parsePostureFlag(flag: string, value: string): DeclaredPostures {
  const parsed = parsePostureSpec(value);
  if (typeof parsed === 'string') throw new ConfigError(`${flag}: ${parsed}`);
  return parsed;
}

/** Builds the configuration from flags; throws ConfigError on a usage mistake. */
export function readEnforcerConfig(
  flags: EnforcerFlags,
  lookupGroup = lookupGroupId,
  env: Readonly<Record<string, string | undefined>> = process.env,
): EnforcerConfig {
  const sources = [flags.policyDir !== undefined, flags.kubernetes === true, flags.ruleTable !== undefined];
  if (sources.filter(Boolean).length !== 1) {
    throw new ConfigError(
      'give exactly one policy source: --policy-dir <dir>, --kubernetes or --rule-table <file>',
    );
  }
  const source: PolicySourceConfig =
    flags.policyDir !== undefined
      ? { kind: 'directory', dir: flags.policyDir }
      : flags.ruleTable !== undefined
        ? { kind: 'rule-table', file: flags.ruleTable }
        : { kind: 'kubernetes', ...(flags.kubeconfig ? { kubeconfig: flags.kubeconfig } : {}) };
  const nodeName = flags.nodeName ?? hostname();
  const nodeLabels: Record<string, string> = { 'kubernetes.io/hostname': nodeName };
  for (const l of flags.nodeLabel) {
    const eq = l.indexOf('=');
    if (eq <= 0) throw new ConfigError(`--node-label: expected key=value, got "${l}"`);
    nodeLabels[l.slice(0, eq)] = l.slice(eq + 1);
  }
  const pollMs = Number(flags.pollMs);
  if (!Number.isFinite(pollMs) || pollMs < 50)
    throw new ConfigError('--poll-ms: a number of milliseconds >= 50');
  const containerDiscovery = flags.containerDiscovery ?? 'events';
  if (!(CONTAINER_DISCOVERY as readonly string[]).includes(containerDiscovery))
    throw new ConfigError(
      `--container-discovery: one of ${CONTAINER_DISCOVERY.join(', ')}, got "${containerDiscovery}"`,
    );
  const containerdNamespaces = [
    ...new Set(
      flags.containerdNamespace
        .split(',')
        .map((n) => n.trim())
        .filter((n) => n !== ''),
    ),
  ];
  for (const n of containerdNamespaces) {
    if (!/^[A-Za-z0-9][A-Za-z0-9._-]{0,75}$/.test(n))
      throw new ConfigError(`--containerd-namespace: not a containerd namespace name: "${n}"`);
  }
  const first = containerdNamespaces[0];
  if (first === undefined) throw new ConfigError('--containerd-namespace: give at least one namespace');
  const nonKubernetesNamespace = flags.nonKubernetesNamespace ?? DEFAULT_NON_KUBERNETES_NAMESPACE;
  if (!isNamespaceName(nonKubernetesNamespace))
    throw new ConfigError(
      `--non-kubernetes-namespace: not a namespace name (RFC 1123 label): "${nonKubernetesNamespace}"`,
    );
  const listen = parseAddressFlag('--listen', flags.listen ?? join(flags.stateDir, 'alerts.sock'));
  const config: EnforcerConfig = {
    source,
    dataPlane: flags.dataPlane,
    nodeName,
    clusterName: flags.clusterName,
    nodeLabels,
    containerdSocket: flags.containerdSocket,
    containerdNamespace: first,
    containerdNamespaces,
    nonKubernetesNamespace,
    listen,
    maxConnections:
      flags.maxConnections === undefined
        ? 256
        : parseCount('--max-connections', flags.maxConnections, 1, 65536),
    stateDir: flags.stateDir,
    alertLogMaxBytes:
      flags.alertLogMaxBytes === undefined
        ? ALERT_LOG_DEFAULTS.maxBytes
        : parseSize('--alert-log-max-bytes', flags.alertLogMaxBytes),
    alertLogFiles:
      flags.alertLogFiles === undefined
        ? ALERT_LOG_DEFAULTS.maxFiles
        : parseCount('--alert-log-files', flags.alertLogFiles, 1, 1000),
    pollMs,
    containerDiscovery: containerDiscovery as ContainerDiscovery,
    resyncMs:
      flags.resyncMs === undefined ? 30_000 : parseCount('--resync-ms', flags.resyncMs, 1000, 3_600_000),
    releaseOnExit: flags.releaseOnExit === true,
    nodeStatus: {
      namespace: flags.namespace ?? env['POD_NAMESPACE'] ?? DEFAULT_INSTALL_NAMESPACE,
      minIntervalMs:
        flags.statusIntervalMs === undefined
          ? 5000
          : parseCount('--status-interval-ms', flags.statusIntervalMs, 100, 3_600_000),
      heartbeatMs:
        flags.statusHeartbeatMs === undefined
          ? 60000
          : parseCount('--status-heartbeat-ms', flags.statusHeartbeatMs, 1000, 3_600_000),
    },
    postures: {},
  };
  if (flags.hostPosture !== undefined)
    config.postures.host = parsePostureFlag('--host-posture', flags.hostPosture);
  if (flags.defaultPosture !== undefined)
    config.postures.defaults = parsePostureFlag('--default-posture', flags.defaultPosture);
  if (flags.alertLog !== undefined) config.alertLog = flags.alertLog;
  if (flags.group !== undefined) config.gid = parseGroupFlag(flags.group, lookupGroup);
  return config;
}
