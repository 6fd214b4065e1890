// The intermediate representation every backend, the decision oracle and the enforcer consume: policies
// lowered with every inherited value (action, severity, tags, message) resolved on each rule, in a
// deterministic order. Built by lower/lower-policy.ts from validated policy documents.

/** The three actions of the seed. */
export const Action = { Allow: 'Allow', Audit: 'Audit', Block: 'Block' } as const;
export type Action = (typeof Action)[keyof typeof Action];

/** Operation classes the decision semantics know about. */
export const Operation = {
  Process: 'Process',
  File: 'File',
  Network: 'Network',
  Capabilities: 'Capabilities',
} as const;
export type Operation = (typeof Operation)[keyof typeof Operation];

/** Policy kinds. */
export const PolicyKind = { RuntimePolicy: 'RuntimePolicy', RuntimeHostPolicy: 'RuntimeHostPolicy' } as const;
export type PolicyKind = (typeof PolicyKind)[keyof typeof PolicyKind];

/** Where a rule or policy came from: file, 1-based line and column, JSON pointer within its document. */
export interface SourceLocation {
  file: string;
  line: number;
  column: number;
  pointer: string;
}

/** What a rule matches on the operation's resource. */
export type Matcher =
  /** Exact absolute path (process binary or file). */
  | { kind: 'path'; path: string }
  /** Process binary by base name, wherever it lives. */
  | { kind: 'execname'; name: string }
  /** Any entry directly in `dir` (which ends in `/`), or at any depth when recursive. */
  | { kind: 'directory'; dir: string; recursive: boolean }
  /** Glob: `*` within one path segment, `**` across segments, `?` one character. */
  | { kind: 'pattern'; pattern: string }
  /** Network protocol, lower-cased (`tcp`, `udp`, `icmp`, `raw`, `all`, ...). */
  | { kind: 'protocol'; protocol: string }
  /** Capability name, lower-cased without the `cap_` prefix (`net_raw`). */
  | { kind: 'capability'; capability: string }
  /**
   * Destination of a connect or sendmsg (`network.matchAddresses`): a canonical CIDR block
   * (`169.254.169.254/32`, `fd00:ec2::254/128`; compiler/net/cidr.ts), its prefix length, the destination
   * ports (empty: any), and the protocol (`tcp`, `udp`, ...; empty: any).
   */
  | { kind: 'address'; cidr: string; prefix: number; ports: number[]; protocol: string };

/** A `fromSource` entry: the acting executable by exact path, or by directory. */
export type SourceMatcher =
  { kind: 'path'; path: string } | { kind: 'directory'; dir: string; recursive: boolean };

/** One rule, with every inherited value resolved. */
export interface Rule {
  operation: Operation;
  matcher: Matcher;
  /** Empty: any acting executable. */
  fromSource: SourceMatcher[];
  readOnly: boolean;
  ownerOnly: boolean;
  action: Action;
  severity: number;
  tags: string[];
  message: string;
  /** Process rules only: argument allow list (`allowedArgs`), empty when not given. */
  allowedArgs: string[];
  /** Restrict to processes with a terminal (`pts`). */
  pts: boolean;
  /** Where the rule is written. */
  location: SourceLocation;
}

/** A `syscalls` rule: monitored (audit) system calls, optionally by path and source. */
export interface SyscallRule {
  syscalls: string[];
  /** Path or directory (ends in `/`) the call acts on, if restricted. */
  path?: string;
  recursive: boolean;
  fromSource: SourceMatcher[];
  action: Action;
  severity: number;
  tags: string[];
  message: string;
  location: SourceLocation;
}

/** A `network.matchDNSQueries` rule: no target decides DNS queries yet; kept so that warnings and status name it. */
export interface DnsQueryRule {
  domain: string;
  fromSource: SourceMatcher[];
  action: Action;
  location: SourceLocation;
}

/** A `device.matchDevice` rule (host policies): no target decides devices yet; kept like DnsQueryRule. */
export interface DeviceRule {
  deviceClass: string;
  action: Action;
  location: SourceLocation;
}

/** A named preset (`filelessExec`, ...) with its resolved action. */
export interface PresetRule {
  name: string;
  action: Action;
  /** Inherited from the policy (presets carry no fields of their own but name and action). */
  severity: number;
  tags: string[];
  message: string;
  location: SourceLocation;
}

/** A label-set requirement of a pod selector's matchExpressions, as written (`key: label`, values `k=v`). */
export interface LabelExpression {
  operator: 'In' | 'NotIn';
  /** `key=value` pairs. */
  values: string[];
}

/** Which workloads a policy selects. */
export type Target =
  | {
      kind: 'pods';
      namespace: string;
      /** Empty object: every pod of the namespace. */
      matchLabels: Record<string, string>;
      matchExpressions: LabelExpression[];
    }
  | {
      kind: 'host';
      /** Node label requirements; a value `*` matches any value of that key. */
      nodeLabels: Record<string, string>;
    };

/** One lowered policy. */
export interface PolicyIR {
  kind: PolicyKind;
  name: string;
  /** The namespace for pod policies; empty for host policies. */
  namespace: string;
  target: Target;
  rules: Rule[];
  syscallRules: SyscallRule[];
  /** Named presets (`filelessExec`, ...), with their resolved action. */
  presets: PresetRule[];
  /** `network.matchDNSQueries` rules (enforced by no target: compiler/enforcement). */
  dnsQueryRules: DnsQueryRule[];
  /** `device.matchDevice` rules (enforced by no target: compiler/enforcement). */
  deviceRules: DeviceRule[];
  /** Free-form AppArmor snippet (`spec.apparmor`), passed through to the AppArmor backend. */
  apparmor: string;
  location: SourceLocation;
}

/** The compiled rule set: all policies, sorted by kind, namespace, name. */
export interface RuleSet {
  policies: PolicyIR[];
}

/** An address matcher as one line of text: `169.254.169.254/32 ports 80,443 tcp`. */
export function formatAddressMatcher(m: Extract<Matcher, { kind: 'address' }>): string {
  const ports = m.ports.length > 0 ? ` ports ${m.ports.join(',')}` : '';
  return `${m.cidr}${ports}${m.protocol === '' ? '' : ` ${m.protocol}`}`;
}
