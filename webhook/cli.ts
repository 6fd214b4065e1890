// Subcommands of the webhook component:
//   rtctl webhook serve --cert <file> --key <file> [--listen <host:port>] [--policy-dir <dir>]
//   rtctl webhook certs --out <dir> --dns <name>... [--ip <addr>...] [--days <n>]
//   rtctl webhook config [--namespace <ns>] [--service <name>] [--port <n>] [--ca-bundle <file>] [--timeout <s>]
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Command } from 'commander';
import { pino } from 'pino';
import { stringify } from 'yaml';
import { generateWebhookCertificates } from './certs.js';
import { DEFAULT_CONNECTION_LIMITS } from './connection-guard.js';
import { parseListenAddress } from '../compiler/net/listen-address.js';
import { DEFAULT_LISTEN, parseMillis, type WebhookServeConfig } from './config.js';
import { messageOf } from './error-value.js';
import { checkAdmissionObject } from '../compiler/lint.js';
import { startWebhook } from './serve.js';
import { buildWebhookConfiguration, checkCaBundle, DEFAULT_WEBHOOK_CONFIG } from './webhook-config.js';

const DNS1123_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

/** Exit code for usage and I/O failures. */
const EXIT_USAGE = 2;

interface ServeFlags {
  cert: string;
  key: string;
  listen: string;
  policyDir?: string;
  logLevel: string;
  shutdownDelay: string;
  drainTimeout: string;
  reloadInterval: string;
  maxConnections: string;
}

interface CertsFlags {
  out: string;
  dns: string[];
  ip: string[];
  days: string;
}

interface ConfigFlags {
  name: string;
  namespace: string;
  service: string;
  port: string;
  caBundle?: string;
  timeout: string;
}

function fail(message: string): void {
  process.stderr.write(`rtctl: ${message}\n`);
  process.exitCode = EXIT_USAGE;
}

function collect(value: string, previous: string[]): string[] {
  return [...previous, value];
}

function readServeConfig(flags: ServeFlags): WebhookServeConfig | string {
  const parsed = parseListenAddress(flags.listen);
  if (!parsed.ok) return `--listen: ${parsed.error}`;
  const listen = parsed.value;
  const delay = parseMillis('--shutdown-delay', flags.shutdownDelay);
  if (typeof delay !== 'number') return delay.error;
  const drain = parseMillis('--drain-timeout', flags.drainTimeout);
  if (typeof drain !== 'number') return drain.error;
  const reload = parseMillis('--reload-interval', flags.reloadInterval);
  if (typeof reload !== 'number') return reload.error;
  const maxConnections = Number(flags.maxConnections);
  if (!/^[0-9]+$/.test(flags.maxConnections) || maxConnections < 1 || maxConnections > 1_000_000)
    return `--max-connections ${JSON.stringify(flags.maxConnections)}: expected 1 to 1000000`;
  return {
    certFile: flags.cert,
    keyFile: flags.key,
    host: listen.host,
    port: listen.port,
    ...(flags.policyDir === undefined ? {} : { policyDir: flags.policyDir }),
    shutdownDelayMs: delay,
    drainTimeoutMs: drain,
    reloadIntervalMs: Math.max(50, reload),
    connectionLimits: { ...DEFAULT_CONNECTION_LIMITS, maxConnections },
  };
}

async function serve(flags: ServeFlags): Promise<void> {
  const config = readServeConfig(flags);
  if (typeof config === 'string') return fail(config);
  const logger = pino({ level: flags.logLevel, base: { component: 'webhook' } });
  let webhook;
  try {
    webhook = await startWebhook(config, logger, checkAdmissionObject);
  } catch (err) {
    return fail(`webhook serve: ${messageOf(err)}`);
  }
  await new Promise<void>((resolve) => {
    const stop = (signal: string): void => {
      logger.info({ signal }, 'signal received');
      webhook.shutdown().then(resolve, resolve);
    };
    process.once('SIGTERM', () => stop('SIGTERM'));
    process.once('SIGINT', () => stop('SIGINT'));
  });
}

async function certs(flags: CertsFlags): Promise<void> {
  const days = Number(flags.days);
  if (flags.dns.length === 0) return fail('webhook certs: --dns <name> is required');
  if (!Number.isInteger(days) || days < 1)
    return fail(`webhook certs: --days ${JSON.stringify(flags.days)}: expected a positive integer`);
  const generated = generateWebhookCertificates({ dnsNames: flags.dns, ipAddresses: flags.ip, days });
  try {
    await mkdir(flags.out, { recursive: true });
    await writeFile(path.join(flags.out, 'ca.crt'), generated.caCert);
    await writeFile(path.join(flags.out, 'tls.crt'), generated.tlsCert);
    await writeFile(path.join(flags.out, 'tls.key'), generated.tlsKey, { mode: 0o600 });
  } catch (err) {
    return fail(`webhook certs: ${messageOf(err)}`);
  }
  process.stdout.write(
    `wrote ${['ca.crt', 'tls.crt', 'tls.key'].map((f) => path.join(flags.out, f)).join(', ')}\n`,
  );
}

