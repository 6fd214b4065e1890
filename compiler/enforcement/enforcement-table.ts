// The one table of what each target enforces: every rule form and option of the policy schema × the four
// targets (the BPF-LSM and fanotify data planes, the AppArmor and SELinux backends), each cell enforced,
// audited only or not enforced. It states what the code does today (enforcer/bpf/rtctl-lsm.bpf.c,
// enforcer/native/fanotify-helper.c, enforcer/network/, enforcer/syscalls/, compiler/backends/apparmor and
// selinux) and drives the lint and admission warnings (RT3016, RT3018), `--require-enforced`, the AppArmor and
// SELinux backend warnings, the enforcer's status, docs/enforcement.md and the test generators. Nothing else
// lists these facts.
import { Code } from '../diagnostics/codes/code.js';
import { PolicyKind } from '../ir/rule-set.js';
import { PROTOCOL_NAMES } from '../schema/policy-schema.js';

/** The places a policy is enforced: two kernel data planes of the enforcer and two LSM backends. */
export const EnforcementTarget = {
  BpfLsm: 'bpf-lsm',
  Fanotify: 'fanotify',
  Apparmor: 'apparmor',
  Selinux: 'selinux',
} as const;
export type EnforcementTarget = (typeof EnforcementTarget)[keyof typeof EnforcementTarget];

/** What a target does with a rule form. */
export const EnforcementLevel = {
  /** The target decides it as the policy semantics say (Block denies, Audit alerts, Allow allows). */
  Enforced: 'enforced',
  /** The target reports matching operations but cannot deny them. */
  AuditedOnly: 'audited-only',
  /** The target neither decides nor reports it. */
  NotEnforced: 'not-enforced',
} as const;
export type EnforcementLevel = (typeof EnforcementLevel)[keyof typeof EnforcementLevel];

/** Weakest first: a rule gets the weakest level of its forms. */
export const LEVEL_ORDER: readonly EnforcementLevel[] = [
  EnforcementLevel.NotEnforced,
  EnforcementLevel.AuditedOnly,
  EnforcementLevel.Enforced,
];

/** What an AppArmor or SELinux backend does with a form it cannot express. */
export const BackendEffect = {
  /** The rule is not written. */
  LeftOut: 'left-out',
  /** The rule is written without this condition. */
  ConditionDropped: 'condition-dropped',
  /** Directory sources are dropped; the rule keeps its path sources, and is left out when it has none. */
  SourcesDropped: 'sources-dropped',
  /** The rule is written as it is, but the target reads it narrower: some sockets it names are not matched. */
  Narrowed: 'narrowed',
} as const;
export type BackendEffect = (typeof BackendEffect)[keyof typeof BackendEffect];

/** One cell: a target's level for a form, and for gaps, why and what happens. */
export interface EnforcementCell {
  level: EnforcementLevel;
  /** Why the target does not enforce the form (short; shown in warnings, status and docs); on an enforced
   * cell, a note for the docs. */
  reason?: string;
  /** AppArmor and SELinux gaps: the backend diagnostic that reports it and what the backend writes. */
  backend?: { code: Code; effect: BackendEffect };
}

/** What one target is. */
export interface TargetInfo {
  target: EnforcementTarget;
  title: string;
  /** The policy kinds the target carries at all; the others are not compiled or loaded there. */
  policyKinds: readonly PolicyKind[];
  /** Why the other kinds are not carried. */
  kindsNote?: string;
  /** The documentation page of the target. */
  doc: string;
}

/** The targets, in the order warnings and docs name them. */
export const ENFORCEMENT_TARGETS: readonly TargetInfo[] = [
  {
    target: EnforcementTarget.BpfLsm,
    title: 'BPF-LSM data plane',
    policyKinds: [PolicyKind.RuntimePolicy, PolicyKind.RuntimeHostPolicy],
    doc: 'bpf-lsm.md',
  },
  {
    target: EnforcementTarget.Fanotify,
    title: 'fanotify data plane',
    policyKinds: [PolicyKind.RuntimePolicy, PolicyKind.RuntimeHostPolicy],
    doc: 'enforcer.md',
  },
  {
    target: EnforcementTarget.Apparmor,
    title: 'AppArmor profiles',
    policyKinds: [PolicyKind.RuntimePolicy],
    kindsNote: 'AppArmor profiles attach to containers: there is no one program to attach a host policy to',
    doc: 'apparmor.md',
  },
  {
    target: EnforcementTarget.Selinux,
    title: 'SELinux modules',
    policyKinds: [PolicyKind.RuntimeHostPolicy],
    kindsNote: 'SELinux modules carry host policies only; pod policies go to AppArmor and the data planes',
    doc: 'selinux.md',
  },
];

