// Configuration of `rtctl enforcer run`, read once from the command line and passed in.
import { hostname } from 'node:os';
import { parseListenAddress } from '../compiler/net/listen-address.js';

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
  containerdNamespace: string;
  listenHost: string;
  listenPort: number;
  stateDir: string;
  alertLog?: string;
  pollMs: number;
  /** On exit, stop enforcing too (default: the data plane keeps enforcing across restarts). */
  releaseOnExit: boolean;
}

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
  listen: string;
  stateDir: string;
  alertLog?: string;
  pollMs: string;
  releaseOnExit?: boolean;
}

/** A configuration error, shown to the user with exit code 2. */
export class ConfigError extends Error {}

/** Parses `host:port`, `[v6]:port`, a host name and port, or a bare port (on 127.0.0.1); throws ConfigError. */
export function parseListen(value: string): { host: string; port: number } {
  const parsed = parseListenAddress(value, { defaultHost: '127.0.0.1', hostNames: true });
  if (!parsed.ok) throw new ConfigError(`--listen: ${parsed.error}`);
  return parsed.value;
}

/** Builds the configuration from flags; throws ConfigError on a usage mistake. */
export function readEnforcerConfig(flags: EnforcerFlags): EnforcerConfig {
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
  const { host, port } = parseListen(flags.listen);
  const config: EnforcerConfig = {
    source,
    dataPlane: flags.dataPlane,
    nodeName,
    clusterName: flags.clusterName,
    nodeLabels,
    containerdSocket: flags.containerdSocket,
    containerdNamespace: flags.containerdNamespace,
    listenHost: host,
    listenPort: port,
    stateDir: flags.stateDir,
    pollMs,
    releaseOnExit: flags.releaseOnExit === true,
  };
  if (flags.alertLog !== undefined) config.alertLog = flags.alertLog;
  return config;
}
