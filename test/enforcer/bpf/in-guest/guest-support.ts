// Helpers of the in-guest BPF-LSM tests: compile policies to a rule table, start the plane with its
// own pin directory, make workloads (a mount namespace, or a cgroup) and run commands inside them,
// and wait for events. Runs inside the test guest only (root, BPF-LSM active).
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdirSync, rmdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { compile } from '../../../../compiler/compile.js';
import { lintTexts } from '../../../../compiler/lint.js';
import { lowerDocuments } from '../../../../compiler/lower/lower.js';
import { buildRuleTableImage } from '../../../../compiler/rule-table/build-rule-table.js';
import { readRuleTable, type RuleTable } from '../../../../compiler/rule-table/read-rule-table.js';
import type { RuleTableImage } from '../../../../compiler/rule-table/rule-table-records.js';
import type { RuleSet } from '../../../../compiler/ir/rule-set.js';
import type { Workload } from '../../../../compiler/decide/decision-input.js';
import { BpfLsmPlane, type BpfLsmPlaneOptions } from '../../../../enforcer/bpf/bpf-lsm-plane.js';
import type { DataPlaneEvent, Postures, WorkloadAnchor } from '../../../../enforcer/data-plane.js';

export const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '..', '..');
export const loaderPath = path.join(repoRoot, 'dist', 'native', 'bpf', 'rtctl-bpf-loader');

/** Compiles policy YAML texts to a RuleSet, failing on any error diagnostic. */
export function compileRuleSet(texts: Record<string, string>): RuleSet {
  const sources = Object.entries(texts).map(([file, text]) => ({ file, text }));
  const result = compile(sources, { targets: [] });
  const errors = result.diagnostics.filter((d) => d.severity === 'error');
  if (errors.length > 0)
    throw new Error(`policies do not compile: ${JSON.stringify(errors.map((e) => e.message))}`);
  return result.ruleSet;
}

/**
 * Lowers policy YAML texts without the cross-policy conflict checks (generated policies may conflict;
 * the oracle and the table both resolve conflicts by precedence). Parse and schema errors still fail.
 */
export function lowerRuleSet(texts: Record<string, string>): RuleSet {
  const sources = Object.entries(texts).map(([file, text]) => ({ file, text }));
  const lint = lintTexts(sources);
  const fatal = lint.diagnostics.filter((d) => d.severity === 'error' && /^RT[12]/.test(d.code));
  if (fatal.length > 0)
    throw new Error(`policies do not parse: ${JSON.stringify(fatal.map((e) => e.message))}`);
  return lowerDocuments(lint.documents);
}

/** The table of a rule set (records and bytes) and a reader over its bytes. */
export function buildTable(ruleSet: RuleSet): { image: RuleTableImage; table: RuleTable } {
  const image = buildRuleTableImage(ruleSet);
  const read = readRuleTable(image.bytes);
  if (!read.ok) throw new Error(`table does not read back: ${read.error}`);
  return { image, table: read.table };
}

/** Indices of the policies of `table` selecting `workload`. */
export function selectPolicyIndices(table: RuleTable, workload: Workload): number[] {
  const set = table.selectPolicies(workload);
  const out: number[] = [];
  for (let p = 0; p < table.policyCount; p++)
    if (((set.bits[p >>> 3] ?? 0) & (1 << (p & 7))) !== 0) out.push(p);
  return out;
}

let pinCounter = 0;

/** Starts a plane pinning under its own directory (`options`: more plane options, e.g. a test's cache size). */
export async function startPlane(
  name: string,
  options: Omit<BpfLsmPlaneOptions, 'loaderPath' | 'pinDir'> = {},
): Promise<BpfLsmPlane> {
  pinCounter++;
  const plane = new BpfLsmPlane({
    ...options,
    loaderPath,
    pinDir: `/sys/fs/bpf/rtctl-${name}-${process.pid}-${pinCounter}`,
  });
  await plane.start();
  return plane;
}

