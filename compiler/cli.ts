// Subcommands of the compiler: lint, compile.
import type { Command } from 'commander';

/** Registers the compiler subcommands on the root program. */
export function registerCompilerCommands(_program: Command): void {}
