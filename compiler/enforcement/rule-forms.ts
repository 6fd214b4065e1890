// The forms of each rule of a lowered policy, as named by the enforcement table: the rule's kind (section,
// list, matcher) first, then its options (fromSource entries, readOnly, ownerOnly, pts, allowedArgs, Allow).
import {
  Action,
  Operation,
  type PolicyIR,
  type Rule,
  type SourceLocation,
  type SourceMatcher,
  type SyscallRule,
} from '../ir/rule-set.js';
import { listUncoveredSyscalls } from './syscall-coverage.js';

/** One rule of a policy with the forms the table knows it by. */
export interface RuleEntry {
  location: SourceLocation;
  /** The rule's kind first, then its options, without repeats. */
  forms: string[];
}

function sourceForms(sources: readonly SourceMatcher[]): string[] {
  return sources.map((s) =>
    s.kind === 'path' ? 'fromSource.path' : s.recursive ? 'fromSource.dir.recursive' : 'fromSource.dir',
  );
}

/** The kind form of a path, protocol or capability rule. */
export function getRuleKindForm(rule: Pick<Rule, 'operation' | 'matcher'>): string {
  const m = rule.matcher;
  const section = rule.operation === Operation.Process ? 'process' : 'file';
  switch (m.kind) {
    case 'path':
      return section === 'process' ? 'process.matchPaths.path' : 'file.matchPaths';
    case 'execname':
      return section === 'process' ? 'process.matchPaths.execname' : 'file.matchPaths';
    case 'directory':
      return `${section}.matchDirectories${m.recursive ? '.recursive' : ''}`;
    case 'pattern':
      return `${section}.matchPatterns`;
    case 'protocol':
      return `network.matchProtocols.${m.protocol.toLowerCase()}`;
    case 'capability':
      return 'capabilities.matchCapabilities';
    case 'address':
      return 'network.matchAddresses';
  }
}

/** The fixed part of a path matcher (a pattern up to its first wildcard); undefined for other matchers. */
function fixedPathOf(m: Rule['matcher']): string | undefined {
  switch (m.kind) {
    case 'path':
      return m.path;
    case 'directory':
      return m.dir;
    case 'pattern':
      return m.pattern.slice(0, m.pattern.search(/[*?[{]|$/));
    default:
      return undefined;
  }
}

function liesUnder(path: string, roots: readonly string[]): boolean {
  return roots.some((r) => path === r || path.startsWith(`${r}/`));
}

/** Every form of a path, protocol or capability rule. */
export function listRuleForms(rule: Rule): string[] {
  const forms = [getRuleKindForm(rule), ...sourceForms(rule.fromSource)];
  // Pseudo file systems the fanotify plane does not mark (and file contexts do not label).
  const fixed = fixedPathOf(rule.matcher);
  if (fixed !== undefined && liesUnder(fixed, ['/proc', '/sys'])) forms.push('path.procSys');
  if (fixed !== undefined && liesUnder(fixed, ['/dev'])) forms.push('path.dev');
  // The cgroup network programs of the fanotify target see neither the acting executable nor the terminal.
  if (rule.operation === Operation.Network && rule.fromSource.length > 0) forms.push('network.fromSource');
  if (rule.operation === Operation.Network && rule.pts) forms.push('network.pts');
  if (rule.readOnly) forms.push('readOnly');
  if (rule.ownerOnly) forms.push('ownerOnly');
  if (rule.pts) forms.push('pts');
  if (rule.allowedArgs.length > 0) forms.push('allowedArgs');
  if (rule.action === Action.Allow) forms.push('action.Allow');
  return [...new Set(forms)];
}

/** Every form of a syscalls rule; a Block naming a call no LSM hook covers is `syscalls.uncovered` too. */
export function listSyscallRuleForms(rule: SyscallRule): string[] {
  const kind = rule.path === undefined ? 'syscalls.matchSyscalls' : 'syscalls.matchPaths';
  const uncovered =
    rule.action === Action.Block && listUncoveredSyscalls(rule.syscalls).length > 0
      ? ['syscalls.uncovered']
      : [];
  return [...new Set([kind, ...uncovered, ...sourceForms(rule.fromSource)])];
}

/** Every rule of a policy, in the order of the policy's lists, with its forms. */
export function listRuleEntries(policy: PolicyIR): RuleEntry[] {
  return [
    ...policy.rules.map((r) => ({ location: r.location, forms: listRuleForms(r) })),
    ...policy.syscallRules.map((r) => ({ location: r.location, forms: listSyscallRuleForms(r) })),
    ...policy.dnsQueryRules.map((r) => ({
      location: r.location,
      forms: [...new Set(['network.matchDNSQueries', ...sourceForms(r.fromSource)])],
    })),
    ...policy.presets.map((p) => ({
      location: p.location,
      forms: [p.name === 'filelessExec' ? 'presets.filelessExec' : 'presets'],
    })),
    ...policy.deviceRules.map((r) => ({ location: r.location, forms: ['device.matchDevice'] })),
  ];
}
