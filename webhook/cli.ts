// Subcommands of the webhook component (filled in by the webhook work).
import type { Command } from 'commander';

/** Registers the webhook subcommands on the root program. */
export function registerWebhookCommands(_program: Command): void {}