async function config(flags: ConfigFlags): Promise<void> {
  const port = Number(flags.port);
  const timeout = Number(flags.timeout);
  if (!Number.isInteger(port) || port < 1 || port > 65535)
    return fail(`webhook config: --port ${JSON.stringify(flags.port)}: expected 1-65535`);
  if (!Number.isInteger(timeout) || timeout < 1 || timeout > 30)
    return fail(`webhook config: --timeout ${JSON.stringify(flags.timeout)}: expected 1-30 seconds`);
  if (flags.namespace.length > 63 || !DNS1123_LABEL.test(flags.namespace))
    return fail(
      `webhook config: --namespace ${JSON.stringify(flags.namespace)}: expected a DNS-1123 label (lower case letters, digits and "-", at most 63 characters)`,
    );
  if (flags.service.length > 63 || !DNS1123_LABEL.test(flags.service))
    return fail(
      `webhook config: --service ${JSON.stringify(flags.service)}: expected a DNS-1123 label (lower case letters, digits and "-", at most 63 characters)`,
    );
  let caBundlePem: string | undefined;
  if (flags.caBundle !== undefined) {
    try {
      caBundlePem = await readFile(flags.caBundle, 'utf8');
    } catch (err) {
      return fail(`webhook config: ${messageOf(err)}`);
    }
    const checked = checkCaBundle(caBundlePem);
    if (checked !== undefined) return fail(`webhook config: --ca-bundle ${flags.caBundle}: ${checked}`);
  }
  const object = buildWebhookConfiguration({
    name: flags.name,
    namespace: flags.namespace,
    service: flags.service,
    port,
    timeoutSeconds: timeout,
    ...(caBundlePem === undefined ? {} : { caBundlePem }),
  });
  process.stdout.write(stringify(object, { aliasDuplicateObjects: false }));
}

/** Registers the webhook subcommands on the root program. */
export function registerWebhookCommands(program: Command): void {
  const webhook = program
    .command('webhook')
    .description('Admission webhook: serve, certificates, registration');
  webhook
    .command('serve')
    .description('Serve the admission webhook over HTTPS')
    .requiredOption('--cert <file>', 'serving certificate (PEM); reloaded when it changes')
    .requiredOption('--key <file>', 'serving key (PEM); reloaded when it changes')
    .option('--listen <host:port>', 'address to listen on', DEFAULT_LISTEN)
    .option('--policy-dir <dir>', 'directory of OPA policies compiled to *.wasm (opa build -t wasm)')
    .option('--log-level <level>', 'pino log level', 'info')
    .option('--shutdown-delay <ms>', 'after SIGTERM, keep serving this long with /readyz failing', '5000')
    .option('--drain-timeout <ms>', 'then wait at most this long for in-flight requests', '10000')
    .option('--reload-interval <ms>', 'how often to check the certificate files', '1000')
    .option(
      '--max-connections <n>',
      'open connections kept; past it the oldest not yet through its TLS handshake (or idle) is closed',
      String(DEFAULT_CONNECTION_LIMITS.maxConnections),
    )
    .action((flags: ServeFlags) => serve(flags));
  webhook
    .command('certs')
    .description(
      'Write ca.crt, tls.crt and tls.key: a CA and a serving certificate for the service DNS names',
    )
    .requiredOption('--out <dir>', 'output directory')
    .option('--dns <name>', 'service DNS name (repeatable), e.g. rtctl-webhook.rtctl-system.svc', collect, [])
    .option('--ip <address>', 'IP address to include (repeatable)', collect, [])
    .option('--days <n>', 'validity in days', '365')
    .action((flags: CertsFlags) => certs(flags));
  webhook
    .command('config')
    .description('Print the ValidatingWebhookConfiguration')
    .option('--name <name>', 'configuration name', DEFAULT_WEBHOOK_CONFIG.name)
    .option(
      '--namespace <ns>',
      'namespace the webhook runs in (excluded from admission)',
      DEFAULT_WEBHOOK_CONFIG.namespace,
    )
    .option('--service <name>', 'service in front of the webhook', DEFAULT_WEBHOOK_CONFIG.service)
    .option('--port <n>', 'service port', String(DEFAULT_WEBHOOK_CONFIG.port))
    .option('--ca-bundle <file>', 'CA certificate (ca.crt) to embed as caBundle')
    .option('--timeout <seconds>', 'timeoutSeconds', String(DEFAULT_WEBHOOK_CONFIG.timeoutSeconds))
    .action((flags: ConfigFlags) => config(flags));
}
