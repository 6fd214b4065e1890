// Computes the enforcement state of a node (pure): the rule table of every policy, and for each workload the
// policies selecting it (its policy set) and its postures (the oracle's precedence). Workloads no policy selects are left out.
// The table is built once from the rule set (records and bytes together), or given already compiled
// (`rtctl enforcer run --rule-table`), in which case the policy sets come from the table's selector records.
import { buildRuleTableImage, orderRuleTable } from '../compiler/rule-table/build-rule-table.js';
import type { LoadedRuleTable } from '../compiler/rule-table/read-rule-table.js';
import type { PolicyRecord, RuleTableImage } from '../compiler/rule-table/rule-table-records.js';
import { isTargetSelecting } from '../compiler/decide/select-policies.js';
import type { RuleSet } from '../compiler/ir/rule-set.js';
import { getWorkloadPostures } from '../compiler/decide/workload-postures.js';
import type { DeclaredPostures, PostureSettings } from '../compiler/model/posture.js';
import type { EnforcementState, WorkloadAnchor, WorkloadEnforcement } from './data-plane.js';
import { toDecisionWorkload, type Workload } from './workload.js';

interface NodeInputsBase {
  workloads: readonly Workload[];
  /** Postures each Namespace declares (its annotations), by namespace name. */
  postures: ReadonlyMap<string, DeclaredPostures>;
  /** Configured host and default postures (docs/semantics.md "Postures"); none: `audit` unless annotated. */
  postureSettings?: Readonly<PostureSettings>;
  nodeLabels: Record<string, string>;
}

/** Everything the node state depends on: the policies as a rule set, or as a compiled table. */
export type NodeInputs = NodeInputsBase & ({ ruleSet: RuleSet } | { ruleTable: LoadedRuleTable });

/** The node state plus what the control plane needs to interpret events. */
export interface NodeState {
  state: EnforcementState;
  /** Policy records in table order (a rule's policy index refers to this list). */
  policies: PolicyRecord[];
  /** Enforced workloads by key. */
  workloads: Map<string, Workload>;
  /** A string that changes exactly when the state's content changes (table bytes and workload lines). */
  fingerprint: string;
}

/** Indices of the policies selecting a workload, by the rule set's selectors or the table's own. */
type SelectPolicies = (workload: Workload) => number[];

function createSelector(inputs: NodeInputs): { image: RuleTableImage; select: SelectPolicies } {
  if ('ruleTable' in inputs) {
    const { image, table } = inputs.ruleTable;
    return {
      image,
      select: (w) => {
        const set = table.selectPolicies(toDecisionWorkload(w, inputs.nodeLabels));
        const selected: number[] = [];
        for (let p = 0; p < table.policyCount; p++)
          if (((set.bits[p >>> 3] ?? 0) & (1 << (p & 7))) !== 0) selected.push(p);
        return selected;
      },
    };
  }
  const image = buildRuleTableImage(inputs.ruleSet);
  const { policies } = orderRuleTable(inputs.ruleSet);
  return {
    image,
    select: (w) => {
      const dw = toDecisionWorkload(w, inputs.nodeLabels);
      const selected: number[] = [];
      policies.forEach((p, i) => {
        if (isTargetSelecting(p.target, dw)) selected.push(i);
      });
      return selected;
    },
  };
}

/** Builds the node state for the given generation. */
export function buildNodeState(inputs: NodeInputs, generation: number): NodeState {
  const { image, select } = createSelector(inputs);
  const enforced: WorkloadEnforcement[] = [];
  const unselected: WorkloadAnchor[] = [];
  const byKey = new Map<string, Workload>();
  for (const w of inputs.workloads) {
    const selected = select(w);
    if (selected.length === 0) {
      if (w.kind !== 'host')
        unselected.push({ key: w.key, host: false, pid: w.pid, cgroupPath: w.cgroupPath });
      continue;
    }
    enforced.push({
      anchor: { key: w.key, host: w.kind === 'host', pid: w.pid, cgroupPath: w.cgroupPath },
      policies: selected,
      postures: getWorkloadPostures(
        toDecisionWorkload(w, inputs.nodeLabels),
        inputs.postures,
        inputs.postureSettings,
      ),
    });
    byKey.set(w.key, w);
  }
  enforced.sort((a, b) => (a.anchor.key < b.anchor.key ? -1 : a.anchor.key > b.anchor.key ? 1 : 0));
  unselected.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  const fingerprint = [
    Buffer.from(image.bytes).toString('base64'),
    ...enforced.map(
      (e) =>
        `${e.anchor.key}|${e.anchor.pid}|${e.policies.join(',')}|${e.postures.file}${e.postures.network}${e.postures.capabilities}`,
    ),
    ...unselected.map((a) => `unselected ${a.key}|${a.pid}`),
  ].join('\n');
  return {
    state: { generation, table: image, workloads: enforced, unselected },
    policies: image.records.policies,
    workloads: byKey,
    fingerprint,
  };
}
