// The `rules` backend: the binary rule table the enforcer data planes load (docs/rule-table.md) plus
// a JSON manifest describing it (version, counts, digest, policy index).
import { createHash } from 'node:crypto';
import type { Backend, BackendInput, BackendOutput } from '../backend.js';
import { buildRuleTable, orderRuleTable } from '../../rule-table/build-rule-table.js';
import { VERSION_MAJOR, VERSION_MINOR } from '../../rule-table/rule-table-format.js';
import { Code } from '../../diagnostics/codes/code.js';
import { createBackendDiagnostic, findDocumentIndex } from '../apparmor/backend-diagnostic.js';

/** Path of the table inside the output directory. */
export const RULE_TABLE_PATH = 'rules/rule-table.bin';
/** Path of the manifest inside the output directory. */
export const RULE_TABLE_MANIFEST_PATH = 'rules/rule-table.json';

/** Emits the rule table and its manifest. */
export function emitRuleTable(input: BackendInput): BackendOutput {
  const table = buildRuleTable(input.ruleSet);
  const { policies, rules } = orderRuleTable(input.ruleSet);
  const manifest = {
    format: 'rtctl-rule-table',
    version: `${VERSION_MAJOR}.${VERSION_MINOR}`,
    file: 'rule-table.bin',
    size: table.length,
    sha256: createHash('sha256').update(table).digest('hex'),
    ruleCount: rules.length,
    policies: policies.map((p, index) => ({
      index,
      kind: p.kind,
      namespace: p.namespace,
      name: p.name,
      file: p.location.file,
      line: p.location.line,
      rules: p.rules.length,
    })),
  };
  // The table's bytes carry no syscalls rules or presets (docs/syscalls.md): said for each, never silent.
  const diagnostics = policies.flatMap((p) =>
    [...p.syscallRules, ...p.presets.filter((x) => x.name === 'filelessExec')].map((r) =>
      createBackendDiagnostic(
        Code.ruleTableSyscallsNotCarried,
        'not carried in the compiled rule table: an enforcer run from rules/rule-table.bin does not enforce it (the enforcer run from the policies does)',
        r.location,
        findDocumentIndex(input.documents, p),
      ),
    ),
  );
  return {
    artifacts: [
      { path: RULE_TABLE_PATH, content: table },
      { path: RULE_TABLE_MANIFEST_PATH, content: `${JSON.stringify(manifest, null, 2)}\n` },
    ],
    diagnostics,
  };
}

/** The `rules` target. */
export const RULES_BACKEND: Backend = {
  name: 'rules',
  description: 'binary rule table for the BPF-LSM and fanotify data planes (docs/rule-table.md)',
  emit: emitRuleTable,
};
