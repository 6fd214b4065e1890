// The contract between the enforcer's control plane and a kernel data plane (fanotify, BPF-LSM). The control
// plane discovers workloads, builds the node's rule table (compiler/rule-table/) and hands it here; the data plane enforces it in the kernel and reports every Block, Audit and posture decision as a
// DataPlaneEvent. The control plane turns events into alert records (enforcer/alert-record.ts).
import type { Action, Operation } from '../compiler/ir/rule-set.js';
import type { UnavailableForms } from '../compiler/enforcement/summarize-enforcement.js';
import type { RuleTableImage } from '../compiler/rule-table/rule-table-records.js';

// Postures (every class resolved; Process follows `file`) live in the model: compiler/model/posture.ts.
import type { Postures } from '../compiler/model/posture.js';
export { Posture, type Postures } from '../compiler/model/posture.js';

/**
 * Where a workload lives in the kernel: what a data plane needs to attach its enforcement to it.
 * Containers have the pid of their init process (its mount namespace holds the root file system and its
 * bind mounts; its cgroup identifies the container); the host workload has `pid` 1.
 */
export interface WorkloadAnchor {
  /** Stable key chosen by the control plane; events carry it back (container id, or `host`). */
  key: string;
  /** True for the host workload (host processes, RuntimeHostPolicy). */
  host: boolean;
  /** A process of the workload in the host pid namespace (container init; 1 for the host). */
  pid: number;
  /** The cgroup path of the workload (`/k8s.io/<id>`), empty for the host. */
  cgroupPath: string;
}

/** One workload's enforcement input: which policies of the node's table select it, and its postures. */
export interface WorkloadEnforcement {
  anchor: WorkloadAnchor;
  /** Indices (into the table's policy records) of the policies selecting this workload: its policy set S. */
  policies: number[];
  postures: Postures;
}

/**
 * The whole desired state of a node: the rule table (docs/rule-table.md, all policies of the node in one
 * table) and every enforced workload. Applied atomically: an operation is decided either wholly by the
 * previous state or wholly by this one.
 */
export interface EnforcementState {
  /** Increases with every change; a data plane reports the generation it enforces. */
  generation: number;
  /** The table as records (for planes that re-encode it, BPF-LSM) and as bytes (for planes that load it, fanotify). */
  table: RuleTableImage;
  workloads: WorkloadEnforcement[];
  /**
   * Containers no policy selects. A plane whose host programs sit on an ancestor of every container (the
   * cgroup network plane on the cgroup root) registers them as workloads without rules, so host policies do
   * not reach them; other planes ignore them.
   */
  unselected?: WorkloadAnchor[];
}

/** The decision kinds a data plane reports (Allow decisions are never reported). */
export const DecisionKind = {
  /** A Block rule matched: the operation was denied. */
  Block: 'Block',
  /** An Audit rule matched: the operation proceeded. */
  Audit: 'Audit',
  /** No rule matched in least-permissive mode; the posture decided (`action` says which). */
  Posture: 'Posture',
} as const;
export type DecisionKind = (typeof DecisionKind)[keyof typeof DecisionKind];

/** One reported decision, as the kernel saw it. Paths are as seen inside the workload. */
export interface DataPlaneEvent {
  /** Sequence number for acknowledgement (DataPlane.acknowledge), when the plane buffers events. */
  seq?: number;
  /** The workload key given in WorkloadAnchor. */
  workload: string;
  /** Wall clock of the decision, nanoseconds since the Unix epoch. */
  timeNs: bigint;
  /** The operation class; `Syscall` for the system call plane's reports (enforcer/syscalls/). */
  operation: Operation | 'Syscall';
  kind: DecisionKind;
  /** What happened to the operation: Block (denied) or Audit (allowed and reported). */
  action: typeof Action.Block | typeof Action.Audit;
  /** The errno returned to the caller when denied (EPERM on fanotify, EACCES on BPF-LSM), 0 when allowed. */
  errno: number;
  /** State generation the decision was taken under. */
  generation: number;
  /** Index of the deciding rule in the table, -1 for posture decisions. */
  ruleIndex: number;
  /** Policy name of the deciding rule, `DefaultPosture` for posture decisions (resolved from the table). */
  policyName: string;
  /** The rule's severity (0 for posture decisions), tags and message, resolved from the table. */
  severity: number;
  tags: string[];
  message: string;
  /** Host pid and parent pid. */
  hostPid: number;
  hostPpid: number;
  /** Pid and parent pid in the workload's pid namespace (equal to the host ones for the host). */
  pid: number;
  ppid: number;
  uid: number;
  /** The acting process's executable, and its parent's. */
  processName: string;
  parentProcessName: string;
  /** The target: the executed binary (Process) or the opened file (File). */
  resource: string;
  /** System call name as `SYS_OPENAT`, and its arguments in `key=value` form (`fd=-100 flags=O_RDONLY`). */
  syscall: string;
  syscallArgs: string;
  /**
   * The acting process's cgroup path (container id inside it); empty from the fanotify plane, which does not
   * read it (the alert record has no cgroup; the workload comes from the marked mount).
   */
  cgroup: string;
  /** The acting process's working directory, when known. */
  cwd?: string;
  /** The alert's `Enforcer` when the event comes from a plane of a composite other than its first. */
  enforcer?: string;
}

