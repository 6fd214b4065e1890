// Writes one SELinux CIL module for a host node set: a file type and `filecon` per protected path
// expression, `allow` rules that express Allow and Audit (and the exempt reads of readOnly Block),
// `auditallow` for Audit, and a domain per fromSource path (entered by executing it) whose own rules
// differ from the other host domains'. Types are left out of the base `file_type` attribute, so no
// domain may use them unless the module says so: that is how Block is expressed in an allow-only language.
import { Code } from '../../diagnostics/codes/code.js';
import type { Diagnostic } from '../../diagnostics/diagnostic.js';
import {
  Action,
  Operation,
  type PolicyIR,
  type Rule,
  type SourceLocation,
  type SourceMatcher,
} from '../../ir/rule-set.js';
import {
  describeBackendGaps,
  dropsSourceDirectories,
  isLeftOut,
  listBackendGaps,
  type BackendGap,
} from '../../enforcement/backend-gaps.js';
import { EnforcementTarget } from '../../enforcement/enforcement-table.js';
import { listRuleEntries, listRuleForms } from '../../enforcement/rule-forms.js';
import type { PolicyDocument } from '../../model/policy-document.js';
import { isMatcherForOperation, isRuleApplicable } from '../../decide/match-rule.js';
import type { OperationRequest } from '../../decide/decision-input.js';
import { normalizeDirectory } from '../../decide/path-match.js';
import { compareRulePrecedence, type PolicyRule } from '../../decide/precedence.js';
import { createBackendDiagnostic, findDocumentIndex } from '../apparmor/backend-diagnostic.js';
import { convertGlobToRegex, escapeRegexLiteral, isRepresentableInFileContext } from './escape-selinux.js';
import type { HostSet } from './group-host-sets.js';

/** The attribute of the base policy that holds the host's process domains. */
export const SUBJECT_ATTRIBUTE = 'domain';

const READ = ['open', 'read', 'getattr', 'ioctl', 'lock', 'map'];
const WRITE = ['write', 'append', 'create', 'setattr', 'unlink', 'rename', 'link'];
const EXEC = ['execute', 'execute_no_trans'];
const DIR_BASE = ['getattr', 'search', 'open', 'read'];

/** What emitting one module produced. */
export interface CilModule {
  name: string;
  text: string;
  diagnostics: Diagnostic[];
}

/** The filecon regex of a path matcher, or null when it cannot be written exactly. */
function toFileContextRegex(rule: Rule): string | null {
  const m = rule.matcher;
  switch (m.kind) {
    case 'path':
      return isRepresentableInFileContext(m.path) ? escapeRegexLiteral(m.path) : null;
    case 'directory': {
      const dir = normalizeDirectory(m.dir);
      if (!isRepresentableInFileContext(dir)) return null;
      return `${escapeRegexLiteral(dir)}${m.recursive ? '.+' : '[^/]+'}`;
    }
    case 'pattern':
      return isRepresentableInFileContext(m.pattern) ? convertGlobToRegex(m.pattern) : null;
    case 'execname':
      return isRepresentableInFileContext(m.name) ? `(.*/)?${escapeRegexLiteral(m.name)}` : null;
    default:
      return null;
  }
}

/** The rule (in precedence order) that decides one kind of access for a non-owner, if any. */
function findDecider(
  rules: readonly PolicyRule[],
  operation: Operation,
  write: boolean,
): PolicyRule | undefined {
  // SELinux has no owner condition: decide as for a non-owner (RT4103 says so).
  const probe: OperationRequest = { operation, resource: '', write, owner: false };
  return rules.find((r) => r.rule.operation === operation && isRuleApplicable(r.rule, probe));
}

function quoteCil(text: string): string {
  // Callers pass only representable text (no quote, no whitespace, printable ASCII).
  return `"${text}"`;
}

