// Where the enforcer's policies, namespace postures and node labels come from: a directory (systemd mode) or
// the Kubernetes API server. A source calls back with a complete snapshot whenever something changed.
import type { Diagnostic } from '../compiler/diagnostics/diagnostic.js';
import type { RuleSet } from '../compiler/ir/rule-set.js';
import type { DeclaredPostures } from '../compiler/model/posture.js';
import type { LoadedRuleTable } from '../compiler/rule-table/read-rule-table.js';

/** Everything a source knows at one moment. */
export interface PolicySnapshot {
  ruleSet: RuleSet;
  /** Findings of the policies read (documents with errors are left out of the rule set). */
  diagnostics: Diagnostic[];
  /** Postures each Namespace declares (annotated classes only), by namespace name. */
  postures: Map<string, DeclaredPostures>;
  /** Labels of this node (host policies select by them), when the source knows them. */
  nodeLabels?: Record<string, string>;
  /** Pod labels by `namespace/name`, when the source knows them (Kubernetes). */
  podLabels?: Map<string, Record<string, string>>;
  /** A compiled rule table (`--rule-table`): enforced instead of `ruleSet`, which is then empty. */
  ruleTable?: LoadedRuleTable;
}

/** A policy source. */
export interface PolicySource {
  /** Reads the first snapshot, then calls `onChange` with each new one until stop(). */
  start(onChange: (snapshot: PolicySnapshot) => void): Promise<PolicySnapshot>;
  stop(): Promise<void>;
}
