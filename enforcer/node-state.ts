// Computes the enforcement state of a node (pure): the rule table of every policy, and for each workload the
// policies selecting it (its policy set) and its postures (the oracle's precedence). Workloads no policy selects are left out.
// The table is built once from the rule set (records and bytes together), or given already compiled
// (`rtctl enforcer run --rule-table`), in which case the policy sets come from the table's selector records.
import { createHash } from 'node:crypto';
import { buildRuleTableImage, orderPolicies } from '../compiler/rule-table/build-rule-table.js';
import type { LoadedRuleTable } from '../compiler/rule-table/read-rule-table.js';
import type { PolicyRecord, RuleTableImage } from '../compiler/rule-table/rule-table-records.js';
import type { Workload as DecisionWorkload } from '../compiler/decide/decision-input.js';
import { isTargetSelecting } from '../compiler/decide/select-policies.js';
import type { PolicyIR, RuleSet } from '../compiler/ir/rule-set.js';
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
  /** A string that changes when the state's content changes (the table bytes' SHA-256 and the workload lines). */
  fingerprint: string;
}

/** Indices of the policies selecting a workload, by the rule set's selectors or the table's own. */
type SelectPolicies = (workload: Workload, nodeLabels: Record<string, string>) => number[];

/** What depends on the policies alone: kept while the rule set (or the table) is the same object. */
export interface PolicyPart {
  source: RuleSet | LoadedRuleTable;
  image: RuleTableImage;
  /** SHA-256 of the table bytes, for the fingerprint (a 160 KB table: 0.2 ms, against 1–2 ms as base64). */
  tableDigest: string;
  select: SelectPolicies;
}

/** The selection key of a workload: everything isTargetSelecting reads. */
function selectionKey(dw: DecisionWorkload): string {
  return JSON.stringify(dw);
}

/**
 * Selection answers of one policy (by its lowered object, which an unchanged policy file keeps across
 * snapshots: compiler/front-end/lint-texts-incremental.ts) for the workloads seen, by selection key.
 */
const selectionMemo = new WeakMap<PolicyIR, Map<string, boolean>>();
const MEMO_PER_POLICY = 4096;

function isSelecting(policy: PolicyIR, key: string, dw: DecisionWorkload): boolean {
  let answers = selectionMemo.get(policy);
  if (answers === undefined) {
    answers = new Map();
    selectionMemo.set(policy, answers);
  }
  let answer = answers.get(key);
  if (answer === undefined) {
    answer = isTargetSelecting(policy.target, dw);
    if (answers.size >= MEMO_PER_POLICY) answers.clear();
    answers.set(key, answer);
  }
  return answer;
}

function digestOf(bytes: Uint8Array): string {
  return createHash('sha256').update(bytes).digest('base64');
}

function createPolicyPart(inputs: NodeInputs): PolicyPart {
  if ('ruleTable' in inputs) {
    const { image, table } = inputs.ruleTable;
    return {
      source: inputs.ruleTable,
      image,
      tableDigest: digestOf(image.bytes),
      select: (w, nodeLabels) => {
        const set = table.selectPolicies(toDecisionWorkload(w, nodeLabels));
        const selected: number[] = [];
        for (let p = 0; p < table.policyCount; p++)
          if (((set.bits[p >>> 3] ?? 0) & (1 << (p & 7))) !== 0) selected.push(p);
        return selected;
      },
    };
  }
  const image = buildRuleTableImage(inputs.ruleSet);
  const policies = orderPolicies(inputs.ruleSet);
  return {
    source: inputs.ruleSet,
    image,
    tableDigest: digestOf(image.bytes),
    select: (w, nodeLabels) => {
      const dw = toDecisionWorkload(w, nodeLabels);
      const key = selectionKey(dw);
      const selected: number[] = [];
      policies.forEach((p, i) => {
        if (isSelecting(p, key, dw)) selected.push(i);
      });
      return selected;
    },
  };
}

/**
 * Builds the node state for the given generation. `policies` is what an earlier build of the same rule set
 * (or table) computed from the policies alone (createNodeStateBuilder); without it, it is computed here.
 */
export function buildNodeState(
  inputs: NodeInputs,
  generation: number,
  policies: PolicyPart = createPolicyPart(inputs),
): NodeState {
  const { image } = policies;
  const select = (w: Workload): number[] => policies.select(w, inputs.nodeLabels);
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
    policies.tableDigest,
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

/** Builds node states for successive inputs (the enforcer's reconcile), each equal to buildNodeState's. */
export type NodeStateBuilder = (inputs: NodeInputs, generation: number) => NodeState;

/**
 * A builder that rebuilds only what changed since its last call: the rule table when the rule set (or the
 * table) is another object, and each workload's policy set only against policies it has not been matched
 * with (a policy unchanged across snapshots keeps its answers). A workload poll with the same policies
 * builds no table.
 */
export function createNodeStateBuilder(): NodeStateBuilder {
  let part: PolicyPart | undefined;
  return (inputs, generation) => {
    const source = 'ruleTable' in inputs ? inputs.ruleTable : inputs.ruleSet;
    if (part === undefined || part.source !== source) part = createPolicyPart(inputs);
    return buildNodeState(inputs, generation, part);
  };
}