/** The entry of a target. */
export function getTargetInfo(target: EnforcementTarget): TargetInfo {
  const info = ENFORCEMENT_TARGETS.find((t) => t.target === target);
  if (info === undefined) throw new Error(`unknown enforcement target ${target}`);
  return info;
}

/** True when the target compiles or loads policies of this kind at all. */
export function isKindCarried(target: EnforcementTarget, kind: PolicyKind): boolean {
  return getTargetInfo(target).policyKinds.includes(kind);
}

/** Parses a target name (`bpf-lsm`, `fanotify`, `apparmor`, `selinux`). */
export function findEnforcementTarget(name: string): EnforcementTarget | undefined {
  return ENFORCEMENT_TARGETS.find((t) => t.target === name)?.target;
}

type Cells = Record<EnforcementTarget, EnforcementCell>;

/** One row: a rule form or option of the schema. */
export interface EnforcementRow {
  /** Stable id (`file.matchDirectories.recursive`, `fromSource.dir`, `network.matchProtocols.sctp`). */
  form: string;
  /** How warnings name it (`fromSource dir`, `protocol sctp`). */
  title: string;
  /** The group it is listed under in docs/enforcement.md. */
  group: 'process' | 'file' | 'network' | 'capabilities' | 'syscalls' | 'presets' | 'device' | 'option';
  /** For options: what the rule does on a target that drops the option (shown when no target enforces it). */
  without?: string;
  targets: Cells;
}

const ENFORCED: EnforcementCell = { level: EnforcementLevel.Enforced };
const all = (cell: EnforcementCell): Cells => ({
  'bpf-lsm': cell,
  fanotify: cell,
  apparmor: cell,
  selinux: cell,
});
const notEnforced = (reason: string, backend?: EnforcementCell['backend']): EnforcementCell =>
  backend === undefined
    ? { level: EnforcementLevel.NotEnforced, reason }
    : { level: EnforcementLevel.NotEnforced, reason, backend };
/**
 * A cell where the target decides only some of the sockets the rule names: it cannot be shown as enforced
 * (a rule is never shown as applied where it is not), so it is `not-enforced`, and the reason says what is.
 */
const partly = (reason: string, backend?: EnforcementCell['backend']): EnforcementCell =>
  notEnforced(`partly: ${reason}`, backend);
const leftOut = (code: Code) => ({ code, effect: BackendEffect.LeftOut });
const dropped = (code: Code) => ({ code, effect: BackendEffect.ConditionDropped });

/** Process and File path forms: every target decides them (SELinux through file contexts). */
const pathForm = (form: string, title: string, group: 'process' | 'file'): EnforcementRow => ({
  form,
  title,
  group,
  targets: all(ENFORCED),
});

/** Protocols the BPF-LSM programs name a socket by (protocol_name() in rtctl-lsm.bpf.c), and `all`. */
const BPF_PROTOCOLS = new Set(['tcp', 'udp', 'icmp', 'raw', 'all']);
/** How the BPF-LSM programs name sockets, where a rule matches more than its name says. */
const BPF_NOTES: Readonly<Record<string, string>> = {
  tcp: 'any inet stream socket (SCTP and MPTCP streams too)',
  icmp: 'ping sockets and raw ICMP sockets (a raw ICMP socket is named raw and icmp), ICMPv6 too',
  raw: 'inet raw sockets (raw ICMP ones are icmp too) and packet sockets',
  all: 'inet, inet6 and packet sockets; unix sockets are never decided',
};
/** Protocols an AppArmor 3 network rule can name (as protocol or socket type), and `all` (`network,`). */
const APPARMOR_PROTOCOLS = new Set([
  'tcp',
  'udp',
  'icmp',
  'raw',
  'stream',
  'dgram',
  'rdm',
  'seqpacket',
  'packet',
  'all',
]);

/**
 * Where AppArmor's own reading of a network name differs from the socket names of docs/semantics.md
 * (apparmor_parser's mapping: `icmp` is inet raw protocol 1, `udp` every inet datagram socket, `raw` the raw
 * type of every family). A raw ICMPv4 socket matches both `network raw` and `network icmp`, as on the planes.
 */
