// Composes the running webhook from its configuration: custom policies, rules, metrics, app and HTTPS
// server, and the SIGTERM drain. The CLI calls this; tests call it too.
import type { Logger } from 'pino';
import { NODE_KINDS } from '../compiler/node-settings/node-kinds.js';
import { createWebhookHandler } from './app.js';
import type { WebhookServeConfig } from './config.js';
import { toError } from './error-value.js';
import { createWebhookMetrics } from './metrics.js';
import { loadCustomPolicies } from './opa/load-custom-policies.js';
import { createCheckerRule, type ObjectCheck } from './rules/checker-rule.js';
import { createCustomPolicyRule } from './rules/opa-rule.js';
import type { AdmissionRule } from './rules/rule.js';
import { startWebhookServer, type RunningWebhookServer } from './server.js';

/** The kinds named in metrics. */
export const KNOWN_KINDS: ReadonlySet<string> = new Set([
  'RuntimePolicy',
  'RuntimeHostPolicy',
  'Namespace',
  ...NODE_KINDS.map((k) => k.kind),
]);

/** A policy with a schema error: checking it compiles both schema validators. */
const WARM_UP_OBJECT = {
  apiVersion: 'security.runtime.com/v1',
  kind: 'RuntimePolicy',
  metadata: { name: 'warm-up' },
  spec: {},
};

/** A running webhook. */
export interface RunningWebhook {
  server: RunningWebhookServer;
  /** Drains and stops: /readyz fails, serving goes on for the shutdown delay, then in-flight requests finish. */
  shutdown(): Promise<void>;
}

/** Starts the webhook. `check` is the compiler's checkAdmissionObject. */
export async function startWebhook(
  config: WebhookServeConfig,
  logger: Logger,
  check: ObjectCheck,
): Promise<RunningWebhook> {
  const policies = config.policyDir === undefined ? [] : await loadCustomPolicies(config.policyDir);
  if (config.policyDir !== undefined)
    logger.info({ dir: config.policyDir, policies: policies.map((p) => p.name) }, 'custom policies loaded');
  // Compiles the checkers' validators now rather than on the first review (a second or so).
  check(WARM_UP_OBJECT, { operation: 'CREATE' });
  const rules: AdmissionRule[] = [
    createCheckerRule(check),
    createCustomPolicyRule(policies, (policy, err) => {
      logger.error({ policy, err: toError(err) }, 'custom policy failed');
    }),
  ];
  let ready = false;
  let draining = false;
  const handler = createWebhookHandler({
    rules,
    logger,
    metrics: createWebhookMetrics(true),
    knownKinds: KNOWN_KINDS,
    isReady: () => ready,
    isDraining: () => draining,
  });
  const server = await startWebhookServer({
    certFile: config.certFile,
    keyFile: config.keyFile,
    host: config.host,
    port: config.port,
    handler,
    logger,
    reloadIntervalMs: config.reloadIntervalMs,
    ...(config.connectionLimits === undefined ? {} : { limits: config.connectionLimits }),
  });
  ready = true;
  logger.info({ host: server.address.address, port: server.address.port }, 'webhook listening');
  let stopping: Promise<void> | undefined;
  const shutdown = (): Promise<void> => {
    stopping ??= (async () => {
      draining = true;
      logger.info({ delayMs: config.shutdownDelayMs }, 'draining');
      await new Promise((resolve) => setTimeout(resolve, config.shutdownDelayMs));
      await server.close(config.drainTimeoutMs);
      logger.info('stopped');
    })();
    return stopping;
  };
  return { server, shutdown };
}
