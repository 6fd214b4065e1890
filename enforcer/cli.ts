// Subcommands of the enforcer component (filled in by the enforcer work).
import type { Command } from 'commander';

/** Registers the enforcer subcommands on the root program. */
export function registerEnforcerCommands(_program: Command): void {}
