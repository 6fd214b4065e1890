// Subcommands of the install component:
//   rtctl install --dry-run [-o yaml|json] [-f values.yaml] [--set key=value]...
//     prints every object of an installation with these values, in apply order (CRDs, namespace, components);
//   rtctl install [--cert-manager] [--verify] [--timeout 5m] [--kubeconfig f] [--context c] [-f …] [--set …]
//     applies them to the cluster (server-side apply, field manager rtctl);
//   rtctl uninstall [--purge] [--force] [--timeout 5m] [--kubeconfig f] [--context c] [-f …] [--set …].
import { readFile } from 'node:fs/promises';
import { Command, Option } from 'commander';
import { parse } from 'yaml';
import { toYamlStream } from '../compiler/emit/yaml-text.js';
import { runInstall } from './cluster/install-run.js';
import { ExitCode, RunError, type RunContext } from './cluster/run-context.js';
import { runUninstall } from './cluster/uninstall-run.js';
import { runVerify } from './cluster/verify-run.js';
import { createKubeClient, KubeError, loadKubeConfig } from './io/kube-client.js';
import { buildManifests } from './manifests.js';
import { readValues, type InstallValues, type ValuesError } from './values.js';
import { runSystemdInstall, runSystemdUninstall } from './systemd/cli.js';

const EXIT_USAGE = 2;
/** Default bound of every wait (CRDs established, workloads ready, nodes released). */
const DEFAULT_TIMEOUT = '5m';
/** Interval between polls of a wait. */
const POLL_MS = 2000;

interface ValuesFlags {
  values?: string;
  set: string[];
  systemd?: boolean;
  exec?: string;
}

interface ClusterFlags {
  kubeconfig?: string;
  context?: string;
  timeout: string;
}

interface InstallFlags extends ValuesFlags, ClusterFlags {
  dryRun?: boolean;
  output: 'yaml' | 'json';
  certManager?: boolean;
  verify?: boolean;
  forceConflicts?: boolean;
  upgrade?: boolean;
}

interface UninstallFlags extends ValuesFlags, ClusterFlags {
  purge?: boolean;
  force?: boolean;
  stateDir: string;
}

function fail(message: string): void {
  process.stderr.write(`rtctl: ${message}\n`);
  process.exitCode = EXIT_USAGE;
}

/** Sets `a.b.c=value` (value read as YAML, so numbers and booleans keep their type) into `target`. */
export function applySet(target: Record<string, unknown>, assignment: string): string | undefined {
  const eq = assignment.indexOf('=');
  if (eq <= 0) return `--set ${JSON.stringify(assignment)}: expected key=value`;
  const keys = assignment.slice(0, eq).split('.');
  let value: unknown;
  try {
    value = parse(assignment.slice(eq + 1)) as unknown;
  } catch {
    value = assignment.slice(eq + 1);
  }
  let node = target;
  for (const k of keys.slice(0, -1)) {
    const child = node[k];
    if (typeof child === 'object' && child !== null && !Array.isArray(child))
      node = child as Record<string, unknown>;
    else node = node[k] = {};
  }
  node[keys.at(-1) ?? ''] = value;
  return undefined;
}

function formatErrors(errors: readonly ValuesError[]): string {
  return errors.map((e) => `values: ${e.path}: ${e.message}`).join('\n');
}

/** Parses `90s`, `5m`, `1h` or plain seconds; undefined when malformed. */
export function parseDuration(text: string): number | undefined {
  const m = /^(\d{1,6})(ms|s|m|h)?$/.exec(text.trim());
  if (m === null) return undefined;
  const factor = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 }[m[2] ?? 's'] ?? 1000;
  return Number(m[1]) * factor;
}

/**
 * The values of `-f` and `--set`, over a base (`rtctl install` starts from webhook.certManager = --cert-manager:
 * rtctl issues the certificate itself unless asked to use cert-manager).
 */
async function readInputValues(
  command: string,
  flags: ValuesFlags,
  base: Record<string, unknown>,
): Promise<InstallValues | undefined> {
  let input: Record<string, unknown> = base;
  if (flags.values !== undefined) {
    try {
      const parsed = parse(await readFile(flags.values, 'utf8')) as unknown;
      if (parsed !== null && (typeof parsed !== 'object' || Array.isArray(parsed))) {
        fail(`${command}: ${flags.values}: expected a mapping of values`);
        return undefined;
      }
      input = mergeValues(base, (parsed ?? {}) as Record<string, unknown>);
    } catch (err) {
      fail(`${command}: ${flags.values}: ${err instanceof Error ? err.message : String(err)}`);
      return undefined;
    }
  }
  for (const s of flags.set) {
    const error = applySet(input, s);
    if (error !== undefined) {
      fail(`${command}: ${error}`);
      return undefined;
    }
  }
  const { values, errors } = readValues(input);
  if (errors.length > 0) {
    fail(`${command}: invalid values\n${formatErrors(errors)}`);
    return undefined;
  }
  return values;
}

function mergeValues(base: Record<string, unknown>, over: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...base };
  for (const [k, v] of Object.entries(over)) {
    const b = out[k];
    out[k] =
      typeof b === 'object' &&
      b !== null &&
      !Array.isArray(b) &&
      typeof v === 'object' &&
      v !== null &&
      !Array.isArray(v)
        ? mergeValues(b as Record<string, unknown>, v as Record<string, unknown>)
        : v;
  }
  return out;
}

