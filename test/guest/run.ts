// Command-line entry of the guest harness, for working by hand:
//   npx tsx test/guest/run.ts '<shell command>'
// boots the guest, runs the command in the repository as root, prints its output, exits with its status.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { runInGuest } from './guest-vm.js';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const command = process.argv.slice(2).join(' ');
if (command === '') {
  process.stderr.write('usage: tsx test/guest/run.ts <shell command>\n');
  process.exit(2);
}
try {
  const result = await runInGuest({
    repoRoot,
    command,
    ...(process.env['RTCTL_GUEST_VERBOSE'] === '1'
      ? { onConsole: (t: string) => process.stderr.write(t) }
      : {}),
  });
  process.stdout.write(result.stdout);
  process.stderr.write(result.stderr);
  process.stderr.write(
    `guest: boot ${result.bootMs} ms, total ${result.totalMs} ms, exit ${result.exitCode}\n`,
  );
  process.exit(result.exitCode);
} catch (err) {
  process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(2);
}
