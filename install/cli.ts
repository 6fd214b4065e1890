// Subcommands of the install component:
//   rtctl install --dry-run [-o yaml|json] [-f values.yaml] [--set key=value]...
// prints every object of an installation with these values, in apply order (CRDs, namespace, components).
import { readFile } from 'node:fs/promises';
import { Command, Option } from 'commander';
import { parse } from 'yaml';
import { toYamlStream } from '../compiler/emit/yaml-text.js';
import { buildManifests } from './manifests.js';
import { readValues, type ValuesError } from './values.js';
import { registerUninstallCommand, runSystemdInstall } from './systemd/cli.js';

const EXIT_USAGE = 2;

interface InstallFlags {
  dryRun?: boolean;
  output: 'yaml' | 'json';
  values?: string;
  set: string[];
  systemd?: boolean;
  exec?: string;
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

async function install(flags: InstallFlags): Promise<void> {
  if (flags.dryRun !== true)
    return fail('install: only --dry-run is implemented; apply its output, deploy/ or charts/rtctl/');
  let input: Record<string, unknown> = {};
  if (flags.values !== undefined) {
    try {
      const parsed = parse(await readFile(flags.values, 'utf8')) as unknown;
      if (parsed !== null && (typeof parsed !== 'object' || Array.isArray(parsed)))
        return fail(`install: ${flags.values}: expected a mapping of values`);
      input = (parsed ?? {}) as Record<string, unknown>;
    } catch (err) {
      return fail(`install: ${flags.values}: ${err instanceof Error ? err.message : String(err)}`);
    }
  }
  for (const s of flags.set) {
    const error = applySet(input, s);
    if (error !== undefined) return fail(`install: ${error}`);
  }
  const { values, errors } = readValues(input);
  if (errors.length > 0) return fail(`install: invalid values\n${formatErrors(errors)}`);
  const objects = buildManifests(values);
  process.stdout.write(
    flags.output === 'json'
      ? `${JSON.stringify({ apiVersion: 'v1', kind: 'List', items: objects }, null, 2)}\n`
      : toYamlStream(objects),
  );
}

/** Registers `rtctl install` on the root program. */
export function registerInstallCommands(program: Command): void {
  program
    .command('install')
    .description('Install rtctl into a cluster (now: print the objects with --dry-run)')
    .option('--dry-run', 'print the objects instead of applying them')
    .addOption(new Option('-o, --output <format>', 'output format').choices(['yaml', 'json']).default('yaml'))
    .option('-f, --values <file>', 'a YAML file of values (see charts/rtctl/values.yaml)')
    .option('--set <key=value>', 'set one value (repeatable)', (v: string, p: string[]) => [...p, v], [])
    .option('--systemd', 'install the node enforcer as a systemd service on this host (install/systemd/)')
    .option(
      '--exec <command>',
      'with --systemd: the rtctl the unit runs (default /usr/bin/rtctl or this one)',
    )
    .action((flags: InstallFlags) => (flags.systemd === true ? runSystemdInstall(flags) : install(flags)));
  registerUninstallCommand(program);
}
