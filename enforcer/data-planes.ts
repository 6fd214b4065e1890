// Every data plane the enforcer can run, in one array; `rtctl enforcer run --data-plane <name>` selects one,
// `auto` takes the first whose trial (rtctl probe) passes.
import { join } from 'node:path';
import type { Logger } from 'pino';
import { withUnavailableForms, type DataPlane } from './data-plane.js';
import { existsSync } from 'node:fs';
import { connect } from 'node:net';
import { BpfLsmPlane } from './bpf/bpf-lsm-plane.js';
import { ConfigError } from './config.js';
import { createFanotifyPlane } from './fanotify/fanotify-plane.js';
import { NativeArtifact, locateNativeArtifact } from './io/native-tools.js';
import { CompositePlane } from './network/composite-plane.js';
import { NetworkPlane } from './network/network-plane.js';
import { SyscallPlane } from './syscalls/syscall-plane.js';

/** What a data plane factory gets. */
export interface DataPlaneContext {
  /** Directory for sockets, logs and pinned state (`/run/rtctl`). */
  stateDir: string;
  logger: Logger;
}

/** A data plane the enforcer can run. */
export interface DataPlaneFactory {
  /** The `--data-plane` name. */
  name: string;
  description: string;
  /** Name of the `rtctl probe` check that must pass for `auto` to choose this plane. */
  probe: string;
  create(context: DataPlaneContext): Promise<DataPlane>;
  /** Whether a previous run left this plane enforcing (`rtctl enforcer stop` releases only those). */
  leftInForce(context: DataPlaneContext): Promise<boolean>;
}

/** The path of a prebuilt artifact a plane needs; a missing one is a usage error naming the build step. */
function requireArtifact(artifact: NativeArtifact, plane: string): string {
  const found = locateNativeArtifact(artifact);
  if (!found.ok) throw new ConfigError(`the ${plane} data plane cannot start: ${found.error}`);
  return found.path;
}

const fanotify: DataPlaneFactory = {
  name: 'fanotify',
  description:
    'fanotify permission events decided by a native helper, with cgroup BPF network programs when RTCTL_NETWORK_PIN_DIR is set (denials return EPERM)',
  probe: 'fanotify',
  create({ stateDir, logger }) {
    const files = createFanotifyPlane({
      helperPath: requireArtifact(NativeArtifact.fanotifyHelper, 'fanotify'),
      socketPath: join(stateDir, 'fanotify.sock'),
      helperLogPath: join(stateDir, 'fanotify-helper.log'),
      logger,
    });
    return Promise.resolve(withSyscallPlane(withNetworkPlane(files, stateDir, logger), stateDir, logger));
  },
  // The helper keeps enforcing while it listens on its socket; the system call plane while its programs are
  // pinned (sys_enter would cost every system call of a node nobody enforces any more).
  leftInForce: ({ stateDir }) =>
    new Promise((resolve) => {
      if (isSyscallPlanePinned()) {
        resolve(true);
        return;
      }
      const s = connect(join(stateDir, 'fanotify.sock'));
      s.once('connect', () => {
        s.destroy();
        resolve(true);
      });
      s.once('error', () => resolve(false));
    }),
};

/**
 * The fanotify plane together with the cgroup network plane (enforcer/network/) when it is configured:
 * RTCTL_NETWORK_PIN_DIR (a directory on bpffs, /sys/fs/bpf/rtctl-net in the DaemonSet) and, for host policies,
 * RTCTL_NETWORK_HOST_CGROUP (the cgroup v2 root in production). Unconfigured, network rules are not enforced
 * on this node, and the enforcer says so at start.
 */
/** Why network rules are not enforced on a node whose cgroup network plane is off (status and node report). */
export const NETWORK_PLANE_OFF =
  'the cgroup network plane is off on this node (RTCTL_NETWORK_PIN_DIR is not set to a bpffs directory)';
const NETWORK_HOST_OFF =
  'host network rules need RTCTL_NETWORK_HOST_CGROUP (the cgroup v2 root) on this node, which is not set';

function withNetworkPlane(files: DataPlane, stateDir: string, logger: Logger): DataPlane {
  const pinDir = process.env['RTCTL_NETWORK_PIN_DIR'];
  if (pinDir === undefined || pinDir === '') {
    logger.warn(
      'network rules are not enforced: the cgroup network plane is off (set RTCTL_NETWORK_PIN_DIR to a bpffs directory)',
    );
    return withUnavailableForms(files, (form) =>
      form.startsWith('network.') ? NETWORK_PLANE_OFF : undefined,
    );
  }
  const hostCgroup = process.env['RTCTL_NETWORK_HOST_CGROUP'];
  if (hostCgroup === undefined || hostCgroup === '')
    logger.warn('host network rules are not enforced: set RTCTL_NETWORK_HOST_CGROUP (the cgroup v2 root)');
  // RTCTL_NETWORK_CGROUP_ROOT: where the host's cgroup hierarchy is seen (the DaemonSet's hostPath of
  // /sys/fs/cgroup; its own /sys/fs/cgroup is its cgroup namespace); unset: the cgroup2 mount of mountinfo.
  const cgroupRoot = process.env['RTCTL_NETWORK_CGROUP_ROOT'];
  const network = new NetworkPlane({
    loaderPath: requireArtifact(NativeArtifact.networkLoader, 'network'),
    objectPath: requireArtifact(NativeArtifact.networkObject, 'network'),
    pinDir,
    stateDir,
    ...(hostCgroup === undefined || hostCgroup === '' ? {} : { hostCgroup }),
    ...(cgroupRoot === undefined || cgroupRoot === '' ? {} : { cgroupRoot }),
    warn: (message) => logger.warn(message),
  });
  // Where the kernel refused the task helper to the programs: fromSource and pts on network rules are off.
  const composite = withUnavailableForms(new CompositePlane([files, network]), (form) =>
    network.unavailableProcessForm(form),
  );
  if (hostCgroup !== undefined && hostCgroup !== '') return composite;
  return withUnavailableForms(composite, (form, kind) =>
    kind === 'RuntimeHostPolicy' && form.startsWith('network.') ? NETWORK_HOST_OFF : undefined,
  );
}