const APPARMOR_NOTES: Readonly<Record<string, string>> = {
  udp: 'AppArmor reads udp as every inet and inet6 datagram socket, ping sockets too (so an Allow udp rule of a least-permissive workload lets ping sockets through)',
};
/**
 * Names AppArmor reads narrower than docs/semantics.md, so that some sockets the rule names are neither denied
 * nor reported: only partly enforced, which the table must not show as enforced (apparmor_parser 3.0 cannot
 * name a family, type and protocol together, so the backend cannot widen the rule to match).
 */
const APPARMOR_PARTLY: Readonly<Record<string, string>> = {
  icmp: 'AppArmor reads icmp as IPv4 raw ICMP sockets only: ping sockets and ICMPv6 sockets are neither denied nor reported',
  raw: 'AppArmor reads raw as the raw socket type of every family (netlink too), but packet datagram sockets are neither denied nor reported',
};
/** Sockets as the cgroup network programs of the fanotify target name them (socket_name() in rtctl-net.bpf.c). */
const CGROUP_PROTOCOLS = new Set(['tcp', 'udp', 'icmp', 'raw', 'all']);
const CGROUP_NOTES: Readonly<Record<string, string>> = {
  tcp: 'cgroup sock_create: any inet stream socket (SCTP and MPTCP streams too); denials return EPERM',
  udp: 'cgroup sock_create: any inet datagram socket that is not a ping socket; denials return EPERM',
  icmp: 'cgroup sock_create: ping sockets and raw ICMP sockets (a raw ICMP socket is named raw and icmp), ICMPv6 too; denials return EPERM',
};
/** Names of sockets cgroup sock_create never sees: packet sockets (AF_PACKET) are created without it. */
const CGROUP_PARTLY: Readonly<Record<string, string>> = {
  raw: 'cgroup sock_create denies inet raw sockets (EPERM; raw ICMP ones are icmp too), but packet sockets (AF_PACKET: tcpdump, arping) never reach it and are neither denied nor reported',
  all: 'cgroup sock_create decides inet and inet6 sockets (EPERM), but packet sockets (AF_PACKET) never reach it and are neither denied nor reported; unix sockets are never decided',
};
const FANOTIFY_NO_CAPABILITIES = notEnforced('fanotify has no capability hook');
const SELINUX_NETWORK_CAPABILITIES = notEnforced(
  "would change the base policy's own domains",
  leftOut(Code.selinuxNetworkCapabilities),
);

function protocolRow(protocol: string): EnforcementRow {
  return {
    form: `network.matchProtocols.${protocol}`,
    title: `protocol ${protocol}`,
    group: 'network',
    targets: {
      'bpf-lsm': BPF_PROTOCOLS.has(protocol)
        ? {
            level: EnforcementLevel.Enforced,
            ...(BPF_NOTES[protocol] === undefined ? {} : { reason: BPF_NOTES[protocol] }),
          }
        : notEnforced('the LSM hooks name sockets tcp, udp, icmp or raw only; the rule never matches'),
      fanotify: CGROUP_PROTOCOLS.has(protocol)
        ? CGROUP_PARTLY[protocol] !== undefined
          ? partly(CGROUP_PARTLY[protocol])
          : {
              level: EnforcementLevel.Enforced,
              ...(CGROUP_NOTES[protocol] === undefined ? {} : { reason: CGROUP_NOTES[protocol] }),
            }
        : notEnforced(
            'the cgroup network programs name sockets tcp, udp, icmp or raw only; the rule never matches',
          ),
      apparmor: APPARMOR_PROTOCOLS.has(protocol)
        ? APPARMOR_PARTLY[protocol] !== undefined
          ? partly(APPARMOR_PARTLY[protocol], {
              code: Code.apparmorUnsupportedProtocol,
              effect: BackendEffect.Narrowed,
            })
          : {
              level: EnforcementLevel.Enforced,
              ...(APPARMOR_NOTES[protocol] === undefined ? {} : { reason: APPARMOR_NOTES[protocol] }),
            }
        : notEnforced('AppArmor network rules cannot name it', leftOut(Code.apparmorUnsupportedProtocol)),
      selinux: SELINUX_NETWORK_CAPABILITIES,
    },
  };
}

const NO_DATA_PLANE = (what: string): EnforcementCell => notEnforced(`no data plane ${what}`);

