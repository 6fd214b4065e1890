// The system call audit plane: drives the loader (rtctl-sys-loader.c) over text lines on its stdin and stdout,
// as the network plane drives its own. The kernel reports the calls each workload's Audit and Block `syscalls`
// rules name (filtered by call number and workload); this side decides which rule it is on the table's records
// (compiler/rule-table/syscall-records.ts) and reports an `Operation: Syscall` event. Calls are never denied
// here: a Block rule is reported as an audit (the capability table says "audited only"). The filelessExec
// preset is decided in the kernel at sched_process_exec; Block kills the process before its first instruction.
// The loader pins links and maps, so the programs stay attached across a restart of the enforcer.
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { existsSync, readFileSync, readlinkSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { FILELESS_PRESET } from '../../compiler/decide/decide-syscall.js';
import { Action } from '../../compiler/ir/rule-set.js';
import { ACTION_BY_CODE } from '../../compiler/rule-table/rule-table-format.js';
import type { RuleTableRecords } from '../../compiler/rule-table/rule-table-records.js';
import {
  findPresetRecord,
  findSyscallRecord,
  listWatchedSyscalls,
} from '../../compiler/rule-table/syscall-records.js';
import {
  DecisionKind,
  type DataPlane,
  type DataPlaneEvent,
  type DataPlaneStats,
  type EnforcementState,
  type WorkloadAnchor,
} from '../data-plane.js';
import { findCgroup2Mount, findContainerCgroupDir, resolveCgroup2Root } from '../network/network-plane.js';
import { getPathArguments, getSyscallNameOf, getSyscallNumber } from './syscall-arguments.js';
import {
  SysAction,
  SysEventKind,
  SysLimit,
  decodeSysEvent,
  encodeNr,
  encodeNrValue,
  encodeSysWorkload,
  encodeSysWorkloadKey,
  encodeWatch,
  encodeWatchKey,
  type SysEvent,
} from './sys-map-layout.js';

/** The alert `Enforcer` of this plane (the reference's name for its monitor). */
export const SYSCALL_ENFORCER = 'eBPF Monitor';
/** AT_FDCWD as the kernel sees it in a 64-bit argument register (an int). */
const AT_FDCWD = -100;

export interface SyscallPlaneOptions {
  loaderPath: string;
  objectPath: string;
  /** Pin directory on a bpffs mount (production: /sys/fs/bpf/rtctl-sys). */
  pinDir: string;
  /** Where the plane records what it watches, for a restarted enforcer (a regular directory). */
  stateDir: string;
  /** The cgroup v2 mount point (found from /proc/self/mountinfo when absent). */
  cgroupRoot?: string;
}

interface Pending {
  resolve: (line: string) => void;
  reject: (error: Error) => void;
}

type Entry = [map: string, key: string, value: string];

interface Recorded {
  generation: number;
  /** workload key → cgroup id and workload id. */
  workloads: Record<string, { id: string; wid: number }>;
  entries: Entry[];
  /** Call numbers some workload watches. */
  nrs: number[];
}

interface Known {
  key: string;
  policies: Set<number>;
}

function readLink(path: string): string | undefined {
  try {
    return readlinkSync(path);
  } catch {
    return undefined;
  }
}

export class SyscallPlane implements DataPlane {
  readonly name = SYSCALL_ENFORCER;
  readonly auditName = SYSCALL_ENFORCER;
  private loader: ChildProcessWithoutNullStreams | undefined;
  private readonly pending: Pending[] = [];
  private readonly queue: DataPlaneEvent[] = [];
  private wake: (() => void) | undefined;
  private closed = false;
  private state: Recorded = { generation: 0, workloads: {}, entries: [], nrs: [] };
  private records: RuleTableRecords | undefined;
  private byWid = new Map<number, Known>();
  private stderr = '';
  /** Kernel reports that no Audit or Block rule matched once decided here (fromSource, paths, Allow rules). */
  unmatched = 0;
  resumed = false;

  constructor(private readonly options: SyscallPlaneOptions) {}

  private get recordPath(): string {
    return join(this.options.stateDir, 'syscall-plane.json');
  }

  async start(): Promise<void> {
    const child = spawn(this.options.loaderPath, [this.options.objectPath, this.options.pinDir], {
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    this.loader = child;
    child.stderr.on('data', (d: Buffer) => (this.stderr = (this.stderr + d.toString()).slice(-4000)));
    const ready = new Promise<string>((resolve, reject) => this.pending.push({ resolve, reject }));
    createInterface({ input: child.stdout }).on('line', (line) => this.onLine(line));
    child.on('exit', (code) => {
      this.closed = true;
      for (const p of this.pending.splice(0))
        p.reject(new Error(`syscall loader exited (${code}): ${this.stderr.trim()}`));
      this.wake?.();
    });
    const first = await ready;
    if (!first.startsWith('ready ')) throw new Error(`syscall loader: ${first}`);
    this.resumed = first === 'ready 1';
    if (this.resumed && existsSync(this.recordPath))
      this.state = JSON.parse(readFileSync(this.recordPath, 'utf8')) as Recorded;
  }

  private onLine(line: string): void {
    if (line.startsWith('event ')) {
      this.onEvent(Buffer.from(line.slice(6), 'hex'));
      return;
    }
    const p = this.pending.shift();
    if (p === undefined) return;
    if (line.startsWith('error')) p.reject(new Error(`syscall loader: ${line.slice(6)}`));
    else p.resolve(line);
  }

  private request(line: string): Promise<string> {
    const loader = this.loader;
    if (loader === undefined || this.closed)
      return Promise.reject(new Error('syscall loader is not running'));
    return new Promise((resolve, reject) => {
      this.pending.push({ resolve, reject });
      loader.stdin.write(`${line}\n`);
    });
  }

  private cgroupId(anchor: WorkloadAnchor): bigint {
    const { cgroupRoot } = this.options;
    const dir = anchor.host
      ? cgroupRoot === undefined
        ? findCgroup2Mount()
        : resolveCgroup2Root(cgroupRoot)
      : findContainerCgroupDir(anchor, cgroupRoot, 'syscall plane');
    return statSync(dir, { bigint: true }).ino;
  }

  async apply(state: EnforcementState): Promise<void> {
    const records = state.table.records;
    const half = (state.generation % 2) * (SysLimit.workloads / 2);
    if (state.workloads.length > SysLimit.workloads / 2)
      throw new Error(`syscall plane: more than ${SysLimit.workloads / 2} workloads`);
    const next: Recorded = { generation: state.generation, workloads: {}, entries: [], nrs: [] };
    const byWid = new Map<number, Known>();
    const switches: [string, string][] = [];
    const nrs = new Set<number>();
    state.workloads.forEach((w, i) => {
      const wid = half + i;
      const policies = new Set(w.policies);
      const id = this.cgroupId(w.anchor);
      for (const name of listWatchedSyscalls(records, policies)) {
        const nr = getSyscallNumber(name);
        if (nr === undefined || nr >= SysLimit.nrMax) continue;
        const [pathArg, dirfdArg] = getPathArguments(name);
        next.entries.push(['rts_watch', encodeWatchKey(wid, nr), encodeWatch(pathArg, dirfdArg)]);
        nrs.add(nr);
      }
      const preset = findPresetRecord(records, policies, FILELESS_PRESET);
      const fileless =
        preset === undefined || ACTION_BY_CODE[preset.action] === Action.Allow
          ? SysAction.none
          : ACTION_BY_CODE[preset.action] === Action.Block
            ? SysAction.block
            : SysAction.audit;
      next.workloads[w.anchor.key] = { id: id.toString(), wid };
      byWid.set(wid, { key: w.anchor.key, policies });
      switches.push([
        encodeSysWorkloadKey(id),
        encodeSysWorkload({ wid, generation: state.generation, fileless, host: w.anchor.host }),
      ]);
    });
    next.nrs = [...nrs].sort((a, b) => a - b);
    // New watches first, then the numbers, then each workload's switch to its new id; stale entries last.
    for (const [map, key, value] of next.entries) await this.request(`update ${map} ${key} ${value}`);
    for (const nr of next.nrs) await this.request(`update rts_nrs ${encodeNr(nr)} ${encodeNrValue(true)}`);
    // sys_enter costs every system call of the node: attached only while some workload watches one.
    if (next.nrs.length > 0) await this.request('enable');
    this.records = records;
    this.byWid = new Map([...this.byWid, ...byWid]);
    for (const [key, value] of switches) await this.request(`update rts_workloads ${key} ${value}`);
    const keep = new Set(Object.values(next.workloads).map((w) => w.id));
    for (const w of Object.values(this.state.workloads))
      if (!keep.has(w.id)) await this.request(`delete rts_workloads ${encodeSysWorkloadKey(BigInt(w.id))}`);
    for (const nr of this.state.nrs)
      if (!nrs.has(nr)) await this.request(`update rts_nrs ${encodeNr(nr)} ${encodeNrValue(false)}`);
    const fresh = new Set(next.entries.map(([m, k]) => `${m} ${k}`));
    for (const [map, key] of this.state.entries)
      if (!fresh.has(`${map} ${key}`)) await this.request(`delete ${map} ${key}`);
    if (next.nrs.length === 0) await this.request('disable');
    this.state = next;
    this.byWid = byWid;
    writeFileSync(this.recordPath, JSON.stringify(next));
  }

  /** Whether the sys_enter program is attached (it is while some workload watches a call). */
  async sysEnterAttached(): Promise<boolean> {
    return (await this.request('enabled')) === 'ok 1';
  }

  enforced(): Promise<{ generation: number; workloads: string[] }> {
    return Promise.resolve({
      generation: this.state.generation,
      workloads: Object.keys(this.state.workloads),
    });
  }

  /** The path a call named, made absolute from its directory fd or the caller's working directory if it can be. */
  private resolvePath(e: SysEvent): string | undefined {
    if (e.pathArg < 0) return undefined;
    if (e.path.startsWith('/') || e.path === '') return e.path === '' ? undefined : e.path;
    const fd = e.dirfdArg >= 0 ? Number(BigInt.asIntN(32, e.args[e.dirfdArg] ?? 0n)) : AT_FDCWD;
    const base = readLink(fd === AT_FDCWD ? `/proc/${e.tgid}/cwd` : `/proc/${e.tgid}/fd/${fd}`);
    if (base === undefined || !base.startsWith('/')) return e.path;
    return `${base === '/' ? '' : base}/${e.path}`;
  }

  private onEvent(bytes: Buffer): void {
    let e: SysEvent;
    try {
      e = decodeSysEvent(bytes);
    } catch {
      this.unmatched++;
      return;
    }
    const known = this.byWid.get(e.wid);
    const records = this.records;
    if (known === undefined || records === undefined) {
      this.unmatched++;
      return;
    }
    const executable = e.exe.startsWith('/') ? e.exe : readLink(`/proc/${e.tgid}/exe`);
    const base = {
      workload: known.key,
      timeNs: BigInt(Date.now()) * 1_000_000n,
      generation: e.generation,
      hostPid: e.tgid,
      hostPpid: e.ppid,
      pid: e.nsPid !== 0 ? e.nsPid : e.tgid,
      ppid: e.nsPpid,
      uid: e.uid,
      processName: executable ?? e.comm,
      parentProcessName: readLink(`/proc/${e.ppid}/exe`) ?? '',
      cgroup: '',
      enforcer: SYSCALL_ENFORCER,
    };
    if (e.kind === SysEventKind.fileless) {
      const preset = findPresetRecord(records, known.policies, FILELESS_PRESET);
      const block = e.action === SysAction.block;
      this.queue.push({
        ...base,
        operation: 'Process',
        kind: block ? DecisionKind.Block : DecisionKind.Audit,
        action: block ? Action.Block : Action.Audit,
        errno: 0,
        ruleIndex: -1,
        policyName: preset === undefined ? '' : (records.policies[preset.policy]?.name ?? ''),
        severity: preset?.severity ?? 0,
        tags: preset?.tags ?? [],
        message: preset?.message ?? '',
        // A Process event names the executable that called exec (alert-record.ts makes it the parent).
        resource: e.path,
        syscall: 'SYS_EXECVE',
        syscallArgs: `preset=${FILELESS_PRESET} file=${e.name} nlink=${e.nlink}${block ? ' killed=SIGKILL' : ''}`,
      });
      this.wake?.();
      return;
    }
    const syscall = getSyscallNameOf(e.nr);
    const path = this.resolvePath(e);
    const found = findSyscallRecord(records, known.policies, {
      syscall,
      ...(path === undefined ? {} : { path }),
      ...(executable === undefined ? {} : { executable }),
    });
    if (found === undefined || ACTION_BY_CODE[found.record.action] === Action.Allow) {
      this.unmatched++;
      return;
    }
    const r = found.record;
    const args =
      e.pathArg < 0
        ? ''
        : `${e.dirfdArg >= 0 ? `dirfd=${BigInt.asIntN(32, e.args[e.dirfdArg] ?? 0n)} ` : ''}pathname=${e.path}`;
    this.queue.push({
      ...base,
      operation: 'Syscall',
      kind: DecisionKind.Audit,
      action: Action.Audit,
      errno: 0,
      ruleIndex: found.index,
      policyName: records.policies[r.policy]?.name ?? '',
      severity: r.severity,
      tags: r.tags,
      message: r.message,
      resource: path ?? syscall,
      syscall: `SYS_${syscall.toUpperCase()}`,
      syscallArgs: ACTION_BY_CODE[r.action] === Action.Block ? `${args} rule=Block(audited)`.trim() : args,
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
    const [, seen, reported, dropped] = (await this.request('stats')).split(' ').map(Number);
    return {
      decisions: seen ?? 0,
      cacheHits: 0,
      reported: reported ?? 0,
      dropped: dropped ?? 0,
      workloads: Object.keys(this.state.workloads).length,
    };
  }

  async stop(options: { keepEnforcing: boolean }): Promise<void> {
    if (!options.keepEnforcing && !this.closed) {
      await this.request('unpin');
      this.state = { generation: 0, workloads: {}, entries: [], nrs: [] };
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
