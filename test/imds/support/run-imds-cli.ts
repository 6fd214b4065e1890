// Runs only the imds subcommands as `rtctl` would (same exit-code rules as bin/main.ts), so the imds CLI can
// be tested as a real process without loading the other components.
import { Command, CommanderError } from 'commander';
import { registerImdsCommands } from '../../../imds/cli.js';

const program = new Command('rtctl').exitOverride();
registerImdsCommands(program);
try {
  await program.parseAsync(process.argv);
} catch (err) {
  if (err instanceof CommanderError) process.exitCode = err.exitCode === 0 ? 0 : 2;
  else {
    process.stderr.write(`rtctl: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exitCode = 2;
  }
}
