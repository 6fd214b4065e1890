// Decisions on the table's system call and preset records (rule-table-records.ts): the first record in table
// order whose policy selects the workload and which matches the call decides, as the records are sorted by
// precedence. The system call plane (enforcer/syscalls/) decides its kernel's events with this; the oracle
// (compiler/decide/decide-syscall.ts) decides the same from policies, and the differential test compares them.
import { isInDirectory, normalizeAbsolutePath } from '../decide/path-match.js';
import { SourceCode } from './rule-table-format.js';
import type { PresetRecord, RuleTableRecords, SourceRecord, SyscallRecord } from './rule-table-records.js';

/** One system call as the plane saw it. */
export interface SyscallCall {
  syscall: string;
  /** The path the call names, resolved to an absolute path when it could be. */
  path?: string;
  /** The calling executable, when known. */
  executable?: string;
}

function sourceMatches(s: SourceRecord, actor: string): boolean {
  return s.kind === SourceCode.path ? actor === s.value : isInDirectory(actor, s.value, s.recursive);
}

function recordMatches(r: SyscallRecord, call: SyscallCall): boolean {
  if (!r.syscalls.includes(call.syscall)) return false;
  if (r.path !== '') {
    if (call.path === undefined || !call.path.startsWith('/')) return false;
    const path = normalizeAbsolutePath(call.path);
    if (r.path.endsWith('/') ? !isInDirectory(path, r.path, r.recursive) : path !== r.path) return false;
  }
  if (r.sources.length > 0) {
    if (call.executable === undefined) return false;
    const actor = normalizeAbsolutePath(call.executable);
    if (!r.sources.some((s) => sourceMatches(s, actor))) return false;
  }
  return true;
}

/** The deciding syscalls record of a call in a workload whose policy set is `policies`, and its index. */
export function findSyscallRecord(
  records: RuleTableRecords,
  policies: ReadonlySet<number>,
  call: SyscallCall,
): { index: number; record: SyscallRecord } | undefined {
  const list = records.syscalls ?? [];
  for (let i = 0; i < list.length; i++) {
    const r = list[i] as SyscallRecord;
    if (policies.has(r.policy) && recordMatches(r, call)) return { index: i, record: r };
  }
  return undefined;
}

/** The deciding preset record of this name in a workload (the records are sorted Block, Audit, Allow). */
export function findPresetRecord(
  records: RuleTableRecords,
  policies: ReadonlySet<number>,
  name: string,
): PresetRecord | undefined {
  return (records.presets ?? []).find((p) => p.name === name && policies.has(p.policy));
}

/** The call names a workload's Audit and Block syscalls rules name (the kernel filters on them). */
export function listWatchedSyscalls(records: RuleTableRecords, policies: ReadonlySet<number>): string[] {
  const names = new Set<string>();
  // Allow rules alone never produce an alert: a call only they name is not watched.
  for (const r of records.syscalls ?? [])
    if (policies.has(r.policy) && r.action !== 0) for (const n of r.syscalls) names.add(n);
  return [...names].sort();
}
