// Turns the enforcer DaemonSet of the install description into a `ctr run` command line, the way the kubelet
// would start its container: the image's entrypoint with the DaemonSet's args, the host PID namespace, every
// hostPath volume mounted at its mountPath (host paths the test must not touch are mapped to test folders),
// the container's capabilities exactly (containerd's defaults dropped unless the DaemonSet adds them), the
// runtime's default seccomp profile, a read-only root and no_new_privs. The test follows the manifest: a
// change to the DaemonSet changes what runs here.
import { readFileSync } from 'node:fs';
import { buildManifests } from '../../../install/manifests.js';
import { readValues } from '../../../install/values.js';

/** containerd's default capability set for a container (the OCI default spec it starts from). */
const CONTAINERD_DEFAULT_CAPS = [
  'CHOWN',
  'DAC_OVERRIDE',
  'FSETID',
  'FOWNER',
  'MKNOD',
  'NET_RAW',
  'SETGID',
  'SETUID',
  'SETFCAP',
  'SETPCAP',
  'NET_BIND_SERVICE',
  'SYS_CHROOT',
  'KILL',
  'AUDIT_WRITE',
];

interface Container {
  args: string[];
  env?: { name: string; value?: string; valueFrom?: unknown }[];
  securityContext: {
    readOnlyRootFilesystem?: boolean;
    allowPrivilegeEscalation?: boolean;
    privileged?: boolean;
    capabilities: { drop: string[]; add: string[] };
    seccompProfile?: { type: string };
  };
  volumeMounts: { name: string; mountPath: string; readOnly?: boolean }[];
}

interface PodSpec {
  hostPID?: boolean;
  containers: Container[];
  volumes: { name: string; hostPath?: { path: string }; emptyDir?: unknown }[];
}

/** What the DaemonSet's pod template asks for, read from the generated objects. */
export interface EnforcerPodShape {
  args: string[];
  /** The container's literal environment (`value` entries; `valueFrom` ones are the kubelet's to fill). */
  env: Record<string, string>;
  hostPID: boolean;
  capabilities: string[];
  mounts: { hostPath: string | undefined; mountPath: string; readOnly: boolean; volume: string }[];
  readOnlyRoot: boolean;
  noNewPrivileges: boolean;
  seccompDefault: boolean;
  privileged: boolean;
}

/** Reads the enforcer DaemonSet of a default installation. */
export function readEnforcerPodShape(): EnforcerPodShape {
  const { values, errors } = readValues({});
  if (errors.length > 0) throw new Error(`default values invalid: ${JSON.stringify(errors)}`);
  const ds = buildManifests(values).find(
    (o) => o['kind'] === 'DaemonSet' && (o['metadata'] as { name?: string }).name?.includes('enforcer'),
  );
  if (ds === undefined) throw new Error('no enforcer DaemonSet in the install description');
  const pod = (ds['spec'] as { template: { spec: PodSpec } }).template.spec;
  const [container] = pod.containers;
  if (container === undefined) throw new Error('the DaemonSet has no container');
  const sc = container.securityContext;
  return {
    args: container.args,
    env: Object.fromEntries(
      (container.env ?? []).flatMap((e) => (e.value === undefined ? [] : [[e.name, e.value] as const])),
    ),
    hostPID: pod.hostPID === true,
    capabilities: sc.capabilities.add,
    mounts: container.volumeMounts.map((m) => ({
      hostPath: pod.volumes.find((v) => v.name === m.name)?.hostPath?.path,
      mountPath: m.mountPath,
      readOnly: m.readOnly === true,
      volume: m.name,
    })),
    readOnlyRoot: sc.readOnlyRootFilesystem === true,
    noNewPrivileges: sc.allowPrivilegeEscalation === false,
    seccompDefault: sc.seccompProfile?.type === 'RuntimeDefault',
    privileged: sc.privileged === true,
  };
}

/** How the test stands in for the node: host paths it maps elsewhere, args it replaces. */
export interface NodeStandIn {
  /** hostPath → the test's path (paths not listed are the host's own). */
  hostPaths: Record<string, string>;
  /** emptyDir volumes: volume name → a test folder. */
  emptyDirs: Record<string, string>;
  /** `$(NAME)` substitutions (the kubelet's env expansion). */
  env: Record<string, string>;
  /** Args to replace, by flag name (`--listen` → `--listen=127.0.0.1:1234`); `null` removes the flag. */
  replaceArgs: Record<string, string | null>;
  /** Args appended (a policy directory instead of the API server, say). */
  extraArgs: string[];
  /** Extra bind mounts (source → destination, read-only). */
  extraMounts: { source: string; destination: string }[];
  /** The host PID namespace to join for `hostPID` (`/proc/<pid>/ns/pid` of a host process). */
  hostPidNamespace: string;
  /** Capabilities this host cannot grant (outside its bounding set): left out, and the caller says so. */
  ungrantable: readonly string[];
}

