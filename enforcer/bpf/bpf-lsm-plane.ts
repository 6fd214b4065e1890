// The BPF-LSM data plane: drives the privileged loader (enforcer/bpf/loader/rtctl-bpf-loader.c) over
// JSON lines on its stdin/stdout. The loader attaches the programs and pins maps and links under
// /sys/fs/bpf, so enforcement outlives this process and the loader; a new instance finds the pinned
// state and resumes. apply() writes the inactive slot and flips it in one word (docs/bpf-lsm.md).
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { readFileSync, statSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { Action, Operation } from '../../compiler/ir/rule-set.js';
import {
  DecisionKind,
  type DataPlane,
  type DataPlaneEvent,
  type DataPlaneStats,
  type EnforcementState,
  type WorkloadAnchor,
} from '../data-plane.js';
import { formatIpAddress } from '../../compiler/net/cidr.js';
import { decodeDestination } from './encode-addresses.js';
import { encodeState, type KeyedWorkload, type RuleInfo } from './encode-state.js';
import { WorkloadKeyKind } from './map-layout.js';
import { formatOpenFlags, getSyscallName } from './syscall-names.js';

/** Where the loader lives and where it pins. */
export interface BpfLsmPlaneOptions {
  /** Path of the prebuilt loader (dist/native/bpf/rtctl-bpf-loader). */
  loaderPath: string;
  /** Pin directory under bpffs (default /sys/fs/bpf/rtctl). */
  pinDir?: string;
  /** Reads a workload's kernel identity; the default stats cgroupfs and /proc (tests may pass another). */
  resolveWorkloadKey?: (anchor: WorkloadAnchor) => { kind: WorkloadKeyKind; id: bigint };
  /**
   * The file_open decision cache (docs/bpf-lsm.md "Decision cache"); default on. Off only for measuring what
   * it saves: decisions are the same either way.
   */
  decisionCache?: boolean;
  /**
   * Tests only: how many slots of the direct-mapped decision cache are used (a power of two up to 16 384, the
   * default), so that a test can make two keys fall on one slot.
   */
  decisionCacheSlots?: number;
}

/** Where the time of the last apply() went, in milliseconds (the loader's phases from its reply). */
export interface ApplyTimings {
  /** Encoding the state into map entries (Node). */
  encodeMs: number;
  /** Serializing the request line (Node). */
  serializeMs: number;
  /** Length of the request line. */
  requestBytes: number;
  /** From writing the request to its reply. */
  loaderRoundTripMs: number;
  /**
   * The loader's own phases: receive the line (first byte to newline), parse it, clear the slot, decode the
   * entries, write them, flip.
   */
  loader: Record<string, number>;
  totalMs: number;
}

/** An error reported by the loader or by encoding, with its code. */
export class BpfPlaneError extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(`${code}: ${message}`);
  }
}

interface LoaderReply {
  ok: boolean;
  code?: string;
  error?: string;
  [key: string]: unknown;
}

interface LoaderEvent {
  timeNs: string;
  wid: number;
  generation: number;
  pid: number;
  ppid: number;
  nsPid: number;
  nsPpid: number;
  uid: number;
  rule: number;
  cls: number;
  kind: number;
  action: number;
  write: number;
  errno: number;
  syscall: number;
  arg0: number;
  flags: number;
  arg2: number;
  arg3: number;
  resource: string;
  exe: string;
  parentExe: string;
}

/** What event translation needs to know about one applied generation. */
interface GenerationInfo {
  workloads: string[];
  rules: RuleInfo[];
}

const CLASS_OPERATIONS = [
  Operation.Process,
  Operation.File,
  Operation.Network,
  Operation.Capabilities,
] as const;

/** The kernel identity of a workload: its cgroup (containers) or mount namespace (host, or no cgroup). */
export function resolveWorkloadKey(anchor: WorkloadAnchor): { kind: WorkloadKeyKind; id: bigint } {
  if (anchor.cgroupPath !== '') {
    try {
      const st = statSync(`/sys/fs/cgroup${anchor.cgroupPath}`, { bigint: true });
      if (st.isDirectory()) return { kind: WorkloadKeyKind.Cgroup, id: st.ino };
    } catch {
      // not cgroup v2 or gone: fall back to the mount namespace
    }
  }
  const st = statSync(`/proc/${anchor.pid}/ns/mnt`, { bigint: true });
  return { kind: WorkloadKeyKind.MountNamespace, id: st.ino };
}

function readCgroup(pid: number): string {
  try {
    const line = readFileSync(`/proc/${pid}/cgroup`, 'utf8')
      .split('\n')
      .find((l) => l.startsWith('0::'));
    return line?.slice(3) ?? '';
  } catch {
    return '';
  }
}