/** System call rules on the fanotify plane: the tp_btf sys_enter program of the syscall plane (enforcer/syscalls/). */
const SYSCALLS_AUDITED: EnforcementCell = {
  level: EnforcementLevel.AuditedOnly,
  reason:
    'reported by the system call plane (RTCTL_SYSCALL_PIN_DIR), a BTF tracepoint on sys_enter filtered in the kernel by call and workload; the call is not denied: a Block rule is reported as an audit',
};
/**
 * System call rules on the BPF-LSM plane: sys_enter decides a call an LSM hook covers (compiler/enforcement/
 * syscall-coverage.ts) and the hook denies a Block with EACCES; the other calls are audited (syscalls.uncovered).
 */
const SYSCALLS_DENIED: EnforcementCell = {
  level: EnforcementLevel.Enforced,
  reason:
    'the system call plane decides the call at sys_enter and its BPF-LSM hook denies a Block with EACCES, for the calls of docs/syscalls.md; fromSource needs an exec seen by the plane',
};
/**
 * `syscalls.matchPaths` on the BPF-LSM plane: the LSM hook the call reaches decides its path rules on the object
 * the kernel acts on (named from its dentries and mounts up to the caller's root), so a string another thread
 * rewrites, a symlinked directory or a relative path decide nothing.
 */
const SYSCALL_PATHS_DENIED: EnforcementCell = {
  level: EnforcementLevel.Enforced,
  reason:
    "the LSM hook the call reaches decides the path on the object the kernel acts on (its name from the kernel's dentries, as the caller's root names it: symlinks and relative paths resolved, the string passed plays no part) and denies a Block with EACCES, for the calls of docs/syscalls.md; an object it cannot name (outside the caller's root, over PATH_MAX) is reported, not denied",
};
/** filelessExec on both data planes: sched_process_exec of the syscall plane. */
const FILELESS_ENFORCED: EnforcementCell = {
  level: EnforcementLevel.Enforced,
  reason:
    'the system call plane (RTCTL_SYSCALL_PIN_DIR) sees the exec of a file without links (memfd, O_TMPFILE, deleted) at sched_process_exec; Block kills the process (SIGKILL) before its first instruction, the exec call itself returns no error',
};

