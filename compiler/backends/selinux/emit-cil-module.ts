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

/** Permissions granted and audited on one type. */
interface Access {
  allow: string[];
  audit: string[];
}

/** File permissions on a type: from the deciding File rule, or all when no File rule names it. */
function describeFileAccess(rule: Rule | undefined): Access {
  if (rule === undefined) return { allow: [...READ, ...WRITE], audit: [] };
  switch (rule.action) {
    case Action.Block:
      // Nothing, except the reads a readOnly Block exempts.
      return { allow: rule.readOnly ? [...READ] : [], audit: [] };
    case Action.Audit:
      return { allow: [...READ, ...WRITE], audit: rule.readOnly ? [...WRITE] : [...READ, ...WRITE] };
    case Action.Allow:
      return { allow: rule.readOnly ? [...READ] : [...READ, ...WRITE], audit: [] };
  }
}

/** Execute permissions on a type: from the deciding Process rule; without one, exec follows reading. */
function describeExecAccess(rule: Rule | undefined, readable: boolean): Access {
  if (rule === undefined) return { allow: readable ? [...EXEC] : [], audit: [] };
  switch (rule.action) {
    case Action.Block:
      return { allow: [], audit: [] };
    case Action.Audit:
      return { allow: [...EXEC], audit: [...EXEC] };
    case Action.Allow:
      return { allow: [...EXEC], audit: [] };
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

  // One type per regex (a file has one label), in precedence order of their deciding rules. The
  // deciding File rule sets the file permissions, the deciding Process rule the execute permissions.
  const entries = [...byRegex.entries()].map(([regex, rules]) => {
    rules.sort(compareRulePrecedence);
    return {
      regex,
      winner: rules[0] as PolicyRule,
      file: rules.find((r) => r.rule.operation === Operation.File),
      process: rules.find((r) => r.rule.operation === Operation.Process),
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
    const fileAccess = describeFileAccess(e.file?.rule);
    const execAccess = describeExecAccess(e.process?.rule, fileAccess.allow.includes('read'));
    const allow = order.filter((x) => fileAccess.allow.includes(x) || execAccess.allow.includes(x));
    const audit = order.filter((x) => fileAccess.audit.includes(x) || execAccess.audit.includes(x));
    lines.push(
      '',
      ...[e.file, e.process].flatMap((d) =>
        d === undefined
          ? []
          : [
              `  ; ${type}: ${`${d.rule.operation} ${d.rule.action} by ${d.policy.name} (${d.rule.location.file}:${d.rule.location.line})`.replace(/[^\x20-\x7e]/g, '?')}`,
            ],
      ),
      `  (type ${type})`,
      `  (roletype object_r ${type})`,
      `  (filecon ${quoteCil(e.regex)} any (system_u object_r ${type} ((s0) (s0))))`,
      `  (allow ${SUBJECT_ATTRIBUTE} ${type} (dir (${DIR_BASE.join(' ')})))`,
    );
    if (allow.length > 0) lines.push(`  (allow ${SUBJECT_ATTRIBUTE} ${type} (file (${allow.join(' ')})))`);
    if (audit.length > 0)
      lines.push(`  (auditallow ${SUBJECT_ATTRIBUTE} ${type} (file (${audit.join(' ')})))`);
  });
  lines.push(')', '');
  return { name: set.name, text: lines.join('\n'), diagnostics };
}
