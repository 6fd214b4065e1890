// Subcommands of the imds component:
//   rtctl imds serve [--config <file>] [--listen <host:port>] [--manage-listen <host:port>]
//   rtctl imds modify-instance-metadata-options --endpoint <url> --instance-id <id> [--http-endpoint ...] ...
//   rtctl imds trigger <type> --instance-id <id> [--after-seconds N] [--action ...] [--code ...] [--state ...]
//   rtctl imds identity-certificate [--endpoint <url>]
import { Command } from 'commander';
import { pino, type Logger } from 'pino';
import { systemClock } from './clock.js';
import { createDefaultConfig, DEFAULT_MANAGE_LISTEN, parseConfig, type ImdsConfig } from './config.js';
import { formatConfigError, loadConfigFile } from './io/load-config.js';
import {
  callModifyInstanceMetadataOptions,
  callTrigger,
  fetchIdentityCertificate,
  type ManageCallResult,
} from './io/manage-client.js';
import {
  createManageToken,
  defaultManageTokenFile,
  readManageTokenFile,
  removeManageTokenFile,
  writeManageTokenFile,
} from './io/manage-token-file.js';
import { TriggerType } from './instance-events.js';
import { SERVE_HELP } from './paths-help.js';
import { formatListenAddress, parseListenAddress } from '../compiler/net/listen-address.js';
import { timerScheduler } from './scheduler.js';
import { startImds } from './serve.js';
import { loadSocketTtl } from './socket-ttl.js';

/** Exit code for usage and I/O failures. */
const EXIT_USAGE = 2;

interface ServeFlags {
  config?: string;
  listen?: string;
  manageListen?: string;
  manageTokenFile: string;
  logLevel: string;
}

interface ModifyFlags {
  endpoint: string;
  manageTokenFile: string;
  instanceId: string;
  httpEndpoint?: string;
  httpTokens?: string;
  httpPutResponseHopLimit?: string;
  instanceMetadataTags?: string;
}

interface TriggerFlags {
  endpoint: string;
  manageTokenFile: string;
  instanceId: string;
  afterSeconds?: string;
  action?: string;
  noticeSeconds?: string;
  code?: string;
  description?: string;
  eventId?: string;
  notBeforeSeconds?: string;
  windowSeconds?: string;
  deadlineSeconds?: string;
  state?: string;
}

/** Where the management token file is by default (read once, here at the edge). */
const DEFAULT_TOKEN_FILE = defaultManageTokenFile({ XDG_RUNTIME_DIR: process.env['XDG_RUNTIME_DIR'] });

function fail(message: string): void {
  process.stderr.write(`rtctl: ${message}\n`);
  process.exitCode = EXIT_USAGE;
}

async function readConfig(flags: ServeFlags): Promise<ImdsConfig | undefined> {
  let config: ImdsConfig;
  if (flags.config === undefined) config = createDefaultConfig();
  else {
    const loaded = await loadConfigFile(flags.config);
    if (!loaded.ok) {
      for (const e of loaded.errors) process.stderr.write(`${formatConfigError(e)}\n`);
      process.exitCode = EXIT_USAGE;
      return undefined;
    }
    config = loaded.config;
  }
  const overridden = {
    ...config,
    ...(flags.listen === undefined ? {} : { listen: flags.listen }),
    ...(flags.manageListen === undefined ? {} : { manageListen: flags.manageListen }),
    instances: config.instances.map((inst, i) => {
      if (i !== 0 || flags.listen === undefined) return inst;
      const rest = { ...inst };
      delete rest.listen;
      return rest;
    }),
  };
  for (const [flag, value] of [
    ['--listen', flags.listen],
    ['--manage-listen', flags.manageListen],
  ] as const) {
    if (value === undefined) continue;
    const parsed = parseListenAddress(value);
    if (!parsed.ok) {
      fail(`${flag}: ${parsed.error}`);
      return undefined;
    }
  }
  // Re-validate so flags obey the same rules as the file (e.g. management never on a metadata port).
  const checked = parseConfig(overridden);
  if (!checked.ok) {
    for (const e of checked.errors)
      fail(`imds config: ${e.code}: ${e.message}${e.pointer === '' ? '' : ` (at ${e.pointer})`}`);
    return undefined;
  }
  return checked.config;
}

function waitForSignal(): Promise<string> {
  return new Promise((resolve) => {
    const onSignal = (signal: string) => {
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
      resolve(signal);
    };
    process.on('SIGINT', onSignal);
    process.on('SIGTERM', onSignal);
  });
}

