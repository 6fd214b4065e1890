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
  /**
   * API metadata of each policy object by {@link policyObjectKey} (Kubernetes source): the generation and uid
   * the node reports enforcing. Lint never sees them (the objects it reads carry name and namespace only).
   */
  policyMetadata?: Map<string, PolicyObjectMetadata>;
  /** A compiled rule table (`--rule-table`): enforced instead of `ruleSet`, which is then empty. */
  ruleTable?: LoadedRuleTable;
}

/** `metadata.generation` and `metadata.uid` of a policy object. */
export interface PolicyObjectMetadata {
  generation: number;
  uid?: string;
}

/** The key of a policy object: `<kind>/<namespace>/<name>` (namespace empty for host policies). */
export function policyObjectKey(kind: string, namespace: string, name: string): string {
  return `${kind}/${namespace}/${name}`;
}

/** A policy source. */
export interface PolicySource {
  /** Reads the first snapshot, then calls `onChange` with each new one until stop(). */
  start(onChange: (snapshot: PolicySnapshot) => void): Promise<PolicySnapshot>;
  stop(): Promise<void>;
}
