// Computes the enforcement state of a node (pure): the rule table of every policy, and for each workload the
// policies selecting it (its policy set) and its namespace postures. Workloads no policy selects are left out.
import { buildRuleTable, orderRuleTable } from '../compiler/backends/rules/build-rule-table.js';
import { isTargetSelecting } from '../compiler/decide/select-policies.js';
import type { PolicyIR, RuleSet } from '../compiler/ir/rule-set.js';
import { DEFAULT_POSTURES } from '../compiler/model/posture.js';
import type { EnforcementState, Postures, WorkloadEnforcement } from './data-plane.js';
import { toDecisionWorkload, type Workload } from './workload.js';

/** Everything the node state depends on. */
export interface NodeInputs {
  ruleSet: RuleSet;
  workloads: readonly Workload[];
  /** Postures by namespace name; missing namespaces use the defaults. */
  postures: ReadonlyMap<string, Postures>;
  nodeLabels: Record<string, string>;
}

/** The node state plus what the control plane needs to interpret events. */
export interface NodeState {
  state: EnforcementState;
  /** Policies in table order (a rule's policy index refers to this list). */
  policies: PolicyIR[];
  /** Enforced workloads by key. */
  workloads: Map<string, Workload>;
  /** A string that changes exactly when the state's content changes (table bytes and workload lines). */
  fingerprint: string;
}

/** Builds the node state for the given generation. */
export function buildNodeState(inputs: NodeInputs, generation: number): NodeState {
  const table = buildRuleTable(inputs.ruleSet);
  const { policies } = orderRuleTable(inputs.ruleSet);
  const enforced: WorkloadEnforcement[] = [];
  const byKey = new Map<string, Workload>();
  for (const w of inputs.workloads) {
    const dw = toDecisionWorkload(w, inputs.nodeLabels);
    const selected: number[] = [];
    policies.forEach((p, i) => {
      if (isTargetSelecting(p.target, dw)) selected.push(i);
    });
    if (selected.length === 0) continue;
    enforced.push({
      anchor: { key: w.key, host: w.kind === 'host', pid: w.pid, cgroupPath: w.cgroupPath },
      policies: selected,
      postures: inputs.postures.get(w.namespace) ?? DEFAULT_POSTURES,
    });
    byKey.set(w.key, w);
  }
  enforced.sort((a, b) => (a.anchor.key < b.anchor.key ? -1 : a.anchor.key > b.anchor.key ? 1 : 0));
  const fingerprint = [
    Buffer.from(table).toString('base64'),
    ...enforced.map(
      (e) =>
        `${e.anchor.key}|${e.anchor.pid}|${e.policies.join(',')}|${e.postures.file}${e.postures.network}${e.postures.capabilities}`,
    ),
  ].join('\n');
  return { state: { generation, table, workloads: enforced }, policies, workloads: byKey, fingerprint };
}
