// Which postures apply to a workload: its Namespace's annotations over the configured defaults (containers),
// or the configured host postures (the host workload). The rule lives in the model (compiler/model/posture.ts);
// this is the oracle's entry to it, so a data plane's postures can be checked against the oracle's.
import {
  resolveWorkloadPostures,
  type DeclaredPostures,
  type PostureSettings,
  type Postures,
} from '../model/posture.js';
import { WorkloadKind, type Workload } from './decision-input.js';

/** The postures of the workload: pass them to decideOperation. */
export function getWorkloadPostures(
  workload: Pick<Workload, 'kind' | 'namespace'>,
  namespacePostures: ReadonlyMap<string, DeclaredPostures>,
  settings?: Readonly<PostureSettings>,
): Postures {
  return resolveWorkloadPostures(
    {
      host: workload.kind === WorkloadKind.Host,
      namespace: namespacePostures.get(workload.namespace),
    },
    settings,
  );
}
