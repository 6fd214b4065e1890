// What the enforcer needs from its node, with the reason for each: the Linux capabilities the data planes use
// (instead of `privileged`) and the host paths it mounts. The DaemonSet is built from these tables and
// docs/install.md shows them.

/** A Linux capability (Kubernetes spelling, without CAP_) and who needs it. */
export interface CapabilityNeed {
  capability: string;
  planes: ReadonlyArray<'bpf-lsm' | 'fanotify' | 'all'>;
  reason: string;
}

/** The capabilities the enforcer container adds after dropping ALL. */
export const ENFORCER_CAPABILITIES: readonly CapabilityNeed[] = [
  {
    capability: 'SYS_ADMIN',
    planes: ['fanotify', 'bpf-lsm'],
    reason:
      'fanotify_init with permission classes and FAN_MARK_FILESYSTEM; BPF-LSM attach and the bpffs pins on kernels that gate them on it',
  },
  {
    capability: 'BPF',
    planes: ['all'],
    reason:
      'bpf(): load the LSM programs, the cgroup network programs and the system call tracepoints; create and update maps',
  },
  {
    capability: 'PERFMON',
    planes: ['all'],
    reason:
      'tracing-class programs (BPF_PROG_TYPE_LSM, the BTF tracepoints of the system call plane) and their helpers need it beside CAP_BPF',
  },
  {
    capability: 'SYS_RESOURCE',
    planes: ['bpf-lsm'],
    reason: 'raise RLIMIT_MEMLOCK for maps on kernels before 5.11 (no memcg accounting)',
  },
  {
    capability: 'SYS_PTRACE',
    planes: ['all'],
    reason: "read other processes' /proc/<pid>/exe, root and ns links to map processes to containers",
  },
  {
    capability: 'DAC_READ_SEARCH',
    planes: ['all'],
    reason: "read /proc/<pid> entries and container files whose modes exclude root's DAC override",
  },
];

/** Where the DaemonSet mounts the host's /sys/fs/cgroup. */
export const HOST_CGROUP_MOUNT = '/host/sys/fs/cgroup';

/** Where the network plane pins (a folder of the bpffs mount). */
export const NETWORK_PIN_DIR = '/sys/fs/bpf/rtctl-net';

/** Where the system call plane pins (a folder of the bpffs mount). */
export const SYSCALL_PIN_DIR = '/sys/fs/bpf/rtctl-sys';

/**
 * The environment that turns the cgroup network plane on (enforcer/data-planes.ts): its pin folder, the
 * cgroup hierarchy containers are found in, and the cgroup host policies attach to (the hierarchy's root).
 */
export function networkPlaneEnvironment(cgroupRoot: string): { name: string; value: string }[] {
  return [
    { name: 'RTCTL_NETWORK_PIN_DIR', value: NETWORK_PIN_DIR },
    { name: 'RTCTL_NETWORK_CGROUP_ROOT', value: cgroupRoot },
    { name: 'RTCTL_NETWORK_HOST_CGROUP', value: cgroupRoot },
  ];
}

/**
 * The environment that turns the system call plane on (enforcer/data-planes.ts, enforcer/syscalls/): its pin
 * folder and the cgroup hierarchy containers are found in (their cgroup ids key its workload map).
 */
export function syscallPlaneEnvironment(cgroupRoot: string): { name: string; value: string }[] {
  return [
    { name: 'RTCTL_SYSCALL_PIN_DIR', value: SYSCALL_PIN_DIR },
    { name: 'RTCTL_SYSCALL_CGROUP_ROOT', value: cgroupRoot },
  ];
}

/** A host path the enforcer mounts. */
export interface HostMount {
  name: string;
  hostPath: string;
  type: 'Directory' | 'DirectoryOrCreate' | 'Socket';
  mountPath: string;
  readOnly: boolean;
  reason: string;
}

/** The host paths. /proc is not among them: with hostPID the container's own /proc is the host's. */
export const ENFORCER_MOUNTS: readonly HostMount[] = [
  {
    name: 'bpffs',
    hostPath: '/sys/fs/bpf',
    type: 'Directory',
    mountPath: '/sys/fs/bpf',
    readOnly: false,
    reason:
      'BPF-LSM and the cgroup network plane pin their programs and maps here, so enforcement outlives an enforcer restart (a node without a bpffs there gets one mounted by the network plane, in the container only)',
  },
  {
    name: 'cgroup',
    hostPath: '/sys/fs/cgroup',
    type: 'Directory',
    mountPath: HOST_CGROUP_MOUNT,
    readOnly: true,
    reason:
      "the cgroup network plane attaches to the workloads' cgroups and, for host policies, to the root of the hierarchy (the container's own /sys/fs/cgroup shows only its cgroup namespace)",
  },
  {
    name: 'btf',
    hostPath: '/sys/kernel/btf',
    type: 'Directory',
    mountPath: '/sys/kernel/btf',
    readOnly: true,
    reason: "the running kernel's BTF for CO-RE relocation and the trial load of rtctl probe",
  },
  {
    name: 'containerd-socket',
    hostPath: '/run/containerd/containerd.sock',
    type: 'Socket',
    mountPath: '/run/containerd/containerd.sock',
    readOnly: false,
    reason: 'list the containers of the node and their init PIDs (ctr)',
  },
  {
    name: 'state',
    hostPath: '/run/rtctl',
    type: 'DirectoryOrCreate',
    mountPath: '/run/rtctl',
    readOnly: false,
    reason: 'data plane sockets, helper logs and state kept across enforcer restarts',
  },
  {
    name: 'alert-log',
    hostPath: '/var/log/rtctl',
    type: 'DirectoryOrCreate',
    mountPath: '/var/log/rtctl',
    readOnly: false,
    reason: 'the NDJSON alert log, replayed on restart',
  },
];