function flagName(arg: string): string {
  const eq = arg.indexOf('=');
  return eq < 0 ? arg : arg.slice(0, eq);
}

/** The `ctr run` arguments (before the image name) and the command (after the container id). */
export function ctrRunArgs(
  shape: EnforcerPodShape,
  node: NodeStandIn,
): { options: string[]; command: string[] } {
  if (shape.privileged) throw new Error('the enforcer DaemonSet must not be privileged');
  const options: string[] = [];
  if (shape.hostPID) options.push('--with-ns', `pid:${node.hostPidNamespace}`);
  if (shape.readOnlyRoot) options.push('--read-only');
  if (shape.seccompDefault) options.push('--seccomp');
  for (const [name, value] of Object.entries(shape.env)) options.push('--env', `${name}=${value}`);
  const wanted = new Set(shape.capabilities.filter((c) => !node.ungrantable.includes(c)));
  for (const cap of CONTAINERD_DEFAULT_CAPS) if (!wanted.has(cap)) options.push('--cap-drop', `CAP_${cap}`);
  for (const cap of wanted) options.push('--cap-add', `CAP_${cap}`);
  for (const m of shape.mounts) {
    const source =
      m.hostPath !== undefined ? (node.hostPaths[m.hostPath] ?? m.hostPath) : node.emptyDirs[m.volume];
    if (source === undefined) throw new Error(`no stand-in for volume ${m.volume}`);
    options.push(
      '--mount',
      `type=bind,src=${source},dst=${m.mountPath},options=rbind:${m.readOnly ? 'ro' : 'rw'}`,
    );
  }
  for (const m of node.extraMounts)
    options.push('--mount', `type=bind,src=${m.source},dst=${m.destination},options=rbind:ro`);
  const expand = (a: string): string =>
    a.replace(/\$\(([A-Z_][A-Z0-9_]*)\)/g, (whole, name: string) => node.env[name] ?? whole);
  const args: string[] = [];
  for (const a of shape.args) {
    const name = flagName(a);
    if (name in node.replaceArgs) {
      const replacement = node.replaceArgs[name];
      if (replacement !== null && replacement !== undefined) args.push(replacement);
    } else args.push(expand(a));
  }
  const command = [
    ...(shape.noNewPrivileges ? ['setpriv', '--no-new-privs'] : []),
    'rtctl',
    ...args,
    ...node.extraArgs,
  ];
  return { options, command };
}

const CAP_NAMES = [
  'CHOWN',
  'DAC_OVERRIDE',
  'DAC_READ_SEARCH',
  'FOWNER',
  'FSETID',
  'KILL',
  'SETGID',
  'SETUID',
  'SETPCAP',
  'LINUX_IMMUTABLE',
  'NET_BIND_SERVICE',
  'NET_BROADCAST',
  'NET_ADMIN',
  'NET_RAW',
  'IPC_LOCK',
  'IPC_OWNER',
  'SYS_MODULE',
  'SYS_RAWIO',
  'SYS_CHROOT',
  'SYS_PTRACE',
  'SYS_PACCT',
  'SYS_ADMIN',
  'SYS_BOOT',
  'SYS_NICE',
  'SYS_RESOURCE',
  'SYS_TIME',
  'SYS_TTY_CONFIG',
  'MKNOD',
  'LEASE',
  'AUDIT_WRITE',
  'AUDIT_CONTROL',
  'SETFCAP',
  'MAC_OVERRIDE',
  'MAC_ADMIN',
  'SYSLOG',
  'WAKE_ALARM',
  'BLOCK_SUSPEND',
  'AUDIT_READ',
  'PERFMON',
  'BPF',
  'CHECKPOINT_RESTORE',
];

/** The capability names of a `CapEff:`/`CapBnd:` hex mask from /proc/<pid>/status. */
export function decodeCapabilities(hexMask: string): string[] {
  const mask = BigInt(`0x${hexMask}`);
  return CAP_NAMES.filter((_, bit) => (mask >> BigInt(bit)) & 1n).sort();
}

/** The capabilities of this process's bounding set (what a container started from here can be given). */
export function readBoundingSet(): string[] {
  const status = readFileSync('/proc/self/status', 'utf8');
  return decodeCapabilities(/^CapBnd:\s+([0-9a-f]+)$/m.exec(status)?.[1] ?? '0');
}
