// Writes one SELinux CIL module for a host node set: a file type and `filecon` per protected path
// expression, `allow` rules that express Allow and Audit (and the exempt reads of readOnly Block),
// `auditallow` for Audit. Types are left out of the base `file_type` attribute, so no domain may use
// them unless the module says so: that is how Block is expressed in an allow-only language.
import type { Diagnostic } from '../../diagnostics/diagnostic.js';
import { Action, Operation, type PolicyIR, type Rule } from '../../ir/rule-set.js';
import type { PolicyDocument } from '../../model/policy-document.js';
import { isMatcherForOperation } from '../../decide/match-rule.js';
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

/** The permissions the subject domains get on the type of the deciding rule, and the audited ones. */
function describeAccess(rule: Rule): { allow: string[]; audit: string[] } {
  const exec = rule.operation === Operation.Process;
  switch (rule.action) {
    case Action.Block:
      // Process Block: the binary may still be read, not executed. File Block: nothing, except the
      // reads a readOnly Block exempts.
      if (exec) return { allow: [...READ], audit: [] };
      return { allow: rule.readOnly ? [...READ] : [], audit: [] };
    case Action.Audit:
      if (exec) return { allow: [...READ, ...EXEC], audit: [...EXEC] };
      return { allow: [...READ, ...WRITE], audit: rule.readOnly ? [...WRITE] : [...READ, ...WRITE] };
    case Action.Allow:
      if (exec) return { allow: [...READ, ...EXEC], audit: [] };
      return { allow: rule.readOnly ? [...READ] : [...READ, ...WRITE], audit: [] };
  }
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
      const key = `${rule.operation}\u0000${regex}`;
      const list = byRegex.get(key) ?? [];
      list.push({ policy, rule });
      byRegex.set(key, list);
    }
    if (policy.syscallRules.length > 0 || policy.presets.length > 0) {
      warn(
        'RT4105',
        `syscalls and presets have no SELinux equivalent; left out of module ${set.name}`,
        policy,
      );
    }
  }

  // One type per regex, in precedence order of their deciding rules. Process and File rules on the
  // same regex share the label: the more precedent rule of each class sets that class's permissions.
  const entries = [...byRegex.entries()].map(([key, rules]) => {
    rules.sort(compareRulePrecedence);
    return { key, regex: key.slice(key.indexOf('\u0000') + 1), winner: rules[0] as PolicyRule, rules };
  });
  entries.sort(
    (a, b) => compareRulePrecedence(a.winner, b.winner) || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0),
  );
  const typeOf = new Map<string, string>();
  const lines: string[] = [
    `; rtctl SELinux module ${set.name} (generated by \`rtctl compile --target selinux\`; do not edit)`,
    `; node selector: ${JSON.stringify(set.nodeLabels)}`,
    `; policies: ${set.policies.map((p) => p.name).join(', ')}`,
    `; needs from the base policy: user system_u, roles object_r, the "${SUBJECT_ATTRIBUTE}" attribute of process domains`,
    `(block ${set.name}`,
  ];
  const perms = new Map<
    string,
    { allow: Set<string>; audit: Set<string>; exec: boolean; comment: string[] }
  >();
  for (const e of entries) {
    let type = typeOf.get(e.regex);
    if (type === undefined) {
      type = `t${typeOf.size}`;
      typeOf.set(e.regex, type);
      perms.set(type, { allow: new Set(), audit: new Set(), exec: false, comment: [] });
      lines.push(
        '',
        `  (type ${type})`,
        `  (roletype object_r ${type})`,
        `  (filecon ${quoteCil(e.regex)} any (system_u object_r ${type} ((s0) (s0))))`,
      );
    }
    const p = perms.get(type);
    if (p === undefined) continue;
    const access = describeAccess(e.winner.rule);
    for (const x of access.allow) p.allow.add(x);
    for (const x of access.audit) p.audit.add(x);
    const loc = e.winner.rule.location;
    p.comment.push(
      `${e.winner.rule.operation} ${e.winner.rule.action} by ${e.winner.policy.name} (${loc.file}:${loc.line})`,
    );
  }
  for (const [type, p] of perms) {
    lines.push('', ...p.comment.map((c) => `  ; ${type}: ${c.replace(/[^\x20-\x7e]/g, '?')}`));
    lines.push(`  (allow ${SUBJECT_ATTRIBUTE} ${type} (dir (${DIR_BASE.join(' ')})))`);
    const order = [...READ, ...WRITE, ...EXEC];
    const allow = order.filter((x) => p.allow.has(x));
    const audit = order.filter((x) => p.audit.has(x));
    if (allow.length > 0) lines.push(`  (allow ${SUBJECT_ATTRIBUTE} ${type} (file (${allow.join(' ')})))`);
    if (audit.length > 0)
      lines.push(`  (auditallow ${SUBJECT_ATTRIBUTE} ${type} (file (${audit.join(' ')})))`);
  }
  lines.push(')', '');
  return { name: set.name, text: lines.join('\n'), diagnostics };
}