async function runServe(flags: ServeFlags): Promise<void> {
  const config = await readConfig(flags);
  if (config === undefined) return;
  const logger: Logger = pino({ level: flags.logLevel, base: { component: 'imds' } }, pino.destination(2));
  const ttl = loadSocketTtl();
  if (!ttl.ok)
    logger.error(
      { err: ttl.error },
      'ip-ttl addon unavailable: the hop limit is NOT enforced on token responses',
    );
  const manageToken = createManageToken();
  try {
    await writeManageTokenFile(flags.manageTokenFile, manageToken);
  } catch (err) {
    fail(
      `imds serve: cannot write the management token to ${flags.manageTokenFile}: ${err instanceof Error ? err.message : String(err)}`,
    );
    return;
  }
  let running;
  try {
    running = await startImds({
      config,
      logger,
      clock: systemClock,
      scheduler: timerScheduler,
      socketTtl: ttl.ok ? ttl.ttl : undefined,
      manageToken,
    });
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    const hint =
      e.code === 'EADDRNOTAVAIL'
        ? ' (the address is on no interface here: add it inside a network namespace of your own, or use --listen 127.0.0.1:8080)'
        : e.code === 'EACCES'
          ? ' (ports below 1024 need root or CAP_NET_BIND_SERVICE)'
          : '';
    fail(`imds serve: ${e instanceof Error ? e.message : String(err)}${hint}`);
    await removeManageTokenFile(flags.manageTokenFile, manageToken);
    return;
  }
  logger.info(
    {
      metadata: [...running.metadata.values()].map(formatListenAddress),
      manage: formatListenAddress(running.manage),
      manageTokenFile: flags.manageTokenFile,
    },
    'imds ready',
  );
  const signal = await waitForSignal();
  logger.info({ signal }, 'imds stopping');
  await running.close();
  await removeManageTokenFile(flags.manageTokenFile, manageToken);
}

async function readToken(file: string): Promise<string | undefined> {
  const read = await readManageTokenFile(file);
  if (read.ok) return read.token;
  fail(
    `cannot read the management token (${read.error}); rtctl imds serve writes it, pass the same --manage-token-file`,
  );
  return undefined;
}

function report(result: ManageCallResult): void {
  switch (result.kind) {
    case 'ok':
      process.stdout.write(`${JSON.stringify(result.response, null, 2)}\n`);
      return;
    case 'api-error':
      for (const e of result.body.Errors.length > 0 ? result.body.Errors : [result.body.Error]) {
        fail(`${e.Code}: ${e.Message}`);
      }
      return;
    case 'transport-error':
      fail(`cannot reach the management endpoint: ${result.message}`);
      return;
  }
}

function integerFlag(raw: string | undefined): number | string | undefined {
  if (raw === undefined) return undefined;
  return /^[0-9]{1,9}$/.test(raw) ? Number(raw) : raw;
}

async function runTrigger(type: string, flags: TriggerFlags): Promise<void> {
  const token = await readToken(flags.manageTokenFile);
  if (token === undefined) return;
  const body: Record<string, string | number> = { type };
  const put = (key: string, v: string | number | undefined) => {
    if (v !== undefined) body[key] = v;
  };
  put('afterSeconds', integerFlag(flags.afterSeconds));
  put('action', flags.action);
  put('noticeSeconds', integerFlag(flags.noticeSeconds));
  put('code', flags.code);
  put('description', flags.description);
  put('eventId', flags.eventId);
  put('notBeforeSeconds', integerFlag(flags.notBeforeSeconds));
  put('windowSeconds', integerFlag(flags.windowSeconds));
  put('deadlineSeconds', integerFlag(flags.deadlineSeconds));
  put('state', flags.state);
  report(await callTrigger(flags.endpoint, token, flags.instanceId, body));
}

async function runCertificate(flags: { endpoint: string }): Promise<void> {
  const result = await fetchIdentityCertificate(flags.endpoint);
  if (result.ok) process.stdout.write(result.pem);
  else fail(`cannot fetch the identity certificate: ${result.message}`);
}

