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

function sourceForm(s: SourceMatcher): string {
  return s.kind === 'path' ? 'fromSource.path' : s.recursive ? 'fromSource.dir.recursive' : 'fromSource.dir';
}

/** Appends `form` unless it is there (forms are few: a scan is cheaper than a set). */
function addForm(forms: string[], form: string): void {
  if (!forms.includes(form)) forms.push(form);
}

/** `first`, then the forms of `sources`, without repeats. */
function withSourceForms(first: string, sources: readonly SourceMatcher[]): string[] {
  const forms = [first];
  for (const s of sources) addForm(forms, sourceForm(s));
  return forms;
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

/** True when `path` is `root` or below it (compared in place: every rule of a compile is tested). */
function isUnder(path: string, root: string): boolean {
  return path.startsWith(root) && (path.length === root.length || path.charCodeAt(root.length) === 47);
}

/** Every form of a path, protocol or capability rule. */
export function listRuleForms(rule: Rule): string[] {
  const forms = withSourceForms(getRuleKindForm(rule), rule.fromSource);
  // Pseudo file systems the fanotify plane does not mark (and file contexts do not label).
  const fixed = fixedPathOf(rule.matcher);
  if (fixed !== undefined && (isUnder(fixed, '/proc') || isUnder(fixed, '/sys')))
    addForm(forms, 'path.procSys');
  if (fixed !== undefined && isUnder(fixed, '/dev')) addForm(forms, 'path.dev');
  // The cgroup network programs of the fanotify target see neither the acting executable nor the terminal.
  if (rule.operation === Operation.Network && rule.fromSource.length > 0)
    addForm(forms, 'network.fromSource');
  if (rule.operation === Operation.Network && rule.pts) addForm(forms, 'network.pts');
  if (rule.readOnly) addForm(forms, 'readOnly');
  if (rule.ownerOnly) addForm(forms, 'ownerOnly');
  if (rule.pts) addForm(forms, 'pts');
  if (rule.allowedArgs.length > 0) addForm(forms, 'allowedArgs');
  if (rule.action === Action.Allow) addForm(forms, 'action.Allow');
  return forms;
}

/** Every form of a syscalls rule; a Block naming a call no LSM hook covers is `syscalls.uncovered` too. */
export function listSyscallRuleForms(rule: SyscallRule): string[] {
  const kind = rule.path === undefined ? 'syscalls.matchSyscalls' : 'syscalls.matchPaths';
  const forms = [kind];
  if (rule.action === Action.Block && listUncoveredSyscalls(rule.syscalls).length > 0)
    forms.push('syscalls.uncovered');
  for (const s of rule.fromSource) addForm(forms, sourceForm(s));
  return forms;
}

/** Calls `visit` with every rule of a policy and its forms, in the order of the policy's lists. */
export function forEachRuleEntry(
  policy: PolicyIR,
  visit: (location: SourceLocation, forms: string[]) => void,
): void {
  for (const r of policy.rules) visit(r.location, listRuleForms(r));
  for (const r of policy.syscallRules) visit(r.location, listSyscallRuleForms(r));
  for (const r of policy.dnsQueryRules)
    visit(r.location, withSourceForms('network.matchDNSQueries', r.fromSource));
  for (const p of policy.presets)
    visit(p.location, [p.name === 'filelessExec' ? 'presets.filelessExec' : 'presets']);
  for (const r of policy.deviceRules) visit(r.location, ['device.matchDevice']);
}

/** Every rule of a policy, in the order of the policy's lists, with its forms. */
export function listRuleEntries(policy: PolicyIR): RuleEntry[] {
  const entries: RuleEntry[] = [];
  forEachRuleEntry(policy, (location, forms) => entries.push({ location, forms }));
  return entries;
}
