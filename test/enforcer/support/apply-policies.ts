// Applies policies to one running container through a data plane, the way the enforcer does (lint, describe
// the container as a workload, build the node state): for tests that drive a plane directly.
import { lintTexts } from '../../../compiler/lint.js';
import type { DataPlane } from '../../../enforcer/data-plane.js';
import { buildNodeState } from '../../../enforcer/node-state.js';
import { describeContainer } from '../../../enforcer/workload.js';

/** Labels of the containers these tests run: pod `web` in namespace `ns-a`. */
export const WEB_POD_LABELS: Readonly<Record<string, string>> = {
  app: 'web',
  'io.kubernetes.pod.namespace': 'ns-a',
};

/** Lints `policies`, and applies them to `container` (its id and pid) as generation `generation`. */
export async function applyPolicies(
  plane: Pick<DataPlane, 'apply'>,
  policies: readonly { file: string; text: string }[],
  container: { id: string; pid: number },
  generation: number,
  labels: Readonly<Record<string, string>> = WEB_POD_LABELS,
): Promise<void> {
  const lint = lintTexts([...policies]);
  const workload = describeContainer({
    id: container.id,
    labels: { ...labels },
    image: '',
    pid: container.pid,
    cgroupPath: '',
  });
  await plane.apply(
    buildNodeState(
      { ruleSet: lint.ruleSet, workloads: [workload], postures: new Map(), nodeLabels: {} },
      generation,
    ).state,
  );
}
