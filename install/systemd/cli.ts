// The systemd branch of `rtctl install` and `rtctl uninstall` (install/cli.ts hands `--systemd` here).
import { releaseDataPlane } from '../../enforcer/cli.js';
import { createSystemdHost, findRtctlCommand, installSystemd, uninstallSystemd } from './systemd-install.js';

const EXIT_USAGE = 2;

function fail(err: unknown): void {
  process.stderr.write(`rtctl: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exitCode = EXIT_USAGE;
}

function requireRoot(verb: string): boolean {
  if (typeof process.getuid === 'function' && process.getuid() !== 0) {
    fail(`${verb} --systemd: permission denied: writing /etc/systemd/system needs root`);
    return false;
  }
  return true;
}

/** `rtctl install --systemd [--exec <command>]`. */
export async function runSystemdInstall(flags: { exec?: string }): Promise<void> {
  if (!requireRoot('install')) return;
  try {
    const command = flags.exec !== undefined ? flags.exec.split(/\s+/).filter(Boolean) : findRtctlCommand();
    if (!command[0]?.startsWith('/')) throw new Error(`--exec: an absolute path, got "${flags.exec ?? ''}"`);
    installSystemd(
      createSystemdHost(() => Promise.resolve()),
      command,
    );
    await Promise.resolve();
  } catch (err) {
    fail(err);
  }
}

/** `rtctl uninstall --systemd [--state-dir <dir>]`. */
export async function runSystemdUninstall(flags: { stateDir: string }): Promise<void> {
  if (!requireRoot('uninstall')) return;
  try {
    await uninstallSystemd(
      createSystemdHost(() => releaseDataPlane({ dataPlane: 'auto', stateDir: flags.stateDir })),
    );
  } catch (err) {
    fail(err);
  }
}