/** Every rule form and option, grouped as the schema is. */
export const ENFORCEMENT_TABLE: readonly EnforcementRow[] = [
  pathForm('process.matchPaths.path', 'process path', 'process'),
  pathForm('process.matchPaths.execname', 'process execname', 'process'),
  pathForm('process.matchDirectories', 'process directory', 'process'),
  pathForm('process.matchDirectories.recursive', 'process directory (recursive)', 'process'),
  pathForm('process.matchPatterns', 'process pattern', 'process'),
  pathForm('file.matchPaths', 'file path', 'file'),
  pathForm('file.matchDirectories', 'file directory', 'file'),
  pathForm('file.matchDirectories.recursive', 'file directory (recursive)', 'file'),
  pathForm('file.matchPatterns', 'file pattern', 'file'),
  ...PROTOCOL_NAMES.map(protocolRow),
  {
    form: 'network.matchAddresses',
    title: 'address rules',
    group: 'network',
    targets: {
      'bpf-lsm': {
        level: EnforcementLevel.Enforced,
        reason:
          'socket_connect and socket_sendmsg LSM hooks look the destination up in an LPM trie (sends that name an address: udp, icmp, raw, TCP Fast Open); denials return EACCES',
      },
      fanotify: {
        level: EnforcementLevel.Enforced,
        reason: 'cgroup connect4/6 and sendmsg4/6 programs; denials return EPERM',
      },
      apparmor: notEnforced(
        'AppArmor network rules cannot name addresses',
        leftOut(Code.apparmorConditionIgnored),
      ),
      selinux: SELINUX_NETWORK_CAPABILITIES,
    },
  },
  {
    form: 'network.matchDNSQueries',
    title: 'DNS query rules',
    group: 'network',
    targets: {
      'bpf-lsm': NO_DATA_PLANE('inspects DNS queries'),
      fanotify: NO_DATA_PLANE('inspects DNS queries'),
      apparmor: notEnforced('AppArmor cannot see DNS queries', leftOut(Code.apparmorConditionIgnored)),
      selinux: notEnforced('SELinux cannot see DNS queries', leftOut(Code.selinuxConditionIgnored)),
    },
  },
  {
    form: 'capabilities.matchCapabilities',
    title: 'capability rules',
    group: 'capabilities',
    targets: {
      'bpf-lsm': ENFORCED,
      fanotify: FANOTIFY_NO_CAPABILITIES,
      apparmor: ENFORCED,
      selinux: SELINUX_NETWORK_CAPABILITIES,
    },
  },
  ...(['matchSyscalls', 'matchPaths'] as const).map((list): EnforcementRow => ({
    form: `syscalls.${list}`,
    title: `syscalls ${list}`,
    group: 'syscalls',
    targets: {
      'bpf-lsm': list === 'matchSyscalls' ? SYSCALLS_DENIED : SYSCALL_PATHS_DENIED,
      fanotify: SYSCALLS_AUDITED,
      apparmor: notEnforced('AppArmor has no system call rules', leftOut(Code.apparmorConditionIgnored)),
      selinux: notEnforced('SELinux has no system call rules', leftOut(Code.selinuxConditionIgnored)),
    },
  })),
  {
    form: 'syscalls.uncovered',
    title: 'Block on a system call no LSM hook covers',
    group: 'syscalls',
    targets: {
      'bpf-lsm': {
        level: EnforcementLevel.AuditedOnly,
        reason:
          'no BPF-LSM hook of the system call plane is reached by it (docs/syscalls.md); reported, not denied',
      },
      fanotify: SYSCALLS_AUDITED,
      apparmor: notEnforced('AppArmor has no system call rules', leftOut(Code.apparmorConditionIgnored)),
      selinux: notEnforced('SELinux has no system call rules', leftOut(Code.selinuxConditionIgnored)),
    },
  },
  {
    form: 'presets.filelessExec',
    title: 'preset filelessExec',
    group: 'presets',
    targets: {
      'bpf-lsm': FILELESS_ENFORCED,
      fanotify: FILELESS_ENFORCED,
      apparmor: notEnforced('not expressible in AppArmor', leftOut(Code.apparmorConditionIgnored)),
      selinux: notEnforced('not expressible in SELinux', leftOut(Code.selinuxConditionIgnored)),
    },
  },
  {
    form: 'presets',
    title: 'presets',
    group: 'presets',
    targets: {
      'bpf-lsm': NO_DATA_PLANE('implements this preset'),
      fanotify: NO_DATA_PLANE('implements this preset'),
      apparmor: notEnforced('not expressible in AppArmor', leftOut(Code.apparmorConditionIgnored)),
      selinux: notEnforced('not expressible in SELinux', leftOut(Code.selinuxConditionIgnored)),
    },
  },
  {
    form: 'device.matchDevice',
    title: 'device rules',
    group: 'device',
    targets: {
      'bpf-lsm': NO_DATA_PLANE('decides USB devices'),
      fanotify: NO_DATA_PLANE('decides USB devices'),
      apparmor: notEnforced('AppArmor does not mediate USB devices', leftOut(Code.apparmorConditionIgnored)),
      selinux: notEnforced('not expressible in the module', leftOut(Code.selinuxConditionIgnored)),
    },
  },
  {
    form: 'path.procSys',
    title: 'a path on /proc or /sys',
    group: 'option',
    without: 'the rule never matches',
    targets: {
      'bpf-lsm': ENFORCED,
      fanotify: notEnforced(
        "the fanotify helper marks the workloads' own mounts; /proc and /sys (procfs, sysfs) are not marked, so the rule never matches",
      ),
      apparmor: ENFORCED,
      selinux: notEnforced(
        'file_contexts do not label /proc and /sys (genfscon does)',
        leftOut(Code.selinuxUnrepresentablePath),
      ),
    },
  },
  {
    form: 'path.dev',
    title: 'a path on /dev',
    group: 'option',
    without: 'the rule never matches',
    targets: {
      'bpf-lsm': ENFORCED,
      fanotify: notEnforced(
        "the fanotify helper marks the workloads' own mounts; /dev (devtmpfs, and /dev/shm) is not marked, so the rule never matches",
      ),
      apparmor: ENFORCED,
      selinux: ENFORCED,
    },
  },
  {
    form: 'fromSource.path',
    title: 'fromSource path',
    group: 'option',
    targets: all(ENFORCED),
  },
  ...(['fromSource.dir', 'fromSource.dir.recursive'] as const).map((form): EnforcementRow => ({
    form,
    title: form === 'fromSource.dir' ? 'fromSource dir' : 'fromSource dir (recursive)',
    group: 'option',
    targets: {
      'bpf-lsm': ENFORCED,
      fanotify: ENFORCED,
      apparmor: notEnforced('a glob exec transition would conflict with the other exec rules', {
        code: Code.apparmorSourceDirectory,
        effect: BackendEffect.SourcesDropped,
      }),
      selinux: notEnforced('a domain needs the entrypoint label on each binary', {
        code: Code.selinuxFromSource,
        effect: BackendEffect.SourcesDropped,
      }),
    },
  })),
  {
    form: 'network.fromSource',
    title: 'fromSource on a network rule',
    group: 'option',
    without: 'the network rule never matches',
    targets: {
      'bpf-lsm': ENFORCED,
      fanotify: {
        level: EnforcementLevel.Enforced,
        reason:
          'the cgroup network programs name the executable (task->mm->exe_file, walked up to the process root: container paths) and look its path and directories up in the workload sources; on kernels before 6.10 they cannot, and the node status says so',
      },
      apparmor: ENFORCED,
      selinux: SELINUX_NETWORK_CAPABILITIES,
    },
  },
  {
    form: 'network.pts',
    title: 'pts on a network rule',
    group: 'option',
    without: 'the network rule never matches',
    targets: {
      'bpf-lsm': ENFORCED,
      fanotify: {
        level: EnforcementLevel.Enforced,
        reason:
          'the cgroup network programs read the controlling terminal (task->signal->tty); on kernels before 6.10 they cannot, and the node status says so',
      },
      apparmor: notEnforced(
        'no terminal condition in AppArmor; applied to every process',
        dropped(Code.apparmorConditionIgnored),
      ),
      selinux: SELINUX_NETWORK_CAPABILITIES,
    },
  },
  { form: 'readOnly', title: 'readOnly', group: 'option', targets: all(ENFORCED) },
  {
    form: 'ownerOnly',
    title: 'ownerOnly',
    group: 'option',
    targets: {
      'bpf-lsm': ENFORCED,
      fanotify: ENFORCED,
      apparmor: ENFORCED,
      selinux: notEnforced(
        'SELinux has no file-owner condition; the rule applies to every user',
        dropped(Code.selinuxOwnerOnly),
      ),
    },
  },
  {
    form: 'pts',
    title: 'pts',
    group: 'option',
    targets: {
      'bpf-lsm': ENFORCED,
      fanotify: ENFORCED,
      apparmor: notEnforced(
        'no terminal condition in AppArmor; applied to every process',
        dropped(Code.apparmorConditionIgnored),
      ),
      selinux: notEnforced(
        'no terminal condition in SELinux; applied to every process',
        dropped(Code.selinuxConditionIgnored),
      ),
    },
  },
  {
    form: 'allowedArgs',
    title: 'allowedArgs',
    group: 'option',
    without: 'the rule applies whatever the arguments',
    targets: {
      'bpf-lsm': notEnforced('the argument list is not read'),
      fanotify: notEnforced('the argument list cannot be seen at the exec permission event'),
      apparmor: notEnforced('AppArmor has no argument condition', dropped(Code.apparmorConditionIgnored)),
      selinux: notEnforced('SELinux has no argument condition', dropped(Code.selinuxConditionIgnored)),
    },
  },
  {
    form: 'action.Allow',
    title: 'Allow (least-permissive mode)',
    group: 'option',
    targets: {
      'bpf-lsm': ENFORCED,
      fanotify: ENFORCED,
      apparmor: ENFORCED,
      selinux: notEnforced(
        'the Allow is granted, but other operations stay under the base policy',
        dropped(Code.selinuxNoLeastPermissive),
      ),
    },
  },
];

const BY_FORM = new Map(ENFORCEMENT_TABLE.map((r) => [r.form, r]));

/** The row of a form, if the table has it. */
export function findEnforcementRow(form: string): EnforcementRow | undefined {
  return BY_FORM.get(form);
}

/** A target's cell for a form; a form the table does not know is not enforced anywhere. */
export function getEnforcementCell(form: string, target: EnforcementTarget): EnforcementCell {
  return (
    BY_FORM.get(form)?.targets[target] ?? {
      level: EnforcementLevel.NotEnforced,
      reason: `${form} is not a rule form rtctl knows`,
    }
  );
}
