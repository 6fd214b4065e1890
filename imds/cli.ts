// Subcommands of the imds component (filled in by the imds work).
import type { Command } from 'commander';

/** Registers the imds subcommands on the root program. */
export function registerImdsCommands(_program: Command): void {}
