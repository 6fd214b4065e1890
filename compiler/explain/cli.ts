// `rtctl explain`: the decision oracle on the command line (filled in by the backends work).
import type { Command } from 'commander';

/** Registers `rtctl explain` on the root program. */
export function registerExplainCommand(_program: Command): void {}
