// The rule table as records (docs/rule-table.md): what the builder decides and the encoder lays out as bytes,
// and what a consumer that needs structure (the BPF map encoder) walks. Records refer to each other by index
// and hold strings as strings; the bytes add only the string table, the reference array and the hash buckets.
import type { MatcherCode, NodeKind } from './rule-table-format.js';

/** A selector label record. */
export interface LabelRecord {
  key: string;
  value: string;
  /** LabelOp code. */
  op: number;
  /** Expression group (0 for equality records). */
  group: number;
}

/** A policy record. */
export interface PolicyRecord {
  name: string;
  namespace: string;
  /** POLICY_KIND_CODES value: 0 RuntimePolicy, 1 RuntimeHostPolicy. */
  kind: number;
  /** Bit `c`: an Allow rule of class `c` without fromSource. */
  allowUnscoped: number;
  /** Bit `c`: an Allow rule of class `c` with fromSource (informational). */
  allowScoped: number;
  labels: LabelRecord[];
  expressionGroups: number;
  file: string;
  line: number;
}

/** A fromSource record. */
export interface SourceRecord {
  /** SourceCode value. */
  kind: number;
  /** Executable path, or directory ending in `/`. */
  value: string;
  recursive: boolean;
}

/** A rule record; its index in `rules` is its precedence (lower wins). */
export interface RuleRecord {
  /** Index into `policies`. */
  policy: number;
  /** Operation class code. */
  cls: number;
  matcher: MatcherCode;
  /** Action code. */
  action: number;
  /** RuleFlag bits. */
  flags: number;
  value: string;
  /** Directory depth (paths), prefix length (address rules). */
  depth: number;
  /** Address rules: IP protocol number (0: any); 0 for other rules. */
  protocol: number;
  /** Address rules: destination ports, ascending (empty: any); empty for other rules. */
  ports: number[];
  sources: SourceRecord[];
  severity: number;
  message: string;
  tags: string[];
  args: string[];
  file: string;
  line: number;
  column: number;
  pointer: string;
}

/** An index node: the rules listed under `(class, kind, key)`, ascending. */
export interface NodeRecord {
  cls: number;
  kind: NodeKind;
  key: string;
  rules: number[];
}

/**
 * A `syscalls` rule; its index in `syscalls` is its precedence (lower wins, compiler/decide/decide-syscall.ts).
 * Records only: the bytes do not carry them (docs/syscalls.md).
 */
export interface SyscallRecord {
  /** Index into `policies`. */
  policy: number;
  /** Call names as the schema lists them. */
  syscalls: string[];
  /** File path, directory (ends in `/`), or `` for none (matchSyscalls). */
  path: string;
  recursive: boolean;
  sources: SourceRecord[];
  /** Action code. */
  action: number;
  severity: number;
  message: string;
  tags: string[];
  file: string;
  line: number;
  column: number;
  pointer: string;
}

/** A preset of a policy (records only, like SyscallRecord); sorted Block, Audit, Allow, then by policy. */
export interface PresetRecord {
  policy: number;
  name: string;
  /** Action code. */
  action: number;
  severity: number;
  message: string;
  tags: string[];
  file: string;
  line: number;
  column: number;
  pointer: string;
}

/** Every record of one table, in table order. */
export interface RuleTableRecords {
  policies: PolicyRecord[];
  rules: RuleRecord[];
  /** Sorted by (class, kind, key bytes). */
  nodes: NodeRecord[];
  /**
   * `syscalls` rules in precedence order and presets, when the table is built from policies (absent when it is
   * read from bytes: a compiled table file carries no system call rules or presets).
   */
  syscalls?: SyscallRecord[];
  presets?: PresetRecord[];
}

/**
 * One rule table in both forms the data planes take: its records (for consumers that need structure) and
 * their encoding (for consumers that load bytes, such as the fanotify helper). Both describe the same table.
 */
export interface RuleTableImage {
  readonly records: RuleTableRecords;
  readonly bytes: Uint8Array;
}
