// Writes one SELinux CIL module for a host node set: a file type and `filecon` per protected path
// expression, `allow` rules that express Allow and Audit (and the exempt reads of readOnly Block),
// `auditallow` for Audit. Types are left out of the base `file_type` attribute, so no domain may use
// them unless the module says so: that is how Block is expressed in an allow-only language.
import type { Diagnostic } from '../../diagnostics/diagnostic.js';
import { Action, Operation, type PolicyIR, type Rule } from '../../ir/rule-set.js';
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
  const warn = (code: string, message: string, policy: PolicyIR, rule?: Rule): void => {
    const loc = rule?.location ?? policy.location;
    const key = `${code}\u0000${loc.file}\u0000${loc.line}\u0000${loc.column}`;
    if (warned.has(key)) return;
    warned.add(key);
    diagnostics.push(createBackendDiagnostic(code, message, loc, findDocumentIndex(documents, policy)));
  };

  const byRegex = new Map<string, PolicyRule[]>();
  for (const policy of set.policies) {
    for (const rule of policy.rules) {
      if (!isMatcherForOperation(rule.matcher, rule.operation)) continue;
      if (rule.operation === Operation.Network || rule.operation === Operation.Capabilities) {
        warn(
          'RT4104',
          `${rule.operation} rule is left out of SELinux module ${set.name}; the rule table enforces it`,
          policy,
          rule,
        );
        continue;
      }
      if (rule.fromSource.length > 0) {
        warn(
          'RT4102',
          `fromSource rule is left out of SELinux module ${set.name}; the rule table enforces it`,
          policy,
          rule,
        );
        continue;
      }
      const regex = toFileContextRegex(rule);
      if (regex === null) {
        warn(
          'RT4106',
          `path cannot be written exactly as a file context; rule left out of SELinux module ${set.name}`,
          policy,
          rule,
        );
        continue;
      }
      if (rule.ownerOnly) {
        warn(
          'RT4103',
          `ownerOnly has no SELinux equivalent; module ${set.name} applies the rule to every user`,
          policy,
          rule,
        );
      }
      if (rule.pts || rule.allowedArgs.length > 0) {
        warn(
          'RT4105',
          `pts/allowedArgs have no SELinux equivalent; module ${set.name} ignores them`,
          policy,
          rule,
        );
      }
      if (rule.action === Action.Allow) {
        warn(
          'RT4101',
          `Allow rule cannot make host processes least-permissive in SELinux module ${set.name}; other files stay under the base policy`,
          policy,
          rule,
        );
      }
      const list = byRegex.get(regex) ?? [];
      list.push({ policy, rule });
      byRegex.set(regex, list);
    }
    if (policy.syscallRules.length > 0 || policy.presets.length > 0) {
      warn(
        'RT4105',
        `syscalls and presets have no SELinux equivalent; left out of module ${set.name}`,
        policy,
      );
    }
  }

  // One type per regex (a file has one label), in precedence order of their deciding rules. Reads,
  // writes and execution are each decided by the first rule that applies to them, as in the oracle
  // (a readOnly Block lets reads fall through to the next rule).
  const entries = [...byRegex.entries()].map(([regex, rules]) => {
    rules.sort(compareRulePrecedence);
    return {
      regex,
      winner: rules[0] as PolicyRule,
      read: findDecider(rules, Operation.File, false),
      write: findDecider(rules, Operation.File, true),
      exec: findDecider(rules, Operation.Process, false),
    };
  });
  entries.sort(
    (a, b) =>
      compareRulePrecedence(a.winner, b.winner) || (a.regex < b.regex ? -1 : a.regex > b.regex ? 1 : 0),
  );
  const lines: string[] = [
    `; rtctl SELinux module ${set.name} (generated by \`rtctl compile --target selinux\`; do not edit)`,
    `; node selector: ${JSON.stringify(set.nodeLabels)}`,
    `; policies: ${set.policies.map((p) => p.name).join(', ')}`,
    `; needs from the base policy: user system_u, roles object_r, the "${SUBJECT_ATTRIBUTE}" attribute of process domains`,
    `(block ${set.name}`,
  ];
  const order = [...READ, ...WRITE, ...EXEC];
  entries.forEach((e, i) => {
    const type = `t${i}`;
    const allow = new Set<string>();
    const audit = new Set<string>();
    const grant = (perms: readonly string[], decider: PolicyRule | undefined): boolean => {
      if (decider?.rule.action === Action.Block) return false;
      for (const x of perms) allow.add(x);
      if (decider?.rule.action === Action.Audit) for (const x of perms) audit.add(x);
      return true;
    };
    const readable = grant(READ, e.read);
    grant(WRITE, e.write);
    // Without a Process rule, execution follows reading (exec needs the file readable).
    if (e.exec !== undefined || readable) grant(EXEC, e.exec);
    const deciders = new Map<PolicyRule, string[]>();
    for (const [what, d] of [
      ['read', e.read],
      ['write', e.write],
      ['exec', e.exec],
    ] as const) {
      if (d !== undefined) deciders.set(d, [...(deciders.get(d) ?? []), what]);
    }
    lines.push(
      '',
      ...[...deciders.entries()].map(
        ([d, what]) =>
          `  ; ${type} ${what.join('/')}: ${`${d.rule.operation} ${d.rule.action} by ${d.policy.name} (${d.rule.location.file}:${d.rule.location.line})`.replace(/[^\x20-\x7e]/g, '?')}`,
      ),
      `  (type ${type})`,
      `  (roletype object_r ${type})`,
      `  (filecon ${quoteCil(e.regex)} any (system_u object_r ${type} ((s0) (s0))))`,
      `  (allow ${SUBJECT_ATTRIBUTE} ${type} (dir (${DIR_BASE.join(' ')})))`,
    );
    const allowed = order.filter((x) => allow.has(x));
    const audited = order.filter((x) => audit.has(x));
    if (allowed.length > 0)
      lines.push(`  (allow ${SUBJECT_ATTRIBUTE} ${type} (file (${allowed.join(' ')})))`);
    if (audited.length > 0)
      lines.push(`  (auditallow ${SUBJECT_ATTRIBUTE} ${type} (file (${audited.join(' ')})))`);
  });
  lines.push(')', '');
  return { name: set.name, text: lines.join('\n'), diagnostics };
}