async function runModify(flags: ModifyFlags): Promise<void> {
  const body: Record<string, string | number> = { 'instance-id': flags.instanceId };
  if (flags.httpEndpoint !== undefined) body['http-endpoint'] = flags.httpEndpoint;
  if (flags.httpTokens !== undefined) body['http-tokens'] = flags.httpTokens;
  if (flags.httpPutResponseHopLimit !== undefined) {
    const raw = flags.httpPutResponseHopLimit;
    body['http-put-response-hop-limit'] = /^[0-9]{1,3}$/.test(raw) ? Number(raw) : raw;
  }
  if (flags.instanceMetadataTags !== undefined) body['instance-metadata-tags'] = flags.instanceMetadataTags;
  const token = await readToken(flags.manageTokenFile);
  if (token === undefined) return;
  report(await callModifyInstanceMetadataOptions(flags.endpoint, token, body));
}

/** Registers the imds subcommands on the root program. */
export function registerImdsCommands(program: Command): void {
  const imds = program
    .command('imds')
    .description('The instance metadata service (emulator with a real hop limit)');
  imds
    .command('serve')
    .description('Serve instance metadata (default 169.254.169.254:80) and the management endpoint')
    .option('--config <file>', 'YAML or JSON configuration (instances, options, credentials)')
    .option(
      '--listen <host:port>',
      'metadata address of the first instance (any loopback address for local use)',
    )
    .option('--manage-listen <host:port>', `management endpoint address (default ${DEFAULT_MANAGE_LISTEN})`)
    .option('--manage-token-file <file>', 'where to write the management token (0600)', DEFAULT_TOKEN_FILE)
    .option('--log-level <level>', 'pino log level', 'info')
    .addHelpText('after', SERVE_HELP)
    .action((flags: ServeFlags) => runServe(flags));
  imds
    .command('modify-instance-metadata-options')
    .description('Change the metadata options of an instance through the management endpoint')
    .option('--endpoint <url>', 'management endpoint URL', `http://${DEFAULT_MANAGE_LISTEN}`)
    .option('--manage-token-file <file>', 'the token file rtctl imds serve wrote', DEFAULT_TOKEN_FILE)
    .requiredOption('--instance-id <id>', 'the instance to change')
    .option('--http-endpoint <enabled|disabled>', 'turn the metadata service on or off')
    .option('--http-tokens <optional|required>', 'required makes the v2 token mandatory')
    .option('--http-put-response-hop-limit <n>', 'IP TTL of token responses (1 to 64)')
    .option('--instance-metadata-tags <enabled|disabled>', 'expose tags/instance/ in the metadata')
    .action((flags: ModifyFlags) => runModify(flags));
  imds
    .command('trigger')
    .description(
      'Make something happen to an instance after a delay (spot interruption, rebalance, maintenance event, Auto Scaling state)',
    )
    .argument('<type>', Object.values(TriggerType).join(' | '))
    .option('--endpoint <url>', 'management endpoint URL', `http://${DEFAULT_MANAGE_LISTEN}`)
    .option('--manage-token-file <file>', 'the token file rtctl imds serve wrote', DEFAULT_TOKEN_FILE)
    .requiredOption('--instance-id <id>', 'the instance')
    .option('--after-seconds <n>', 'delay before it happens (default 0)')
    .option('--action <terminate|stop|hibernate>', 'spot-interruption: what happens to the instance')
    .option('--notice-seconds <n>', 'spot-interruption: time from the notice to the action (default 120)')
    .option(
      '--code <code>',
      'scheduled-event: instance-reboot, system-reboot, system-maintenance, instance-retirement, instance-stop',
    )
    .option('--description <text>', 'scheduled-event: description')
    .option('--event-id <id>', 'scheduled-event(-state): instance-event-<17 hex digits>')
    .option(
      '--not-before-seconds <n>',
      'scheduled-event: the window opens this long after the event (default 7 days)',
    )
    .option('--window-seconds <n>', 'scheduled-event: length of the window, NotAfter (default 2 h; 0: none)')
    .option('--deadline-seconds <n>', 'scheduled-event: NotBeforeDeadline, after NotBefore')
    .option(
      '--state <state>',
      'scheduled-event-state: completed | canceled; autoscaling-target-lifecycle-state: InService, Terminated, ...',
    )
    .action((type: string, flags: TriggerFlags) => runTrigger(type, flags));
  imds
    .command('identity-certificate')
    .description('Print the certificate that verifies instance identity documents (PEM)')
    .option('--endpoint <url>', 'management endpoint URL', `http://${DEFAULT_MANAGE_LISTEN}`)
    .action((flags: { endpoint: string }) => runCertificate(flags));
}
