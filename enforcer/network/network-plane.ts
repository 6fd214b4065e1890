// The cgroup network data plane: drives the loader (rtctl-net-loader.c) over text lines on its stdin and
// stdout. The loader pins the programs and maps, so enforcement and the attachments (legacy cgroup attach,
// BPF_F_ALLOW_OVERRIDE) outlive this process; a new instance finds the pinned state and resumes. Each apply()
// writes the new state under fresh workload ids (two id halves, by generation), then points each workload's
// cgroup at its new id in one map update, then deletes the old entries: a workload is decided wholly by the
// old or wholly by the new state. Block returns EPERM to the caller (the cgroup hooks cannot choose). The host
// workload takes no process of a container (outside the host's pid namespace, in its user namespace: rtn_config),
// checked in the kernel where it can be.
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { existsSync, readFileSync, readlinkSync, statSync, statfsSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { Action, Operation } from '../../compiler/ir/rule-set.js';
import { formatIpAddress } from '../../compiler/net/cidr.js';
import { loadRuleTableImage } from '../../compiler/rule-table/read-rule-table.js';
import {
  DecisionKind,
  type DataPlane,
  type DataPlaneEvent,
  type DataPlaneStats,
  type EnforcementState,
  type WorkloadAnchor,
} from '../data-plane.js';
import { encodeNetWorkload, type NetMapEntry } from './encode-net-state.js';
import {
  NET_SOCKET_NAMES,
  NetKind,
  NetLimit,
  NetOp,
  decodeEvent,
  encodeConfig,
  encodeWorkload,
  encodeWorkloadKey,
} from './net-map-layout.js';

/** The alert `Enforcer` of this plane. */
export const NETWORK_ENFORCER = 'CgroupBPF';
/** Why fromSource and pts on network rules are not enforced where the programs loaded without the task helper. */
export const NETWORK_PROCESS_OFF =
  'this kernel refuses bpf_get_current_task_btf() to cgroup network programs (before 6.10): they do not see the acting executable or its terminal, so network rules with fromSource or pts never match on this node';
/** errno of a denial: the cgroup hooks return EPERM. */
export const NETWORK_DENY_ERRNO = 1;

export interface NetworkPlaneOptions {
  loaderPath: string;
  objectPath: string;
  /** Pin directory on a bpffs mount (production: /sys/fs/bpf/rtctl-net). */
  pinDir: string;
  /** Where the plane records what it enforces, for a restarted enforcer (a regular directory). */
  stateDir: string;
  /**
   * The cgroup v2 directory host policies attach to (production: the root of the cgroup2 mount). Absent: host
   * workloads are not enforced by this plane (`skippedHost` says so).
   */
  hostCgroup?: string;
  /**
   * Where the root of the cgroup v2 hierarchy is visible (found from /proc/self/mountinfo when absent): a
   * cgroup2 mount, or a folder holding the host's cgroup mounts (`unified` on a hybrid host); see
   * resolveCgroup2Root.
   */
  cgroupRoot?: string;
  /**
   * Where the host's namespaces are (`pid` and `user` below it; default `/proc/self/ns`: the enforcer runs in
   * the host pid namespace, `hostPID: true` in the DaemonSet). A process outside the host's pid namespace and
   * in its user namespace (a container's) is never decided by the host workload (see hostIsolation).
   */
  hostNamespaces?: string;
  /** Told what the operator should know (a bpffs the loader had to mount, host rules the kernel cannot fence). */
  warn?: (message: string) => void;
}

/**
 * How host rules are kept off containers. `pid-namespace`: in the kernel, a process outside the host's pid
 * namespace (and in the host's user namespace: one that made a user namespace of its own, as an unprivileged
 * user may, stays a host process) is never decided by the host workload, so a container started since the last
 * poll is not either.
 * `registration-only` (kernels before 6.10 refuse bpf_get_ns_current_pid_tgid to cgroup programs): only the
 * registration of each container does, so until the next apply a new container is decided by host rules.
 */
export type HostIsolation = 'pid-namespace' | 'registration-only';

/** What the operator is told when the kernel cannot keep host rules to the host pid namespace. */
export const HOST_ISOLATION_WINDOW =
  'this kernel refuses bpf_get_ns_current_pid_tgid to cgroup programs (before 6.10): host network rules decide a new container until the enforcer registers it at its next poll';

/**
 * The device and inode of a namespace file as bpf_get_ns_current_pid_tgid() compares them: the device in the
 * kernel's dev_t encoding (major << 20 | minor), not the one stat() returns (glibc's).
 */
export function readNamespaceId(path: string): { dev: bigint; ino: bigint } {
  const st = statSync(path, { bigint: true });
  const major = ((st.dev >> 8n) & 0xfffn) | ((st.dev >> 32n) & ~0xfffn);
  const minor = (st.dev & 0xffn) | ((st.dev >> 12n) & ~0xffn);
  return { dev: (major << 20n) | minor, ino: st.ino };
}

/** statfs f_type of cgroup2 (CGROUP2_SUPER_MAGIC). */
const CGROUP2_MAGIC = 0x63677270;

/**
 * The cgroup v2 root at or below a folder: the folder itself when it is a cgroup2 mount (a unified host, or
 * the DaemonSet's hostPath of /sys/fs/cgroup), else its `unified` mount (a hybrid host: cgroup v1
 * controllers beside the v2 hierarchy). A folder with neither is an error naming it.
 */
export function resolveCgroup2Root(dir: string): string {
  for (const candidate of [dir, join(dir, 'unified')]) {
    try {
      if (statfsSync(candidate).type === CGROUP2_MAGIC) return candidate;
    } catch {
      // not there: the next candidate, then the error below
    }
  }
  throw new Error(`${dir} is not a cgroup v2 mount and holds none (unified)`);
}

/**
 * The cgroup v2 path of a runtime's cgroupsPath: a path as it is, the systemd driver's `slice:prefix:name`
 * form expanded as systemd places units (`kubepods-besteffort-pod1.slice:cri-containerd:abc` →
 * `/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod1.slice/cri-containerd-abc.scope`).
 */
export function toCgroup2Path(cgroupsPath: string): string {
  if (cgroupsPath.startsWith('/') || !cgroupsPath.includes(':')) return cgroupsPath;
  const [slice = '', prefix = '', name = ''] = cgroupsPath.split(':');
  const parts: string[] = [];
  if (slice !== '' && slice !== '-.slice') {
    const words = slice.replace(/\.slice$/, '').split('-');
    for (let i = 1; i <= words.length; i++) parts.push(`${words.slice(0, i).join('-')}.slice`);
  }
  parts.push(prefix === '' ? `${name}.scope` : `${prefix}-${name}.scope`);
  return `/${parts.join('/')}`;
}

/** The cgroup v2 mount point of this process's mount namespace. */
export function findCgroup2Mount(): string {
  for (const line of readFileSync('/proc/self/mountinfo', 'utf8').split('\n')) {
    const [left, right] = line.split(' - ');
    if (right?.startsWith('cgroup2 ')) return left?.split(' ')[4] ?? '';
  }
  throw new Error('no cgroup2 file system is mounted: the network plane attaches to cgroup v2');
}

/** The cgroup v2 path of a process (`0::/path` of /proc/<pid>/cgroup). */
export function readCgroup2Path(pid: number): string {
  const line = readFileSync(`/proc/${pid}/cgroup`, 'utf8')
    .split('\n')
    .find((l) => l.startsWith('0::'));
  if (line === undefined) throw new Error(`process ${pid} is in no cgroup v2`);
  return line.slice(3);
}

/**
 * The cgroup v2 folder of a container workload below `cgroupRoot` (where the host's hierarchy is seen; unset:
 * this process's cgroup2 mount): the runtime's cgroupsPath, then the process's own line (a runtime that did
 * not say, or a path the runtime wrote relative to something else). Shared by the planes keyed by cgroup.
 */
export function findContainerCgroupDir(
  anchor: WorkloadAnchor,
  cgroupRoot: string | undefined,
  plane: string,
): string {
  const root = cgroupRoot === undefined ? findCgroup2Mount() : resolveCgroup2Root(cgroupRoot);
  const fromRuntime = anchor.cgroupPath === '' ? '' : join(root, toCgroup2Path(anchor.cgroupPath));
  if (fromRuntime !== '' && existsSync(fromRuntime)) return fromRuntime;
  const fromProc = join(root, readCgroup2Path(anchor.pid));
  if (existsSync(fromProc)) return fromProc;
  throw new Error(
    `${plane}: no cgroup v2 folder for workload ${anchor.key} (${fromRuntime || '(no runtime path)'}, ${fromProc})`,
  );
}

interface Pending {
  resolve: (line: string) => void;
  reject: (error: Error) => void;
}

interface Recorded {
  generation: number;
  /** workload key → cgroup directory and id. */
  workloads: Record<string, { dir: string; id: string; wid: number; attach?: boolean; unselected?: true }>;
  entries: NetMapEntry[];
}

export class NetworkPlane implements DataPlane {
  readonly name = NETWORK_ENFORCER;
  readonly auditName = NETWORK_ENFORCER;
  private loader: ChildProcessWithoutNullStreams | undefined;
  private readonly pending: Pending[] = [];
  private readonly queue: DataPlaneEvent[] = [];
  private wake: (() => void) | undefined;
  private closed = false;
  private state: Recorded = { generation: 0, workloads: {}, entries: [] };
  private table: ReturnType<typeof loadRuleTableImage> | undefined;
  private byWid = new Map<number, { key: string; host: boolean }>();
  private stderr = '';
  resumed = false;

  constructor(private readonly options: NetworkPlaneOptions) {}

  private get recordPath(): string {
    return join(this.options.stateDir, 'network-plane.json');
  }

  async start(): Promise<void> {
    const child = spawn(this.options.loaderPath, [this.options.objectPath, this.options.pinDir], {
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    this.loader = child;
    child.stderr.on('data', (d: Buffer) => (this.stderr = (this.stderr + d.toString()).slice(-4000)));
    const ready = new Promise<string>((resolve, reject) => {
      this.pending.push({ resolve, reject });
    });
    createInterface({ input: child.stdout }).on('line', (line) => this.onLine(line));
    child.on('exit', (code) => {
      this.closed = true;
      for (const p of this.pending.splice(0))
        p.reject(new Error(`network loader exited (${code}): ${this.stderr.trim()}`));
      this.wake?.();
    });
    const first = await ready;
    if (!first.startsWith('ready ')) throw new Error(`network loader: ${first}`);
    const [, resumed, mounted, pidns] = first.split(' ');
    this.resumed = resumed === '1';
    this.mountedBpffs = mounted === '1';
    this.hostIsolation = pidns === '1' ? 'pid-namespace' : 'registration-only';
    this.processAware = pidns === '1';
    if (this.mountedBpffs)
      this.options.warn?.(
        `no bpffs held the network plane's pins: mounted one on ${dirname(this.options.pinDir)}; in a container it lives as long as the container's mount namespace (the attachments stay while the cgroups live)`,
      );
    if (this.hostIsolation === 'registration-only' && this.options.hostCgroup !== undefined)
      this.options.warn?.(HOST_ISOLATION_WINDOW);
    if (this.options.hostCgroup !== undefined && this.options.hostNamespaces === undefined) {
      // More than one pid in NSpid: this process is in a nested pid namespace, not the host's.
      const nspid = /^NSpid:\s*(.*)$/m.exec(readFileSync('/proc/self/status', 'utf8'))?.[1] ?? '';
      if (nspid.trim().split(/\s+/).length > 1)
        this.options.warn?.(
          'the enforcer is not in the initial pid namespace (run it with hostPID: true): host network rules apply only to processes of its own pid namespace',
        );
    }
    if (this.resumed && existsSync(this.recordPath)) {
      this.state = JSON.parse(readFileSync(this.recordPath, 'utf8')) as Recorded;
    }
  }

  private onLine(line: string): void {
    if (line.startsWith('event ')) {
      this.onEvent(Buffer.from(line.slice(6), 'hex'));
      return;
    }
    const p = this.pending.shift();
    if (p === undefined) return;
    if (line.startsWith('error')) p.reject(new Error(`network loader: ${line.slice(6)}`));
    else p.resolve(line);
  }

  /** Sends one request; resolves with the reply line (`ok ...`). */
  request(line: string): Promise<string> {
    const loader = this.loader;
    if (loader === undefined || this.closed)
      return Promise.reject(new Error('network loader is not running'));
    return new Promise((resolve, reject) => {
      this.pending.push({ resolve, reject });
      loader.stdin.write(`${line}\n`);
    });
  }

  /** Host workloads left out of the last apply() because no host cgroup is configured. */
  skippedHost = 0;

  /** Whether the loader mounted a bpffs on the pin directory's parent (none was there). */
  mountedBpffs = false;

  /** How host rules are kept off containers, as the loaded programs do it (known after start()). */
  hostIsolation: HostIsolation = 'registration-only';
  /**
   * Whether the loaded programs see the acting process (bpf_get_current_task_btf() in cgroup programs, 6.10+):
   * its executable for fromSource, its terminal for pts. Undefined before start().
   */
  processAware: boolean | undefined;

  /** Why this instance does not enforce a rule form the capability table says the plane enforces, if it does not. */
  unavailableProcessForm(form: string): string | undefined {
    if (this.processAware !== false || (form !== 'network.fromSource' && form !== 'network.pts'))
      return undefined;
    return NETWORK_PROCESS_OFF;
  }

  private cgroupDir(anchor: WorkloadAnchor): string {
    if (anchor.host) return resolveCgroup2Root(this.options.hostCgroup ?? '');
    return findContainerCgroupDir(anchor, this.options.cgroupRoot, 'network plane');
  }

  async apply(state: EnforcementState): Promise<void> {
    const loaded = loadRuleTableImage(state.table.bytes);
    if (!loaded.ok) throw new Error(`network plane: ${loaded.error}`);
    const half = (state.generation % 2) * (NetLimit.workloads / 2);
    if (state.workloads.length > NetLimit.workloads / 2)
      throw new Error(`network plane: more than ${NetLimit.workloads / 2} workloads`);
    const next: Recorded = { generation: state.generation, workloads: {}, entries: [] };
    const byWid = new Map<number, { key: string; host: boolean }>();
    const switches: [string, string][] = [];
    const workloads = state.workloads.filter((w) => !w.anchor.host || this.options.hostCgroup !== undefined);
    this.skippedHost = state.workloads.length - workloads.length;
    workloads.forEach((w, i) => {
      const wid = half + i;
      const dir = this.cgroupDir(w.anchor);
      const id = statSync(dir, { bigint: true }).ino;
      const encoded = encodeNetWorkload(loaded.table, loaded.image.records, w, wid);
      next.entries.push(...encoded.entries);
      // Programs go only on cgroups with something to decide (a workload whose policies hold no network
      // rule and whose posture adds none is allowed everything). Every workload is registered all the same,
      // so the programs of an attached ancestor (the host cgroup) find it and leave it alone.
      next.workloads[w.anchor.key] = { dir, id: id.toString(), wid, attach: encoded.entries.length > 0 };
      byWid.set(wid, { key: w.anchor.key, host: w.anchor.host });
      switches.push([
        encodeWorkloadKey(id),
        encodeWorkload({
          wid,
          generation: state.generation,
          prefix4: encoded.prefix4,
          prefix6: encoded.prefix6,
          flags: encoded.flags,
        }),
      ]);
    });
    // Host programs sit on the host cgroup, an ancestor of every container: containers no policy selects are
    // registered without rules so that host rules do not reach them (a process is decided by its deepest
    // registered cgroup). Only needed while a host workload has programs attached.
    if (Object.values(next.workloads).some((w) => w.attach === true && byWid.get(w.wid)?.host === true)) {
      let wid = half + workloads.length;
      for (const anchor of state.unselected ?? []) {
        if (next.workloads[anchor.key] !== undefined) continue;
        let dir: string;
        try {
          dir = this.cgroupDir(anchor);
        } catch {
          continue; // gone since it was listed: nothing of it to keep out
        }
        if (wid >= half + NetLimit.workloads / 2)
          throw new Error(
            `network plane: more than ${NetLimit.workloads / 2} workloads with the containers no policy selects (host rules would reach them)`,
          );
        const id = statSync(dir, { bigint: true }).ino;
        next.workloads[anchor.key] = { dir, id: id.toString(), wid, attach: false, unselected: true };
        byWid.set(wid, { key: anchor.key, host: false });
        switches.push([
          encodeWorkloadKey(id),
          encodeWorkload({ wid, generation: state.generation, prefix4: [], prefix6: [] }),
        ]);
        wid++;
      }
    }
    for (const [map, key, value] of next.entries) await this.request(`update ${map} ${key} ${value}`);
    // Before any host workload is registered: the host cgroup and the host's pid namespace, so that the
    // programs never decide a process outside it by the host workload (a container not registered yet).
    if (this.options.hostCgroup !== undefined) {
      const dir = this.options.hostNamespaces ?? '/proc/self/ns';
      const pid = readNamespaceId(join(dir, 'pid'));
      const hostCgroup = statSync(resolveCgroup2Root(this.options.hostCgroup), { bigint: true }).ino;
      await this.request(
        `update rtn_config 00000000 ${encodeConfig({
          hostCgroup,
          pidnsDev: pid.dev,
          pidnsIno: pid.ino,
          usernsIno: readNamespaceId(join(dir, 'user')).ino,
          pidnsCheck: this.hostIsolation === 'pid-namespace',
        })}`,
      );
    }
    for (const [key, value] of switches) await this.request(`update rtn_workloads ${key} ${value}`);
    const attached = new Set(
      Object.values(this.state.workloads)
        .filter((w) => w.attach !== false)
        .map((w) => w.dir),
    );
    const wanted = new Set(
      Object.values(next.workloads)
        .filter((w) => w.attach !== false)
        .map((w) => w.dir),
    );
    for (const dir of wanted) if (!attached.has(dir)) await this.request(`attach ${dir}`);
    const keep = new Set(Object.values(next.workloads).map((w) => w.dir));
    for (const w of Object.values(this.state.workloads)) {
      if (!keep.has(w.dir)) await this.request(`delete rtn_workloads ${encodeWorkloadKey(BigInt(w.id))}`);
    }
    for (const dir of attached) if (!wanted.has(dir) && existsSync(dir)) await this.request(`detach ${dir}`);
    const fresh = new Set(next.entries.map(([m, k]) => `${m} ${k}`));
    for (const [map, key] of this.state.entries)
      if (!fresh.has(`${map} ${key}`)) await this.request(`delete ${map} ${key}`);
    this.state = next;
    this.table = loaded;
    this.byWid = byWid;
    writeFileSync(this.recordPath, JSON.stringify(next));
  }

  enforced(): Promise<{ generation: number; workloads: string[] }> {
    return Promise.resolve({
      generation: this.state.generation,
      workloads: Object.entries(this.state.workloads)
        .filter(([, w]) => w.unselected !== true)
        .map(([key]) => key),
    });
  }

  private onEvent(bytes: Buffer): void {
    const e = decodeEvent(bytes);
    const w = this.byWid.get(e.wid);
    const loaded = this.table;
    const rule = e.rule >= 0 && loaded?.ok === true ? loaded.image.records.rules[e.rule] : undefined;
    const policy =
      rule === undefined || loaded?.ok !== true ? undefined : loaded.image.records.policies[rule.policy];
    const proto = NET_SOCKET_NAMES[e.proto]?.join(',') ?? 'unknown';
    const address =
      e.family === 4
        ? formatIpAddress({ family: 4, bytes: e.addr.subarray(0, 4) })
        : formatIpAddress({ family: 6, bytes: e.addr });
    const syscall =
      e.op === NetOp.socket ? 'SYS_SOCKET' : e.op === NetOp.connect ? 'SYS_CONNECT' : 'SYS_SENDMSG';
    const resource =
      e.op === NetOp.socket ? `protocol=${proto}` : `${e.family === 6 ? `[${address}]` : address}:${e.port}`;
    const args =
      e.op === NetOp.socket
        ? `family=AF_INET${e.family === 6 ? '6' : ''} protocol=${proto}`
        : `family=AF_INET${e.family === 6 ? '6' : ''} protocol=${proto} address=${address} port=${e.port}`;
    // The executable as the process's root names it (a container's path, as fromSource compares it).
    const exe = (pid: number): string => {
      try {
        const path = readlinkSync(`/proc/${pid}/exe`);
        const root = readlinkSync(`/proc/${pid}/root`);
        return root !== '/' && path.startsWith(`${root}/`) ? path.slice(root.length) : path;
      } catch {
        return e.comm;
      }
    };
    const block = e.action === 2;
    this.queue.push({
      workload: w?.key ?? `unknown-${e.wid}`,
      timeNs: BigInt(Date.now()) * 1_000_000n,
      operation: Operation.Network,
      kind:
        e.kind === NetKind.posture ? DecisionKind.Posture : block ? DecisionKind.Block : DecisionKind.Audit,
      action: block ? Action.Block : Action.Audit,
      errno: block ? NETWORK_DENY_ERRNO : 0,
      generation: e.generation,
      ruleIndex: e.rule,
      policyName: e.kind === NetKind.posture ? 'DefaultPosture' : (policy?.name ?? ''),
      severity: e.kind === NetKind.posture ? 0 : (rule?.severity ?? 0),
      tags: rule?.tags ?? [],
      message: rule?.message ?? '',
      hostPid: e.tgid,
      hostPpid: 0,
      pid: e.tgid,
      ppid: 0,
      uid: e.uid,
      processName: e.exe !== undefined && e.exe !== '' ? e.exe : exe(e.tgid),
      parentProcessName: '',
      resource,
      syscall,
      syscallArgs: args,
      cgroup: '',
      enforcer: NETWORK_ENFORCER,
    });
    this.wake?.();
  }

  async *events(): AsyncIterable<DataPlaneEvent> {
    for (;;) {
      const e = this.queue.shift();
      if (e !== undefined) {
        yield e;
        continue;
      }
      if (this.closed) return;
      await new Promise<void>((resolve) => (this.wake = resolve));
      this.wake = undefined;
    }
  }

  async stats(): Promise<DataPlaneStats> {
    const [, decisions, reported, dropped, unnamed] = (await this.request('stats')).split(' ').map(Number);
    return {
      decisions: decisions ?? 0,
      cacheHits: 0,
      reported: reported ?? 0,
      dropped: dropped ?? 0,
      unnamedExecutables: unnamed ?? 0,
      workloads: Object.values(this.state.workloads).filter((w) => w.unselected !== true).length,
      // Only where host rules are enforced at all (a host cgroup is configured).
      ...(this.options.hostCgroup === undefined ? {} : { hostIsolation: this.hostIsolation }),
    };
  }

  /** How many programs of each hook are attached directly to a cgroup directory. */
  async query(dir: string): Promise<number[]> {
    return (await this.request(`query ${dir}`)).split(' ').slice(1).map(Number);
  }

  async stop(options: { keepEnforcing: boolean }): Promise<void> {
    if (!options.keepEnforcing && !this.closed) {
      for (const w of Object.values(this.state.workloads))
        if (w.attach !== false && existsSync(w.dir)) await this.request(`detach ${w.dir}`);
      await this.request('unpin');
      this.state = { generation: 0, workloads: {}, entries: [] };
      writeFileSync(this.recordPath, JSON.stringify(this.state));
    }
    const loader = this.loader;
    if (loader !== undefined && !this.closed) {
      const exited = new Promise<void>((resolve) => loader.once('exit', () => resolve()));
      loader.stdin.end();
      await exited;
    }
  }
}