/** Whether RTCTL_SYSCALL_PIN_DIR holds the system call plane's pinned programs. */
function isSyscallPlanePinned(): boolean {
  const pinDir = process.env['RTCTL_SYSCALL_PIN_DIR'];
  return pinDir !== undefined && pinDir !== '' && existsSync(join(pinDir, 'prog_rts_sys_enter'));
}

/** Why system call rules and filelessExec are not enforced on a node whose system call plane is off. */
export const SYSCALL_PLANE_OFF =
  'the system call plane is off on this node (RTCTL_SYSCALL_PIN_DIR is not set to a bpffs directory)';

/** Why a Block syscalls rule is not denied on a BPF-LSM node whose system call plane has no LSM hooks attached. */
export const SYSCALL_DENY_OFF =
  'the system call plane could not attach its LSM hooks on this node: syscalls rules are audited, not denied';

/**
 * A data plane together with the system call plane (enforcer/syscalls/: BTF tracepoints that audit `syscalls`
 * rules and decide filelessExec) when RTCTL_SYSCALL_PIN_DIR names a bpffs directory (/sys/fs/bpf/rtctl-sys).
 * Unset, those forms are not enforced on this node, and the status and the node report say so.
 */
function withSyscallPlane(plane: DataPlane, stateDir: string, logger: Logger): DataPlane {
  const pinDir = process.env['RTCTL_SYSCALL_PIN_DIR'];
  if (pinDir === undefined || pinDir === '') {
    logger.warn(
      'syscalls rules and the filelessExec preset are not enforced: the system call plane is off (set RTCTL_SYSCALL_PIN_DIR to a bpffs directory)',
    );
    return withUnavailableForms(plane, (form) =>
      form.startsWith('syscalls.') || form === 'presets.filelessExec' ? SYSCALL_PLANE_OFF : undefined,
    );
  }
  // RTCTL_SYSCALL_CGROUP_ROOT: where the host's cgroup hierarchy is seen (the DaemonSet's hostPath of
  // /sys/fs/cgroup); unset: the cgroup2 mount of mountinfo.
  const cgroupRoot = process.env['RTCTL_SYSCALL_CGROUP_ROOT'];
  const syscalls = new SyscallPlane({
    loaderPath: requireArtifact(NativeArtifact.syscallLoader, 'syscall'),
    objectPath: requireArtifact(NativeArtifact.syscallObject, 'syscall'),
    pinDir,
    stateDir,
    ...(cgroupRoot === undefined || cgroupRoot === '' ? {} : { cgroupRoot }),
  });
  // The composite keeps what the wrapped plane says it has off (the network part, for one). On BPF-LSM, a Block
  // on a covered call is denied by the system call plane's own LSM hooks: where they did not attach, say so.
  const off = plane.unavailableForms;
  const composite = new CompositePlane([plane, syscalls]);
  const lsm = plane instanceof BpfLsmPlane;
  return withUnavailableForms(composite, (form, kind) =>
    lsm && form === 'syscalls.matchSyscalls' && syscalls.lsmChecked && syscalls.denyHooks === 0
      ? `${SYSCALL_DENY_OFF} (${syscalls.denyDetail})`
      : off?.(form, kind),
  );
}

const bpfLsm: DataPlaneFactory = {
  name: 'bpf-lsm',
  description:
    'BPF programs on LSM hooks deciding in the kernel (denials return EACCES); state pinned under /sys/fs/bpf',
  probe: 'bpf-lsm',
  create({ stateDir, logger }) {
    return Promise.resolve(
      withSyscallPlane(
        new BpfLsmPlane({ loaderPath: requireArtifact(NativeArtifact.bpfLoader, 'bpf-lsm') }),
        stateDir,
        logger,
      ),
    );
  },
  // Programs and maps stay in force while pinned below the loader's default pin directory.
  leftInForce: () => Promise.resolve(existsSync('/sys/fs/bpf/rtctl')),
};

/** All data planes, preferred first: BPF-LSM where a trial load works, fanotify elsewhere. */
export const DATA_PLANES: DataPlaneFactory[] = [bpfLsm, fanotify];

/** The factory of this name, if any. */
export function findDataPlane(name: string): DataPlaneFactory | undefined {
  return DATA_PLANES.find((p) => p.name === name);
}