/** Counters a data plane keeps; `dropped` counts events it could not report (never silent). */
export interface DataPlaneStats {
  /** Permission decisions taken since the data plane started. */
  decisions: number;
  /** Decisions answered from the decision cache. */
  cacheHits: number;
  /** Events reported. */
  reported: number;
  /** Events that had to be dropped (buffer full, reader gone too long). */
  dropped: number;
  /** Workloads currently enforced. */
  workloads: number;
  /**
   * Inode ignore marks set (fanotify): files whose answer was "allow without alert" whatever the actor,
   * mode or owner, for which the kernel stopped asking until the next state. Absent on other planes.
   */
  ignoreMarks?: number;
  /**
   * Ignore marks not set because the file could be renamed or hard-linked, from a writable mount, to a name
   * the rules decide differently (fanotify; docs/enforcer.md "Ignore marks").
   */
  ignoreRenamable?: number;
  /**
   * Directory ignore marks set (fanotify): directories whose every child name is "allow without alert" and
   * which the workload cannot move (a read-only mount, a merged overlay directory); refused because the
   * directory could move; failed (docs/enforcer.md "Directory ignore marks"). Absent on other planes.
   */
  dirIgnoreMarks?: number;
  dirIgnoreMovable?: number;
  dirIgnoreFailed?: number;
  /**
   * Planes whose host programs sit on an ancestor of every container (the cgroup network plane): whether the
   * kernel keeps host rules to the host's pid namespace (`pid-namespace`), or only the registration of each
   * container keeps them off it (`registration-only`: a container started since the last poll is decided by
   * host rules until the next apply). Absent on other planes.
   */
  hostIsolation?: 'pid-namespace' | 'registration-only';
  /**
   * The cgroup network plane: decisions for a workload whose network rules name sources where the acting
   * executable could not be named (no executable, outside the process's root, a path longer than 4096 bytes):
   * decided as matching no source. Absent on other planes.
   */
  unnamedExecutables?: number;
}

/** A kernel data plane. One instance per node; the control plane owns its lifecycle. */
export interface DataPlane {
  /** The alert record's `Enforcer` value for this plane (`Fanotify`, `BPFLSM`). */
  readonly name: string;
  /** The `Enforcer` value for audit alerts, when it differs (`eBPF Monitor` for BPF-LSM). */
  readonly auditName: string;
  /**
   * Rule forms the capability table says this plane enforces but this instance does not (a part of it is off
   * on this node): the status and the node report show them as not enforced, with the reason.
   */
  readonly unavailableForms?: UnavailableForms;
  /** Attaches to the kernel (or to an already running helper that kept enforcing). */
  start(): Promise<void>;
  /**
   * Replaces the enforced state (table and workloads) atomically. Workloads absent from `state` stop being
   * enforced. Resolves once the new state is in force in the kernel.
   */
  apply(state: EnforcementState): Promise<void>;
  /** What the kernel side enforces right now (after a restart of the control plane: what it kept). */
  enforced(): Promise<{ generation: number; workloads: string[] }>;
  /** Every reported decision, in order, until stop(). Consumed by one reader. */
  events(): AsyncIterable<DataPlaneEvent>;
  /**
   * The control plane has handled (published and logged) every event up to `seq`. A plane that keeps events
   * across control-plane restarts resends unacknowledged ones to the next reader (at-least-once delivery).
   */
  acknowledge?(seq: number): void;
  /**
   * Names the sequence of `seq` numbers the next `events()` delivers: the same name after a control-plane restart
   * means the same numbering (the same kept helper), so an event whose number is already handled is the same
   * event sent again. Undefined when it cannot be told (then every resent event is handled again).
   */
  sequenceIdentity?(): Promise<string | undefined>;
  stats(): Promise<DataPlaneStats>;
  /**
   * Detaches the control plane. With `keepEnforcing` the kernel side stays in force (for a restart of the
   * TypeScript process); without it, all enforcement is removed.
   */
  stop(options: { keepEnforcing: boolean }): Promise<void>;
}

/**
 * A plane that passes every call through to `plane`, with `overrides` in place of the matching members (a
 * wrapper that adds one behaviour: apply timing, forms this node has off).
 */
export function delegatePlane(plane: DataPlane, overrides: Partial<DataPlane> = {}): DataPlane {
  const wrapped: DataPlane = {
    name: plane.name,
    auditName: plane.auditName,
    ...(plane.unavailableForms ? { unavailableForms: plane.unavailableForms } : {}),
    start: () => plane.start(),
    apply: (state) => plane.apply(state),
    enforced: () => plane.enforced(),
    events: () => plane.events(),
    stats: () => plane.stats(),
    stop: (options) => plane.stop(options),
    ...overrides,
  };
  if (plane.acknowledge && overrides.acknowledge === undefined) {
    const ack = plane.acknowledge.bind(plane);
    wrapped.acknowledge = (seq) => ack(seq);
  }
  if (plane.sequenceIdentity && overrides.sequenceIdentity === undefined) {
    const identity = plane.sequenceIdentity.bind(plane);
    wrapped.sequenceIdentity = () => identity();
  }
  return wrapped;
}

/** The same plane, saying that it does not enforce the forms `unavailable` names (besides what it already says). */
export function withUnavailableForms(plane: DataPlane, unavailable: UnavailableForms): DataPlane {
  const before = plane.unavailableForms;
  return delegatePlane(plane, {
    unavailableForms: (form, kind) => unavailable(form, kind) ?? before?.(form, kind),
  });
}