/** Emits the CIL module of one node set. */
export function emitCilModule(set: HostSet, documents: readonly PolicyDocument[]): CilModule {
  const diagnostics: Diagnostic[] = [];
  const warned = new Set<string>();
  const warn = (
    code: string,
    message: string,
    policy: PolicyIR,
    rule?: { location: SourceLocation },
  ): void => {
    const loc = rule?.location ?? policy.location;
    const key = `${code}\u0000${loc.file}\u0000${loc.line}\u0000${loc.column}`;
    if (warned.has(key)) return;
    warned.add(key);
    diagnostics.push(createBackendDiagnostic(code, message, loc, findDocumentIndex(documents, policy)));
  };

  const byRegex = new Map<string, PolicyRule[]>();
  // What SELinux cannot express comes from the enforcement table (compiler/enforcement): the warnings and what
  // is left out or written without a condition follow its cells. Only RT4106 (a path a file context cannot
  // carry) is about a value rather than a rule form, and stays here.
  const gapsOf = (
    policy: PolicyIR,
    forms: readonly string[],
    rule: { location: SourceLocation },
  ): BackendGap[] => {
    const gaps = listBackendGaps(forms, EnforcementTarget.Selinux);
    for (const d of describeBackendGaps(gaps, EnforcementTarget.Selinux, `module ${set.name}`, policy.kind))
      warn(d.code, d.message, policy, rule);
    return gaps;
  };
  for (const policy of set.policies) {
    for (const written of policy.rules) {
      let rule = written;
      if (!isMatcherForOperation(rule.matcher, rule.operation)) continue;
      const gaps = gapsOf(policy, listRuleForms(rule), rule);
      if (isLeftOut(gaps)) continue;
      const pathSources = rule.fromSource.filter(
        (x): x is Extract<SourceMatcher, { kind: 'path' }> =>
          x.kind === 'path' && isRepresentableInFileContext(x.path),
      );
      if (pathSources.length < rule.fromSource.length) {
        const unrepresentable = rule.fromSource.some(
          (x) => x.kind === 'path' && !isRepresentableInFileContext(x.path),
        );
        if (unrepresentable) {
          warn(
            Code.selinuxUnrepresentablePath,
            `a fromSource path cannot be written exactly as a file context; ${pathSources.length === 0 ? 'rule left out of' : 'only the other sources are kept in'} SELinux module ${set.name}`,
            policy,
            rule,
          );
        } else if (!dropsSourceDirectories(gaps)) {
          throw new Error('SELinux cannot give a domain to a directory; the enforcement table says it can');
        }
        if (pathSources.length === 0) continue;
        rule = { ...rule, fromSource: pathSources };
      }
      const regex = toFileContextRegex(rule);
      if (regex === null) {
        warn(
          Code.selinuxUnrepresentablePath,
          `path cannot be written exactly as a file context; rule left out of SELinux module ${set.name}`,
          policy,
          rule,
        );
        continue;
      }
      const list = byRegex.get(regex) ?? [];
      list.push({ policy, rule });
      byRegex.set(regex, list);
    }
    for (const entry of listRuleEntries({ ...policy, rules: [] }))
      if (!isLeftOut(gapsOf(policy, entry.forms, entry)))
        throw new Error(`SELinux cannot write ${entry.forms.join(', ')}; the enforcement table says it can`);
  }

  // fromSource paths: each gets a domain `d<i>` that processes enter when they execute it, and its
  // binary gets the entrypoint type `d<i>_exec`. The domain joins the base "domain" attribute, so it
  // keeps what ordinary host processes have; the module then says what differs for it.
  const sourcePaths = [
    ...new Set(
      [...byRegex.values()]
        .flat()
        .flatMap((r) => r.rule.fromSource.map((x) => (x.kind === 'path' ? x.path : ''))),
    ),
  ]
    .filter((x) => x !== '')
    .sort();
  const sourceIndex = new Map(sourcePaths.map((p, i) => [escapeRegexLiteral(p), i]));
  for (const regex of sourceIndex.keys()) if (!byRegex.has(regex)) byRegex.set(regex, []);

  // One type per regex (a file has one label). Reads, writes and execution are each decided by the
  // first rule in precedence order that applies to them, as in the oracle (a readOnly Block lets reads
  // fall through to the next rule); a source domain also sees the rules scoped to its source.
  const entries = [...byRegex.entries()].map(([regex, rules]) => {
    rules.sort(compareRulePrecedence);
    return { regex, rules, winner: rules[0] };
  });
  entries.sort((a, b) => {
    if (a.winner !== undefined && b.winner !== undefined) {
      const c = compareRulePrecedence(a.winner, b.winner);
      if (c !== 0) return c;
    } else if (a.winner !== b.winner) return a.winner === undefined ? 1 : -1;
    return a.regex < b.regex ? -1 : a.regex > b.regex ? 1 : 0;
  });
  const lines: string[] = [
    `; rtctl SELinux module ${set.name} (generated by \`rtctl compile --target selinux\`; do not edit)`,
    `; node selector: ${JSON.stringify(set.nodeLabels)}`,
    `; policies: ${set.policies.map((p) => p.name).join(', ')}`,
    `; needs from the base policy: user system_u, roles object_r and system_r, the "${SUBJECT_ATTRIBUTE}" attribute of process domains`,
    `(block ${set.name}`,
  ];
  const groups: { subject: string; source?: string }[] =
    sourcePaths.length === 0
      ? [{ subject: SUBJECT_ATTRIBUTE }]
      : [{ subject: 'others' }, ...sourcePaths.map((p, i) => ({ subject: `d${i}`, source: p }))];
  sourcePaths.forEach((p, i) => {
    lines.push(
      '',
      `  ; d${i}: processes running ${p.replace(/[^\x20-\x7e]/g, '?')}`,
      `  (type d${i})`,
      `  (roletype system_r d${i})`,
      `  (typeattributeset ${SUBJECT_ATTRIBUTE} (d${i}))`,
      `  (type d${i}_exec)`,
      `  (roletype object_r d${i}_exec)`,
      `  (typetransition ${SUBJECT_ATTRIBUTE} d${i}_exec process d${i})`,
      `  (allow ${SUBJECT_ATTRIBUTE} d${i} (process (transition)))`,
      `  (allow d${i} d${i}_exec (file (entrypoint)))`,
    );
  });
  if (sourcePaths.length > 0) {
    lines.push(
      '',
      '  ; others: every host domain but the source domains',
      '  (typeattribute others)',
      `  (typeattributeset others (and ${SUBJECT_ATTRIBUTE} (not (${sourcePaths.map((_, i) => `d${i}`).join(' ')}))))`,
    );
  }
  const order = [...READ, ...WRITE, ...EXEC];
  let next = 0;
  for (const e of entries) {
    const source = sourceIndex.get(e.regex);
    const type = source === undefined ? `t${next++}` : `d${source}_exec`;
    lines.push('');
    if (source === undefined) lines.push(`  (type ${type})`, `  (roletype object_r ${type})`);
    lines.push(
      `  (filecon ${quoteCil(e.regex)} any (system_u object_r ${type} ((s0) (s0))))`,
      `  (allow ${SUBJECT_ATTRIBUTE} ${type} (dir (${DIR_BASE.join(' ')})))`,
    );
    for (const g of groups) {
      const rules = e.rules.filter(
        (r) =>
          r.rule.fromSource.length === 0 ||
          r.rule.fromSource.some((x) => x.kind === 'path' && x.path === g.source),
      );
      const read = findDecider(rules, Operation.File, false);
      const write = findDecider(rules, Operation.File, true);
      const exec = findDecider(rules, Operation.Process, false);
      const allow = new Set<string>();
      const audit = new Set<string>();
      const grant = (perms: readonly string[], decider: PolicyRule | undefined): boolean => {
        if (decider?.rule.action === Action.Block) return false;
        for (const x of perms) allow.add(x);
        if (decider?.rule.action === Action.Audit) for (const x of perms) audit.add(x);
        return true;
      };
      const readable = grant(READ, read);
      grant(WRITE, write);
      // Without a Process rule, execution follows reading (exec needs the file readable).
      if (exec !== undefined || readable) grant(EXEC, exec);
      const deciders = new Map<PolicyRule, string[]>();
      for (const [what, d] of [
        ['read', read],
        ['write', write],
        ['exec', exec],
      ] as const) {
        if (d !== undefined) deciders.set(d, [...(deciders.get(d) ?? []), what]);
      }
      for (const [d, what] of deciders) {
        const where = `${d.rule.operation} ${d.rule.action} by ${d.policy.name} (${d.rule.location.file}:${d.rule.location.line})`;
        lines.push(`  ; ${g.subject} on ${type}, ${what.join('/')}: ${where.replace(/[^\x20-\x7e]/g, '?')}`);
      }
      const allowed = order.filter((x) => allow.has(x));
      const audited = order.filter((x) => audit.has(x));
      if (allowed.length > 0) lines.push(`  (allow ${g.subject} ${type} (file (${allowed.join(' ')})))`);
      if (audited.length > 0) lines.push(`  (auditallow ${g.subject} ${type} (file (${audited.join(' ')})))`);
    }
  }
  lines.push(')', '');
  return { name: set.name, text: lines.join('\n'), diagnostics };
}
