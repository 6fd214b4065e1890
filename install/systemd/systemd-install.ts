// `rtctl install --systemd` and `rtctl uninstall --systemd`: the node enforcer as a systemd service on this
// host. Install writes the unit (/etc/systemd/system/rtctl-enforcer.service), the default configuration
// (/etc/rtctl/enforcer.yaml, kept when it exists) and the policy folder, then enables and starts the service
// when systemd runs (else it says how to, later). Uninstall stops and disables the service, removes the unit,
// and releases enforcement (`rtctl enforcer stop`: the data plane keeps enforcing after its process stops).
// The configuration and policies stay (the package's purge removes them).
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { DEFAULT_ENFORCER_CONFIG } from './default-config.js';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  ENFORCER_UNIT_NAME,
  ENFORCER_UNIT_PATH,
  UNIT_CONFIG_PATH,
  renderEnforcerUnit,
} from './enforcer-unit.js';

/** The policy folder of the default configuration. */
export const POLICY_DIR = '/etc/rtctl/policies';

/** Where things happen: the real host (root `/`, systemctl), or a test's stand-ins. */
export interface SystemdHost {
  /** Prefix of every path written (`/` on the host). */
  root: string;
  /** True when systemd is the running init (`/run/systemd/system` exists). */
  systemdRunning(): boolean;
  /** Runs `systemctl <args>`; throws with its stderr on failure. */
  systemctl(args: readonly string[]): void;
  /** Releases what a stopped enforcer left in force (`rtctl enforcer stop`). */
  release(): Promise<void>;
  /** Progress lines for the user. */
  say(line: string): void;
}

/** The real host. */
export function createSystemdHost(release: () => Promise<void>): SystemdHost {
  return {
    root: '/',
    systemdRunning: () => existsSync('/run/systemd/system'),
    systemctl: (args) => {
      execFileSync('systemctl', [...args], { stdio: ['ignore', 'inherit', 'pipe'] });
    },
    release,
    say: (line) => process.stdout.write(`${line}\n`),
  };
}

/** The command a unit runs for this rtctl: /usr/bin/rtctl when installed there, else node and this script. */
export function findRtctlCommand(argv1: string | undefined = process.argv[1]): string[] {
  if (existsSync('/usr/bin/rtctl')) return ['/usr/bin/rtctl'];
  const script = argv1 !== undefined && existsSync(argv1) ? realpathSync(argv1) : undefined;
  if (script?.endsWith('.js')) return [process.execPath, script];
  // Running from the sources (tsx): the built script of this checkout.
  const built = join(dirname(fileURLToPath(import.meta.url)), '../../bin/rtctl.js');
  if (existsSync(built)) return [process.execPath, realpathSync(built)];
  throw new Error(
    'cannot tell which rtctl the unit should run: install the package (/usr/bin/rtctl), run the built rtctl (npm run build), or give --exec',
  );
}

function at(host: SystemdHost, path: string): string {
  return join(host.root, path);
}

/** Installs the unit and enables it when systemd runs. */
export function installSystemd(host: SystemdHost, command: readonly string[]): void {
  const unitPath = at(host, ENFORCER_UNIT_PATH);
  mkdirSync(dirname(unitPath), { recursive: true });
  writeFileSync(unitPath, renderEnforcerUnit({ command }), { mode: 0o644 });
  host.say(`wrote ${ENFORCER_UNIT_PATH}`);
  const configPath = at(host, UNIT_CONFIG_PATH);
  if (existsSync(configPath)) host.say(`kept ${UNIT_CONFIG_PATH}`);
  else {
    mkdirSync(dirname(configPath), { recursive: true, mode: 0o755 });
    writeFileSync(configPath, DEFAULT_ENFORCER_CONFIG, { mode: 0o644 });
    host.say(`wrote ${UNIT_CONFIG_PATH}`);
  }
  mkdirSync(at(host, POLICY_DIR), { recursive: true, mode: 0o755 });
  if (!host.systemdRunning()) {
    host.say(
      `systemd is not running here: ${ENFORCER_UNIT_NAME} is written but not enabled; once systemd runs: systemctl enable --now ${ENFORCER_UNIT_NAME}`,
    );
    return;
  }
  host.systemctl(['daemon-reload']);
  host.systemctl(['enable', '--now', ENFORCER_UNIT_NAME]);
  host.say(`enabled and started ${ENFORCER_UNIT_NAME}`);
}

/** Stops and disables the unit, removes it, and releases enforcement. */
export async function uninstallSystemd(host: SystemdHost): Promise<void> {
  const unitPath = at(host, ENFORCER_UNIT_PATH);
  if (host.systemdRunning()) {
    if (existsSync(unitPath)) host.systemctl(['disable', '--now', ENFORCER_UNIT_NAME]);
  } else {
    host.say(`systemd is not running here: nothing to stop or disable`);
  }
  if (existsSync(unitPath)) {
    rmSync(unitPath);
    host.say(`removed ${ENFORCER_UNIT_PATH}`);
  } else host.say(`no ${ENFORCER_UNIT_PATH}`);
  if (host.systemdRunning()) host.systemctl(['daemon-reload']);
  await host.release();
  host.say(`kept ${UNIT_CONFIG_PATH} and ${POLICY_DIR} (remove them by hand, or purge the package)`);
}
