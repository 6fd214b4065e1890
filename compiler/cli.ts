// Subcommands of the compiler: lint, compile, explain.
import type { Command } from 'commander';
import { registerExplainCommand } from './explain/cli.js';

/** Registers the compiler subcommands on the root program. */
export function registerCompilerCommands(program: Command): void {
  registerExplainCommand(program);
}
