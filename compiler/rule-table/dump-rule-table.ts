// A text rendering of a rule table: header counts, rules in precedence order, index nodes. For golden
// files, for `rtctl`-side debugging, and for the C readers' authors to compare against.
import { NodeKind } from './rule-table-format.js';
import type { RuleTable } from './read-rule-table.js';

const MATCHER_NAMES = ['', 'path', 'execname', 'directory', 'pattern', 'protocol', 'capability', 'address'];
const NODE_NAMES = new Map<number, string>(Object.entries(NodeKind).map(([k, v]) => [v, k]));
const FLAG_NAMES = ['recursive', 'readOnly', 'ownerOnly', 'pts', 'allowedArgs'];

/** Renders a validated table as text, one line per policy, rule and node. */
export function dumpRuleTable(table: RuleTable): string {
  const lines: string[] = [`policies ${table.policyCount}, rules ${table.ruleCount}`];
  for (let p = 0; p < table.policyCount; p++) {
    const policy = table.getPolicy(p);
    lines.push(`policy ${p} ${policy.kind} ${policy.namespace}/${policy.name} ${policy.file}:${policy.line}`);
  }
  for (const r of table.listRules()) {
    const flags = FLAG_NAMES.filter((_, i) => (r.flags & (1 << i)) !== 0);
    lines.push(
      `rule ${r.index} ${r.operation} ${r.action} ${MATCHER_NAMES[r.matcher] ?? '?'} ${JSON.stringify(r.value)}` +
        `${r.ports.length > 0 ? ` ports=${r.ports.join(',')}` : ''}${r.protocol !== '' ? ` protocol=${r.protocol}` : ''}` +
        `${flags.length > 0 ? ` [${flags.join(',')}]` : ''}${r.sources.length > 0 ? ` from ${JSON.stringify(r.sources)}` : ''}` +
        ` depth=${r.depth} severity=${r.severity} policy=${r.policy} at ${r.location}`,
    );
  }
  for (const n of table.listNodes()) {
    lines.push(
      `node ${n.index} ${n.operation} ${NODE_NAMES.get(n.kind) ?? '?'} ${JSON.stringify(n.key)} -> ${n.rules.join(',')}`,
    );
  }
  return `${lines.join('\n')}\n`;
}