function createContext(flags: ClusterFlags): RunContext {
  const kc = loadKubeConfig({
    ...(flags.kubeconfig === undefined ? {} : { kubeconfig: flags.kubeconfig }),
    ...(flags.context === undefined ? {} : { context: flags.context }),
  });
  return {
    client: createKubeClient(kc),
    progress: (line) => process.stderr.write(`${line}\n`),
    now: () => new Date(),
    pollMs: POLL_MS,
  };
}

/** Runs a cluster operation; its failures become `rtctl: …` and their exit code. */
async function inCluster(command: string, run: () => Promise<void>): Promise<void> {
  try {
    await run();
  } catch (err) {
    if (err instanceof RunError) {
      process.stderr.write(`rtctl: ${command}: ${err.message}\n`);
      process.exitCode = err.exitCode;
      return;
    }
    if (err instanceof KubeError) {
      process.stderr.write(`rtctl: ${command}: ${err.message}\n`);
      process.exitCode = ExitCode.Error;
      return;
    }
    throw err;
  }
}

function timeoutOf(command: string, flags: ClusterFlags): number | undefined {
  const ms = parseDuration(flags.timeout);
  if (ms === undefined)
    fail(`${command}: --timeout ${JSON.stringify(flags.timeout)}: expected 90s, 5m, 1h or seconds`);
  return ms;
}

async function install(flags: InstallFlags): Promise<void> {
  const values = await readInputValues('install', flags, {
    webhook: { certManager: flags.certManager === true },
  });
  if (values === undefined) return;
  if (flags.dryRun !== true) {
    const timeoutMs = timeoutOf('install', flags);
    if (timeoutMs === undefined) return;
    return inCluster('install', async () => {
      const ctx = createContext(flags);
      await runInstall(ctx, {
        values,
        certManager: values.webhook.certManager,
        forceConflicts: flags.forceConflicts === true,
        upgrade: flags.upgrade === true,
        timeoutMs,
      });
      if (flags.verify === true)
        await runVerify(ctx, values, timeoutMs, (line) => process.stdout.write(`${line}\n`));
    });
  }
  const objects = buildManifests(values);
  if (!values.webhook.certManager)
    process.stderr.write(
      'note: without --cert-manager, rtctl install also writes the Secret rtctl-webhook-tls and the caBundle (generated, not shown)\n',
    );
  process.stdout.write(
    flags.output === 'json'
      ? `${JSON.stringify({ apiVersion: 'v1', kind: 'List', items: objects }, null, 2)}\n`
      : toYamlStream(objects),
  );
}

async function uninstall(flags: UninstallFlags): Promise<void> {
  const values = await readInputValues('uninstall', flags, {});
  if (values === undefined) return;
  const timeoutMs = timeoutOf('uninstall', flags);
  if (timeoutMs === undefined) return;
  return inCluster('uninstall', async () =>
    runUninstall(createContext(flags), {
      values,
      purge: flags.purge === true,
      force: flags.force === true,
      timeoutMs,
    }),
  );
}

function withValuesAndCluster(command: Command): Command {
  return command
    .option('-f, --values <file>', 'a YAML file of values (see charts/rtctl/values.yaml)')
    .option('--set <key=value>', 'set one value (repeatable)', (v: string, p: string[]) => [...p, v], [])
    .option('--kubeconfig <file>', 'kubeconfig file (default: KUBECONFIG, ~/.kube/config, in-cluster)')
    .option('--context <name>', 'kubeconfig context (default: the current one)')
    .option('--timeout <duration>', 'bound of every wait (90s, 5m, 1h)', DEFAULT_TIMEOUT);
}

/** Registers `rtctl install` and `rtctl uninstall` on the root program. */
export function registerInstallCommands(program: Command): void {
  withValuesAndCluster(
    program
      .command('install')
      .description('Install rtctl into the cluster (server-side apply), or print the objects with --dry-run')
      .option('--dry-run', 'print the objects instead of applying them')
      .addOption(
        new Option('-o, --output <format>', 'output format').choices(['yaml', 'json']).default('yaml'),
      )
      .option('--cert-manager', "use cert-manager's Issuer and Certificate for the webhook certificate")
      .option('--verify', 'wait for the enforcers and Deployments to be ready and print what each node runs')
      .option('--force-conflicts', 'take over fields another field manager owns (server-side apply force)')
      .option('--upgrade', 'replace an install of another rtctl version')
      .option(
        '--systemd',
        'install the node enforcer as a systemd service on this host instead (install/systemd/)',
      )
      .option(
        '--exec <command>',
        'with --systemd: the rtctl the unit runs (default /usr/bin/rtctl or this one)',
      ),
  ).action((flags: InstallFlags) => (flags.systemd === true ? runSystemdInstall(flags) : install(flags)));
  withValuesAndCluster(
    program
      .command('uninstall')
      .description('Release enforcement on every node, then delete what rtctl install created')
      .option('--purge', 'also delete the CRDs, and with them every RuntimePolicy and RuntimeHostPolicy')
      .option('--force', 'delete even when nodes did not release enforcement within --timeout')
      .option(
        '--systemd',
        'instead: stop, disable and remove the node enforcer unit of this host, and release enforcement',
      )
      .option('--state-dir <dir>', 'with --systemd: the enforcer state directory to release', '/run/rtctl'),
  ).action((flags: UninstallFlags) =>
    flags.systemd === true ? runSystemdUninstall(flags) : uninstall(flags),
  );
}
