// Builds the commander program from every component's commands and runs it. Exit codes: 0 success,
// 1 findings (lint errors, denied decision), 2 usage or I/O failure.
import { Command, CommanderError } from 'commander';
import { registerCompilerCommands } from '../compiler/cli.js';
import { registerEnforcerCommands } from '../enforcer/cli.js';
import { registerImdsCommands } from '../imds/cli.js';
import { registerWebhookCommands } from '../webhook/cli.js';

/** Exit code for usage and I/O failures. */
export const EXIT_USAGE = 2;

/** Creates the full `rtctl` program. */
export function createProgram(): Command {
  const program = new Command('rtctl')
    .description('Runtime workload security: lint, compile, admit and enforce runtime policies')
    .version('0.1.0')
    .showHelpAfterError()
    .exitOverride();
  registerCompilerCommands(program);
  registerWebhookCommands(program);
  registerEnforcerCommands(program);
  registerImdsCommands(program);
  return program;
}

/** Runs rtctl with the given argv and resolves to the process exit code. */
export async function main(argv: readonly string[]): Promise<number> {
  const program = createProgram();
  try {
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