/** The BPF-LSM data plane. */
export class BpfLsmPlane implements DataPlane {
  readonly name = 'BPFLSM';
  readonly auditName = 'eBPF Monitor';
  private child: ChildProcessWithoutNullStreams | undefined;
  private readonly pending: { resolve: (r: LoaderReply) => void; reject: (e: Error) => void }[] = [];
  private readonly queue: DataPlaneEvent[] = [];
  private wake: (() => void) | undefined;
  private closed = false;
  private activeSlot = 0;
  private activeWorkloads = 0;
  private readonly generations = new Map<number, GenerationInfo>();
  private stderr = '';
  private lastApplyTimings: ApplyTimings | undefined;

  constructor(private readonly options: BpfLsmPlaneOptions) {}

  /** Process id of the loader helper, while it runs. */
  get loaderPid(): number | undefined {
    return this.closed ? undefined : this.child?.pid;
  }

  async start(): Promise<void> {
    const args = ['--pin-dir', this.options.pinDir ?? '/sys/fs/bpf/rtctl'];
    if (this.options.decisionCache === false) args.push('--no-decision-cache');
    if (this.options.decisionCacheSlots !== undefined)
      args.push('--decision-cache-slots', String(this.options.decisionCacheSlots));
    const child = spawn(this.options.loaderPath, args, { stdio: ['pipe', 'pipe', 'pipe'] });
    this.child = child;
    child.stderr.on('data', (d: Buffer) => {
      this.stderr = (this.stderr + d.toString('utf8')).slice(-8000);
    });
    const lines = createInterface({ input: child.stdout });
    lines.on('line', (line) => this.onLine(line));
    child.on('close', () => {
      this.closed = true;
      for (const p of this.pending.splice(0))
        p.reject(new BpfPlaneError('BPF_LOADER_EXIT', `loader exited\n${this.stderr.slice(-2000)}`));
      this.wake?.();
    });
    child.on('error', (err) => {
      this.closed = true;
      for (const p of this.pending.splice(0)) p.reject(err);
    });
    const opened = await this.request({ cmd: 'open' });
    this.activeSlot = typeof opened['active'] === 'number' ? opened['active'] : 0;
    this.activeWorkloads = Array.isArray(opened['workloads']) ? opened['workloads'].length : 0;
  }

  private onLine(line: string): void {
    let msg: unknown;
    try {
      msg = JSON.parse(line);
    } catch {
      return;
    }
    if (typeof msg !== 'object' || msg === null) return;
    const record = msg as Record<string, unknown>;
    if (typeof record['event'] === 'object' && record['event'] !== null) {
      this.queue.push(this.translate(record['event'] as LoaderEvent));
      this.wake?.();
      return;
    }
    this.pending.shift()?.resolve(record as LoaderReply);
  }

  private request(body: Record<string, unknown>): Promise<LoaderReply> {
    return this.send(JSON.stringify(body));
  }

  /** Sends one request line (JSON, no newline) and waits for its reply. */
  private async send(line: string): Promise<LoaderReply> {
    const child = this.child;
    if (child === undefined || this.closed)
      throw new BpfPlaneError('BPF_NOT_STARTED', 'the loader is not running');
    const reply = await new Promise<LoaderReply>((resolve, reject) => {
      this.pending.push({ resolve, reject });
      child.stdin.write(line + '\n');
    });
    if (!reply.ok) throw new BpfPlaneError(reply.code ?? 'BPF_ERROR', reply.error ?? 'loader error');
    return reply;
  }

  /** Where the time of the last apply() went (undefined before the first). */
  get applyTimings(): ApplyTimings | undefined {
    return this.lastApplyTimings;
  }

  async apply(state: EnforcementState): Promise<void> {
    const started = performance.now();
    const resolve = this.options.resolveWorkloadKey ?? resolveWorkloadKey;
    const keyed: KeyedWorkload[] = state.workloads.map((w) => {
      const key = resolve(w.anchor);
      return {
        name: w.anchor.key,
        keyKind: key.kind,
        keyId: key.id,
        policies: w.policies,
        postures: w.postures,
      };
    });
    // Always the inactive slot: the active one keeps deciding until the flip.
    const slot = this.activeSlot ^ 1;
    const encoded = encodeState(state.table.records, slot, keyed);
    if (!encoded.ok) throw new BpfPlaneError(encoded.error.code, encoded.error.message);
    this.generations.set(state.generation, {
      workloads: keyed.map((k) => k.name),
      rules: encoded.state.rules,
    });
    for (const g of [...this.generations.keys()]) if (g < state.generation - 4) this.generations.delete(g);
    const encodedAt = performance.now();
    const line = JSON.stringify({
      cmd: 'apply',
      slot,
      generation: state.generation,
      workloads: keyed.length,
      rules: encoded.state.ruleCount,
      entries: encoded.state.entries,
    });
    const serializedAt = performance.now();
    const reply = await this.send(line);
    const done = performance.now();
    this.activeSlot = slot;
    this.activeWorkloads = keyed.length;
    const loader: Record<string, number> = {};
    const micros = reply['micros'];
    if (typeof micros === 'object' && micros !== null)
      for (const [k, v] of Object.entries(micros)) if (typeof v === 'number') loader[k] = v / 1000;
    this.lastApplyTimings = {
      encodeMs: encodedAt - started,
      serializeMs: serializedAt - encodedAt,
      requestBytes: line.length,
      loaderRoundTripMs: done - serializedAt,
      loader,
      totalMs: done - started,
    };
  }