/** A workload made of one long-lived process in a fresh mount namespace. */
export interface NamespaceWorkload {
  anchor: WorkloadAnchor;
  child: ChildProcess;
  stop(): void;
}

/** Starts `sleep` in a new mount namespace; commands run there through nsenter. */
export function createNamespaceWorkload(key: string): NamespaceWorkload {
  const child = spawn('unshare', ['--mount', '--propagation', 'private', 'sleep', '3600'], {
    stdio: 'ignore',
  });
  const pid = child.pid;
  if (pid === undefined) throw new Error('unshare did not start');
  // Wait until the child has entered its namespace (its mnt ns differs from ours).
  const ours = spawnSync('readlink', ['/proc/self/ns/mnt'], { encoding: 'utf8' }).stdout.trim();
  for (let i = 0; i < 200; i++) {
    const theirs = spawnSync('readlink', [`/proc/${pid}/ns/mnt`], { encoding: 'utf8' }).stdout.trim();
    if (theirs !== '' && theirs !== ours) break;
    spawnSync('sleep', ['0.05']);
  }
  return {
    anchor: { key, host: false, pid, cgroupPath: '' },
    child,
    stop: () => {
      child.kill('SIGKILL');
    },
  };
}

/** A workload made of a cgroup; commands run after moving their shell into it. */
export interface CgroupWorkload {
  anchor: WorkloadAnchor;
  cgroupPath: string;
  remove(): void;
}

export function createCgroupWorkload(key: string, name: string): CgroupWorkload {
  const cgroupPath = `/rtctl-test-${name}-${process.pid}`;
  mkdirSync(`/sys/fs/cgroup${cgroupPath}`, { recursive: true });
  return {
    anchor: { key, host: false, pid: process.pid, cgroupPath },
    cgroupPath,
    remove: () => {
      try {
        rmdirSync(`/sys/fs/cgroup${cgroupPath}`);
      } catch {
        // still populated by a straggler; the guest is discarded anyway
      }
    },
  };
}

export interface CommandResult {
  status: number | null;
  stdout: string;
  stderr: string;
}

/** Runs a shell command inside the mount namespace of `pid`. */
export function runInNamespace(pid: number, command: string, timeoutMs = 60_000): CommandResult {
  const r = spawnSync('nsenter', ['-t', String(pid), '-m', '--', '/bin/sh', '-c', command], {
    encoding: 'utf8',
    timeout: timeoutMs,
  });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** Runs a shell command inside a cgroup (the shell joins it before running the command). */
export function runInCgroup(cgroupPath: string, command: string, timeoutMs = 60_000): CommandResult {
  const script = `echo $$ > /sys/fs/cgroup${cgroupPath}/cgroup.procs && ${command}`;
  const r = spawnSync('/bin/sh', ['-c', script], { encoding: 'utf8', timeout: timeoutMs });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** Collects the plane's events in the background. */
export class EventCollector {
  readonly events: DataPlaneEvent[] = [];
  private readonly done: Promise<void>;

  constructor(plane: BpfLsmPlane) {
    this.done = (async () => {
      for await (const e of plane.events()) this.events.push(e);
    })();
  }

  /** Waits (bounded) until an event satisfies `match`; returns it or undefined. */
  async waitFor(
    match: (e: DataPlaneEvent) => boolean,
    timeoutMs = 10_000,
  ): Promise<DataPlaneEvent | undefined> {
    const until = Date.now() + timeoutMs;
    for (;;) {
      const found = this.events.find(match);
      if (found !== undefined || Date.now() > until) return found;
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  async finished(): Promise<void> {
    await this.done;
  }
}

/** Writes a file (creating its directory) for a test tree. */
export function writeTestFile(file: string, content: string, mode = 0o644): void {
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, content, { mode });
}

export const AUDIT_POSTURES: Postures = { file: 'audit', network: 'audit', capabilities: 'audit' };
