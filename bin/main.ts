// Builds the commander program from every component's commands and runs it. Exit codes: 0 success,
// 1 findings (lint errors, denied decision), 2 usage or I/O failure. A component's modules are loaded only
// when its command runs (a lint in CI should not load the Kubernetes client), all of them for help.
import { Command, CommanderError } from 'commander';
import { RTCTL_VERSION } from '../compiler/model/version.js';

/** Exit code for usage and I/O failures. */
export const EXIT_USAGE = 2;

type Register = (program: Command) => void;

/** Components, the top-level commands each owns, and how to load its registration. */
const COMPONENTS: ReadonlyArray<{ commands: readonly string[]; load: () => Promise<Register> }> = [
  {
    commands: ['lint', 'compile', 'explain', 'hook', 'test'],
    load: async () => (await import('../compiler/cli.js')).registerCompilerCommands,
  },
  { commands: ['webhook'], load: async () => (await import('../webhook/cli.js')).registerWebhookCommands },
  {
    commands: ['enforcer', 'probe', 'logs'],
    load: async () => (await import('../enforcer/cli.js')).registerEnforcerCommands,
  },
  { commands: ['imds'], load: async () => (await import('../imds/cli.js')).registerImdsCommands },
  {
    commands: ['install', 'uninstall'],
    load: async () => (await import('../install/cli.js')).registerInstallCommands,
  },
  {
    commands: ['controller'],
    load: async () => (await import('../controller/cli.js')).registerControllerCommands,
  },
  {
    commands: ['bundles'],
    load: async () => (await import('../compiler/bundles/cli.js')).registerBundlesCommands,
  },
];

/** Creates the `rtctl` program with the components that `command` needs (all of them when unknown). */
export async function createProgram(command?: string): Promise<Command> {
  const program = new Command('rtctl')
    .description('Runtime workload security: lint, compile, admit and enforce runtime policies')
    .version(RTCTL_VERSION)
    .showHelpAfterError()
    .exitOverride();
  const owner = COMPONENTS.find((c) => command !== undefined && c.commands.includes(command));
  for (const c of owner === undefined ? COMPONENTS : [owner]) (await c.load())(program);
  return program;
}

/** Runs rtctl with the given argv and resolves to the process exit code. */
export async function main(argv: readonly string[]): Promise<number> {
  try {
    const program = await createProgram(argv[2]);
    await program.parseAsync(argv);
    return typeof process.exitCode === 'number' ? process.exitCode : 0;
  } catch (err) {
    if (err instanceof CommanderError) {
      // --help and --version exit with 0 through the same path.
      return err.exitCode === 0 ? 0 : EXIT_USAGE;
    }
    const e = err instanceof Error ? err : new Error(String(err));
    process.stderr.write(`rtctl: ${e.message}\n`);
    return EXIT_USAGE;
  }
}
