// Configuration of `rtctl controller run`, read once from the command line and the environment.
import { hostname } from 'node:os';
import { parseListenAddress, type ListenAddress } from '../compiler/net/listen-address.js';

/** A usage mistake, shown with exit code 2. */
export class ControllerConfigError extends Error {}

/** Raw flags as commander gives them. */
export interface ControllerFlags {
  kubeconfig?: string;
  namespace?: string;
  leaderElect?: boolean;
  leaseNamespace?: string;
  leaseName: string;
  identity?: string;
  healthListen: string;
  leaseDurationMs: string;
  renewDeadlineMs: string;
  retryPeriodMs: string;
  minWriteIntervalMs: string;
  staleAfterMs: string;
  pendingGraceMs: string;
  resyncMs: string;
}

/** The controller's configuration. */
export interface ControllerConfig {
  kubeconfig?: string;
  /** Install namespace: where the report ConfigMaps are. */
  namespace: string;
  leaderElection?: {
    namespace: string;
    name: string;
    identity: string;
    leaseDurationMs: number;
    renewDeadlineMs: number;
    retryPeriodMs: number;
  };
  healthListen: ListenAddress;
  minWriteIntervalMs: number;
  staleAfterMs: number;
  pendingGraceMs: number;
  resyncMs: number;
}

/** Install namespace when neither --namespace nor POD_NAMESPACE gives one. */
export const DEFAULT_NAMESPACE = 'rtctl-system';

function millis(flag: string, value: string, min: number): number {
  const n = /^\d{1,9}$/.test(value) ? Number(value) : NaN;
  if (!(n >= min))
    throw new ControllerConfigError(`${flag}: a whole number of milliseconds >= ${min}, got "${value}"`);
  return n;
}

/** Builds the configuration; throws ControllerConfigError on a usage mistake. */
export function readControllerConfig(
  flags: ControllerFlags,
  env: Readonly<Record<string, string | undefined>> = process.env,
): ControllerConfig {
  const namespace = flags.namespace ?? env['POD_NAMESPACE'] ?? DEFAULT_NAMESPACE;
  const listen = parseListenAddress(flags.healthListen, { defaultHost: '127.0.0.1', hostNames: true });
  if (!listen.ok) throw new ControllerConfigError(`--health-listen: ${listen.error}`);
  const leaseDurationMs = millis('--lease-duration-ms', flags.leaseDurationMs, 1000);
  const renewDeadlineMs = millis('--renew-deadline-ms', flags.renewDeadlineMs, 100);
  const retryPeriodMs = millis('--retry-period-ms', flags.retryPeriodMs, 10);
  if (renewDeadlineMs >= leaseDurationMs)
    throw new ControllerConfigError('--renew-deadline-ms must be less than --lease-duration-ms');
  if (retryPeriodMs >= renewDeadlineMs)
    throw new ControllerConfigError('--retry-period-ms must be less than --renew-deadline-ms');
  const config: ControllerConfig = {
    namespace,
    healthListen: listen.value,
    minWriteIntervalMs: millis('--min-write-interval-ms', flags.minWriteIntervalMs, 100),
    staleAfterMs: millis('--stale-after-ms', flags.staleAfterMs, 1000),
    pendingGraceMs: millis('--pending-grace-ms', flags.pendingGraceMs, 0),
    resyncMs: millis('--resync-ms', flags.resyncMs, 100),
  };
  if (flags.kubeconfig !== undefined) config.kubeconfig = flags.kubeconfig;
  if (flags.leaderElect === true) {
    config.leaderElection = {
      namespace: flags.leaseNamespace ?? namespace,
      name: flags.leaseName,
      identity: flags.identity ?? env['POD_NAME'] ?? `${hostname()}-${process.pid}`,
      leaseDurationMs,
      renewDeadlineMs,
      retryPeriodMs,
    };
  }
  return config;
}
