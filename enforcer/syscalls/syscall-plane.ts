// The system call plane: drives the loader (rtctl-sys-loader.c) over text lines on its stdin and stdout, as the
// network plane drives its own. The kernel reports the calls each workload's Audit and Block `syscalls` rules
// name (filtered by call number and workload); this side decides which rule it is on the table's records
// (compiler/rule-table/syscall-records.ts) and reports an `Operation: Syscall` event. Where the loader's LSM
// programs are attached (a kernel with BPF-LSM), a call some hook covers (compiler/enforcement/
// syscall-coverage.ts) is also decided in the kernel at sys_enter on the entries written here (rts_decide,
// rts_kpaths: the same records in the same order), and a Block is denied with EACCES; the event says what the
// kernel did, and the alert reports that. Elsewhere, and for calls no hook covers, a Block rule is reported as an
// audit saying why it was not denied. The filelessExec preset is decided in the kernel at sched_process_exec;
// Block kills the process before its first instruction. The loader pins links and maps, so the programs stay
// attached across a restart of the enforcer.
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { randomInt } from 'node:crypto';
import { existsSync, readFileSync, readlinkSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { FILELESS_PRESET } from '../../compiler/decide/decide-syscall.js';
import { Action } from '../../compiler/ir/rule-set.js';
import {
  getSyscallDenyHookMask,
  getSyscallDenyHooks,
  isSyscallDecidedOnObject,
  SYSCALL_DENY_HOOKS,
} from '../../compiler/enforcement/syscall-coverage.js';
import { ACTION_BY_CODE, SourceCode } from '../../compiler/rule-table/rule-table-format.js';
import type { RuleTableRecords, SyscallRecord } from '../../compiler/rule-table/rule-table-records.js';
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
import {
  COMPAT_SYSCALLS,
  getPathArguments,
  getSyscallNameOf,
  getSyscallNumber,
} from './syscall-arguments.js';
import {
  SYS_DECIDE_OVERFLOW,
  SYS_DECIDE_RULES,
  SysAction,
  SysEventKind,
  SysKpathKind,
  SysLimit,
  SysVerdict,
  decodeSysEvent,
  encodeConfig,
  encodeConfigKey,
  encodeDecide,
  encodeKpathKey,
  encodeKpathValue,
  encodeNr,
  encodeNrValue,
  encodeSysWorkload,
  encodeSysWorkloadKey,
  encodeWatch,
  encodeWatchKey,
  SYS_VERDICT_UNREACHED,
  type SysEvent,
} from './sys-map-layout.js';

/** The alert `Enforcer` of this plane (the reference's name for its monitor). */
export const SYSCALL_ENFORCER = 'eBPF Monitor';
/** The alert `Enforcer` of a call the plane's LSM hooks denied. */
export const DENY_ENFORCER = 'BPFLSM';
/** AT_FDCWD as the kernel sees it in a 64-bit argument register (an int). */
const AT_FDCWD = -100;
/** The errno of a denied call (the LSM hooks return -EACCES). */
const EACCES = 13;

/** Why a Block rule's call was not denied, as the alert's `Data` says (`not-denied=<reason>`). */
export const NotDenied = {
  /** No LSM hook covers the call (compiler/enforcement/syscall-coverage.ts). */
  uncovered: 'uncovered',
  /** The kernel takes no LSM programs here (the fanotify plane's nodes): every call is audited. */
  noLsm: 'no-lsm',
  /** The kernel lacks one of the hooks the call reaches. */
  hookMissing: 'hook-missing',
  /** The kernel could not decide: a relative or unnormalised path, an executable it has not seen exec. */
  undecided: 'undecided',
  /** The kernel decided otherwise than the records here (a state change in between, or a path read twice). */
  kernelAllowed: 'kernel-allowed',
  /**
   * The call's path rules are decided on the object in its LSM hook, and it reached none: it failed before it
   * acted on any object (a missing file, an existing directory, ...). The alert names the path as passed.
   */
  notReached: 'not-reached',
} as const;

/** A rule's string's role in rts_kpath_val. */
type KpathRole = 'exact' | 'dir' | 'recursive';

/**
 * The kernel decision entries of one watched call of one workload: its records in table (precedence) order and
 * the strings their paths and sources name. Undefined when no record of the call is Block (nothing to deny).
 */
export function buildSyscallDecision(
  records: RuleTableRecords,
  policies: ReadonlySet<number>,
  wid: number,
  call: string,
  nr: number,
  hooks: number,
): Entry[] | undefined {
  const rules: { record: SyscallRecord; index: number }[] = [];
  (records.syscalls ?? []).forEach((record, index) => {
    if (policies.has(record.policy) && record.syscalls.includes(call)) rules.push({ record, index });
  });
  if (!rules.some((r) => ACTION_BY_CODE[r.record.action] === Action.Block)) return undefined;
  let nopath = 0n;
  let nosource = 0n;
  let block = 0n;
  let valid = 0n;
  const index: number[] = [];
  const strings = new Map<string, { kind: number; value: string; bits: Record<KpathRole, bigint> }>();
  const add = (kind: number, value: string, role: KpathRole, bit: bigint): void => {
    const key = `${kind}\u0000${value}`;
    let entry = strings.get(key);
    if (entry === undefined) {
      entry = { kind, value, bits: { exact: 0n, dir: 0n, recursive: 0n } };
      strings.set(key, entry);
    }
    entry.bits[role] |= bit;
  };
  rules.slice(0, SYS_DECIDE_RULES).forEach(({ record, index: at }, i) => {
    const bit = 1n << BigInt(i);
    valid |= bit;
    index.push(at);
    if (ACTION_BY_CODE[record.action] === Action.Block) block |= bit;
    if (record.path === '') nopath |= bit;
    else
      add(
        SysKpathKind.call,
        record.path,
        !record.path.endsWith('/') ? 'exact' : record.recursive ? 'recursive' : 'dir',
        bit,
      );
    if (record.sources.length === 0) nosource |= bit;
    for (const source of record.sources)
      add(
        SysKpathKind.source,
        source.value,
        source.kind === SourceCode.path ? 'exact' : source.recursive ? 'recursive' : 'dir',
        bit,
      );
  });
  const key = encodeWatchKey(wid, nr);
  const entries: Entry[] = [
    [
      'rts_decide',
      key,
      encodeDecide({
        nopath,
        nosource,
        block,
        valid,
        hooks,
        flags: rules.length > SYS_DECIDE_RULES ? SYS_DECIDE_OVERFLOW : 0,
        index,
      }),
    ],
  ];
  for (const { kind, value, bits } of strings.values()) {
    // A string of 256 bytes or more never equals a path the kernel reads (255 at most): it never matches there.
    const k = encodeKpathKey(wid, nr, kind, value);
    if (k !== undefined) entries.push(['rts_kpaths', k, encodeKpathValue(bits)]);
  }
  return entries;
}

export interface SyscallPlaneOptions {
  loaderPath: string;
  objectPath: string;
  /** Pin directory on a bpffs mount (production: /sys/fs/bpf/rtctl-sys). */
  pinDir: string;
  /** Where the plane records what it watches, for a restarted enforcer (a regular directory). */
  stateDir: string;
  /** The cgroup v2 mount point (found from /proc/self/mountinfo when absent). */
  cgroupRoot?: string;
  /**
   * Tests of the kernel decision on a kernel without BPF-LSM: write the decision entries of covered calls even
   * though no hook is attached. sys_enter decides as it would, nothing is denied (no hook), and each verdict goes
   * to `onVerdict`. Never set by the enforcer.
   */
  decideWithoutLsm?: boolean;
  /**
   * Tests of the path-swap race only: decide path rules at sys_enter on the string the caller passed even where the
   * LSM hooks are attached (as the plane did before it decided them on the object in the hook), to measure what
   * the object decision closes. Never set by the enforcer.
   */
  decidePathsOnString?: boolean;
  /** Called with the kernel's verdict on each syscall event (SysVerdict, and the record index it found). */
  onVerdict?: (v: { syscall: string; path: string; verdict: number; rule: number }) => void;
}

interface Pending {
  resolve: (line: string) => void;
  reject: (error: Error) => void;
}

export type Entry = [map: string, key: string, value: string];

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
  /** Events where the kernel's decision and the one taken here on the records differ (the kernel's is reported). */
  disagreed = 0;
  resumed = false;
  /** The LSM hooks the loader attached (RTS_HOOK_* bits; 0: calls are audited only), and what it said. */
  denyHooks = 0;
  denyDetail = '';
  /** Whether start() has asked the loader which hooks it attached. */
  lsmChecked = false;
  /** Calls the LSM hooks denied, as of the last stats(). */
  denied = 0;

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
    const lsm = /^ok (\d+) ?(.*)$/.exec(await this.request('lsm'));
    this.denyHooks = lsm === null ? 0 : Number(lsm[1]);
    this.denyDetail = lsm?.[2] ?? '';
    this.lsmChecked = true;
    // The 32-bit calls the plane translates (a fact table; the same on every start).
    for (const [i386, name] of COMPAT_SYSCALLS) {
      const nr = getSyscallNumber(name);
      if (nr !== undefined) await this.request(`update rts_compat ${encodeNr(i386)} ${encodeNr(nr + 1)}`);
    }
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
    // Whether some call's path rules are decided on the object in its hook (reported by sys_exit).
    let onObject = false;
    const objects = this.denyHooks !== 0 && this.options.decidePathsOnString !== true;
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
        // Decided in the kernel where every hook the call reaches is attached.
        const hooks = getSyscallDenyHookMask(name);
        if (hooks !== 0 && ((hooks & this.denyHooks) === hooks || this.options.decideWithoutLsm === true)) {
          const decision = buildSyscallDecision(records, policies, wid, name, nr, hooks);
          if (decision !== undefined) next.entries.push(...decision);
          if (decision !== undefined && pathArg >= 0 && isSyscallDecidedOnObject(name)) onObject = true;
        }
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
    // sys_exit only where some call is decided on its object (it costs every call of the node too).
    if (next.nrs.length > 0) await this.request(objects && onObject ? 'enable exit' : 'enable');
    this.records = records;
    this.byWid = new Map([...this.byWid, ...byWid]);
    for (const [key, value] of switches) await this.request(`update rts_workloads ${key} ${value}`);
    // A new epoch: deny records left by calls of the previous state no longer deny.
    // Path rules are decided on the object the call acts on, in its hook, where the hooks are attached.
    if (this.denyHooks !== 0 || this.options.decideWithoutLsm === true)
      await this.request(
        `update rts_config ${encodeConfigKey()} ${encodeConfig(randomInt(1, 2 ** 32 - 1), objects)}`,
      );
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
    this.options.onVerdict?.({ syscall, path: e.path, verdict: e.verdict, rule: e.rule });
    // What the kernel did is what the alert reports: a denial (a deny verdict, carried out by the call's hooks)
    // names the rule the kernel found.
    const hooks = getSyscallDenyHookMask(syscall);
    const carriedOut = hooks !== 0 && (hooks & this.denyHooks) === hooks;
    const kernelRule = e.verdict === SysVerdict.deny && carriedOut ? records.syscalls?.[e.rule] : undefined;
    if (kernelRule !== undefined && found?.index !== e.rule) this.disagreed++;
    const decided =
      kernelRule !== undefined
        ? { index: e.rule, record: kernelRule }
        : found === undefined || ACTION_BY_CODE[found.record.action] === Action.Allow
          ? undefined
          : found;
    if (decided === undefined) {
      this.unmatched++;
      return;
    }
    const r = decided.record;
    const denied = kernelRule !== undefined;
    const args =
      e.pathArg < 0
        ? ''
        : `${e.dirfdArg >= 0 ? `dirfd=${BigInt.asIntN(32, e.args[e.dirfdArg] ?? 0n)} ` : ''}pathname=${e.path}`;
    let data = args;
    if (!denied && ACTION_BY_CODE[r.action] === Action.Block) {
      const why = this.whyNotDenied(syscall, e.verdict);
      if (why === NotDenied.kernelAllowed) this.disagreed++;
      data = `${args} rule=Block(audited) not-denied=${why}`.trim();
    }
    this.queue.push({
      ...base,
      operation: 'Syscall',
      kind: denied ? DecisionKind.Block : DecisionKind.Audit,
      action: denied ? Action.Block : Action.Audit,
      errno: denied ? EACCES : 0,
      ruleIndex: decided.index,
      policyName: records.policies[r.policy]?.name ?? '',
      severity: r.severity,
      tags: r.tags,
      message: r.message,
      resource: path ?? syscall,
      syscall: `SYS_${syscall.toUpperCase()}`,
      syscallArgs: data,
      // A denial is the BPF-LSM hook's (the reference's name for its enforcer); an audit is the monitor's.
      ...(denied ? { enforcer: DENY_ENFORCER } : {}),
    });
    this.wake?.();
  }

  /** Why a call a Block rule decides was not denied. */
  private whyNotDenied(call: string, verdict: number): string {
    const hooks = getSyscallDenyHookMask(call);
    if (getSyscallDenyHooks(call) === undefined) return NotDenied.uncovered;
    if (this.denyHooks === 0) return NotDenied.noLsm;
    if ((hooks & this.denyHooks) !== hooks) return NotDenied.hookMissing;
    if (verdict === SYS_VERDICT_UNREACHED) return NotDenied.notReached;
    return verdict === SysVerdict.undecided ? NotDenied.undecided : NotDenied.kernelAllowed;
  }

  /** The LSM hooks attached, by name (empty where the kernel takes no LSM programs). */
  listDenyHooks(): string[] {
    return SYSCALL_DENY_HOOKS.filter((_, bit) => (this.denyHooks & (1 << bit)) !== 0);
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
    const [, seen, reported, dropped, denied] = (await this.request('stats')).split(' ').map(Number);
    this.denied = denied ?? 0;
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
