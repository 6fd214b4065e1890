// The systemd unit of the node enforcer (systemd mode: hosts, VMs, containers without Kubernetes), one text
// for `rtctl install --systemd` and the Debian package. Hardening is as tight as the data planes allow:
// - capabilities: fanotify_init and mount marks (CAP_SYS_ADMIN), /proc/<pid>/{root,exe,syscall} of other
//   processes (CAP_SYS_PTRACE), files the helper reads for decisions (CAP_DAC_READ_SEARCH), the alert socket
//   and log's group (CAP_CHOWN), BPF-LSM (CAP_BPF, CAP_PERFMON, CAP_NET_ADMIN for cgroup programs); nothing
//   else. CAP_SYS_RESOURCE is not kept: BPF maps are charged to the memory cgroup since Linux 5.11, and the
//   real-kernel test (test/install/systemd/systemd-mode.test.ts) runs without it;
// - the file system is read-only but for the state directory (/run/rtctl, kept across restarts because the
//   data plane keeps enforcing while the process restarts), the alert log folder (/var/log/rtctl) and the
//   BPF file system (pins);
// - the cgroup network plane is on (RTCTL_NETWORK_PIN_DIR on the bpffs systemd mounts at /sys/fs/bpf; host
//   policies attach to the cgroup v2 root, /sys/fs/cgroup or its `unified` mount on a hybrid host), and so
//   is the system call plane (RTCTL_SYSCALL_PIN_DIR, tracepoints that audit `syscalls` rules and decide
//   filelessExec);
// - KillMode=process: stopping or restarting the service leaves the fanotify helper enforcing (docs/enforcer.md
//   "Restarts"); `rtctl uninstall --systemd` and the package's removal release it (`rtctl enforcer stop`).
// Start-up order: after containerd when it is installed (Wants/After, not Requires: a VM without a container
// runtime still enforces host policies).

import { NETWORK_PIN_DIR, SYSCALL_PIN_DIR } from '../node-access.js';

/** The unit's name. */
export const ENFORCER_UNIT_NAME = 'rtctl-enforcer.service';

/** Where `rtctl install --systemd` writes the unit (the administrator's unit folder). */
export const ENFORCER_UNIT_PATH = `/etc/systemd/system/${ENFORCER_UNIT_NAME}`;

/** Where the Debian package installs it (the vendor unit folder of Debian bookworm). */
export const PACKAGED_UNIT_PATH = `/lib/systemd/system/${ENFORCER_UNIT_NAME}`;

/** The configuration file the unit's enforcer reads. */
export const UNIT_CONFIG_PATH = '/etc/rtctl/enforcer.yaml';

/** The capabilities the unit keeps; every other one is dropped from the bounding set. */
export const ENFORCER_CAPABILITIES = [
  'CAP_SYS_ADMIN',
  'CAP_SYS_PTRACE',
  'CAP_DAC_READ_SEARCH',
  'CAP_CHOWN',
  'CAP_BPF',
  'CAP_PERFMON',
  'CAP_NET_ADMIN',
] as const;

/** What the unit runs. */
export interface EnforcerUnitOptions {
  /** The rtctl command: an absolute path, or an interpreter and script (`/usr/bin/node /opt/rtctl/dist/bin/rtctl.js`). */
  command: readonly string[];
  /** The configuration file (default /etc/rtctl/enforcer.yaml). */
  config?: string;
}

/** Quotes one ExecStart word the way systemd reads it. */
function quoteWord(word: string): string {
  if (/^[A-Za-z0-9_@%+=:,./-]+$/.test(word)) return word;
  return `"${word.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;
}

/** The unit file's text. Deterministic: the same options give the same bytes. */
export function renderEnforcerUnit(options: EnforcerUnitOptions): string {
  const exec = [...options.command, 'enforcer', 'run', '--config', options.config ?? UNIT_CONFIG_PATH]
    .map(quoteWord)
    .join(' ');
  return `# rtctl node enforcer (systemd mode). Written by rtctl; \`rtctl uninstall --systemd\` removes it.
[Unit]
Description=rtctl node enforcer (runtime workload security for this host and its containers)
Documentation=file:/usr/share/doc/rtctl/enforcer.md
Wants=containerd.service
After=containerd.service local-fs.target network.target
StartLimitIntervalSec=60
StartLimitBurst=5

[Service]
Type=simple
ExecStart=${exec}
Environment=RTCTL_NETWORK_PIN_DIR=${NETWORK_PIN_DIR}
Environment=RTCTL_NETWORK_HOST_CGROUP=/sys/fs/cgroup
Environment=RTCTL_SYSCALL_PIN_DIR=${SYSCALL_PIN_DIR}
Restart=on-failure
RestartSec=2
TimeoutStopSec=30
KillMode=process
UMask=0027
RuntimeDirectory=rtctl
RuntimeDirectoryMode=0750
RuntimeDirectoryPreserve=yes
LogsDirectory=rtctl
LogsDirectoryMode=0750
ProtectSystem=strict
ReadWritePaths=-/sys/fs/bpf
ProtectHome=read-only
PrivateTmp=yes
PrivateDevices=yes
NoNewPrivileges=yes
CapabilityBoundingSet=${ENFORCER_CAPABILITIES.join(' ')}
AmbientCapabilities=
ProtectClock=yes
ProtectHostname=yes
ProtectKernelLogs=yes
ProtectKernelModules=yes
RestrictRealtime=yes
RestrictSUIDSGID=yes
RestrictNamespaces=yes
LockPersonality=yes
RestrictAddressFamilies=AF_UNIX AF_INET AF_INET6
SystemCallArchitectures=native

[Install]
WantedBy=multi-user.target
`;
}

/** The ExecStart command line of a unit text, split into words as systemd splits it (quotes honoured). */
export function parseExecStart(unit: string): string[] {
  const line = unit.split('\n').find((l) => l.startsWith('ExecStart='));
  if (line === undefined) throw new Error('the unit has no ExecStart=');
  const text = line.slice('ExecStart='.length).replace(/^[-@:+!]+/, '');
  const words: string[] = [];
  const re = /"((?:[^"\\]|\\.)*)"|'([^']*)'|(\S+)/g;
  for (let m = re.exec(text); m !== null; m = re.exec(text)) {
    words.push(m[1] !== undefined ? m[1].replace(/\\(.)/g, '$1') : (m[2] ?? m[3] ?? ''));
  }
  return words;
}

/** The value of a `Key=` line of the unit (the last one wins, as in systemd), or undefined. */
export function readUnitSetting(unit: string, key: string): string | undefined {
  const lines = unit.split('\n').filter((l) => l.startsWith(`${key}=`));
  return lines.at(-1)?.slice(key.length + 1);
}

/** The `NAME=value` assignments of the unit's `Environment=` lines, in order (what systemd passes). */
export function readUnitEnvironment(unit: string): string[] {
  return unit
    .split('\n')
    .filter((l) => l.startsWith('Environment='))
    .flatMap((l) => l.slice('Environment='.length).split(/\s+/))
    .filter((w) => w !== '');
}