  async enforced(): Promise<{ generation: number; workloads: string[] }> {
    const reply = await this.request({ cmd: 'enforced' });
    const workloads = Array.isArray(reply['workloads'])
      ? reply['workloads'].filter((w): w is string => typeof w === 'string')
      : [];
    return { generation: typeof reply['generation'] === 'number' ? reply['generation'] : 0, workloads };
  }

  async stats(): Promise<DataPlaneStats> {
    const reply = await this.request({ cmd: 'stats' });
    const n = (k: string): number => (typeof reply[k] === 'number' ? reply[k] : 0);
    return {
      decisions: n('decisions'),
      cacheHits: n('cacheHits'),
      reported: n('events'),
      dropped: n('dropped'),
      workloads: this.activeWorkloads,
    };
  }

  async *events(): AsyncIterable<DataPlaneEvent> {
    for (;;) {
      const next = this.queue.shift();
      if (next !== undefined) {
        yield next;
        continue;
      }
      if (this.closed) return;
      await new Promise<void>((resolve) => {
        this.wake = resolve;
      });
      this.wake = undefined;
    }
  }

  async stop(options: { keepEnforcing: boolean }): Promise<void> {
    const child = this.child;
    if (child === undefined || this.closed) return;
    if (!options.keepEnforcing) await this.request({ cmd: 'detach' });
    const exited = new Promise<void>((resolve) => child.once('close', () => resolve()));
    child.stdin.end();
    await exited;
  }

  private translate(e: LoaderEvent): DataPlaneEvent {
    const info = this.generations.get(e.generation);
    const rule = e.rule >= 0 ? info?.rules[e.rule] : undefined;
    const operation = CLASS_OPERATIONS[e.cls & 3] ?? Operation.File;
    const kind = e.kind === 1 ? DecisionKind.Block : e.kind === 2 ? DecisionKind.Audit : DecisionKind.Posture;
    const syscall = getSyscallName(e.syscall);
    let syscallArgs = '';
    if (operation === Operation.File) {
      const flags = formatOpenFlags(e.flags);
      syscallArgs =
        syscall === 'SYS_OPENAT' || syscall === 'SYS_OPENAT2'
          ? `fd=${e.arg0} flags=${flags}`
          : `flags=${flags}`;
    } else if (operation === Operation.Network) {
      syscallArgs = `domain=${e.flags} type=${e.arg2} protocol=${e.arg3}`;
    }
    // A connect or send to an address: the resource is the destination (`10.0.0.1:80`, `[fd00::1]:53`).
    let resource = e.resource;
    const destination = operation === Operation.Network ? decodeDestination(e.resource) : undefined;
    if (destination !== undefined) {
      const address = formatIpAddress({ family: destination.family, bytes: destination.bytes });
      resource = `${destination.family === 6 ? `[${address}]` : address}:${destination.port}`;
      syscallArgs += ` name=${destination.protocol} address=${address} port=${destination.port}`;
    } else if (operation === Operation.Capabilities) {
      syscallArgs = `cap=${e.flags}`;
    }
    return {
      workload: info?.workloads[e.wid] ?? `wid-${e.wid}`,
      timeNs: BigInt(e.timeNs),
      operation,
      kind,
      action: e.action === 2 ? Action.Block : Action.Audit,
      errno: e.errno,
      generation: e.generation,
      ruleIndex: e.rule,
      policyName: rule?.policyName ?? 'DefaultPosture',
      severity: rule?.severity ?? 0,
      tags: rule?.tags ?? [],
      message: rule?.message ?? '',
      hostPid: e.pid,
      hostPpid: e.ppid,
      pid: e.nsPid,
      ppid: e.nsPpid,
      uid: e.uid,
      processName: e.exe,
      parentProcessName: e.parentExe,
      resource,
      syscall,
      syscallArgs,
      cgroup: readCgroup(e.pid),
    };
  }
}
