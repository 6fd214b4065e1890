// The controller's API access over @kubernetes/client-node: informer feeds of the policies, the report
// ConfigMaps and the Nodes, and the status writer (server-side apply on the status subresource, field
// manager rtctl-controller).
import * as k8s from '@kubernetes/client-node';
import type { Logger } from 'pino';
import { NODE_STATUS_LABEL } from '../../compiler/model/node-status.js';
import { feedOf } from '../../enforcer/io/kubernetes-informer-feeds.js';
import type { ControllerFeeds, PolicyStatusWriter } from '../status-controller.js';

/** Field manager of the controller's status writes. */
export const CONTROLLER_FIELD_MANAGER = 'rtctl-controller';

const GROUP = 'security.runtime.com';
const VERSION = 'v1';
const PLURALS = { RuntimePolicy: 'runtimepolicies', RuntimeHostPolicy: 'runtimehostpolicies' } as const;
const APPLY = k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.ServerSideApply);

/** Informer feeds of everything the controller reads; report ConfigMaps of `namespace` only. */
export function createControllerFeeds(
  kc: k8s.KubeConfig,
  namespace: string,
  logger: Logger,
): ControllerFeeds {
  const core = kc.makeApiClient(k8s.CoreV1Api);
  const custom = kc.makeApiClient(k8s.CustomObjectsApi);
  const customList = (plural: string) => async (): Promise<k8s.KubernetesListObject<k8s.KubernetesObject>> =>
    (await custom.listClusterCustomObject({
      group: GROUP,
      version: VERSION,
      plural,
    })) as k8s.KubernetesListObject<k8s.KubernetesObject>;
  const labelSelector = `${NODE_STATUS_LABEL}=true`;
  return {
    runtimePolicies: feedOf(
      kc,
      `/apis/${GROUP}/${VERSION}/${PLURALS.RuntimePolicy}`,
      customList(PLURALS.RuntimePolicy),
      logger,
    ),
    runtimeHostPolicies: feedOf(
      kc,
      `/apis/${GROUP}/${VERSION}/${PLURALS.RuntimeHostPolicy}`,
      customList(PLURALS.RuntimeHostPolicy),
      logger,
    ),
    reports: feedOf(
      kc,
      `/api/v1/namespaces/${namespace}/configmaps?labelSelector=${encodeURIComponent(labelSelector)}`,
      () => core.listNamespacedConfigMap({ namespace, labelSelector }),
      logger,
    ),
    nodes: feedOf(kc, '/api/v1/nodes', () => core.listNode(), logger),
  };
}

/** Writes `status` by server-side apply on the status subresource (only the fields the controller owns). */
export function createKubernetesStatusWriter(kc: k8s.KubeConfig): PolicyStatusWriter {
  const custom = kc.makeApiClient(k8s.CustomObjectsApi);
  return {
    async write(ref, status) {
      const plural = PLURALS[ref.kind];
      const body = {
        apiVersion: `${GROUP}/${VERSION}`,
        kind: ref.kind,
        metadata: { name: ref.name, ...(ref.namespace === undefined ? {} : { namespace: ref.namespace }) },
        status,
      };
      const common = {
        group: GROUP,
        version: VERSION,
        plural,
        name: ref.name,
        body,
        fieldManager: CONTROLLER_FIELD_MANAGER,
        force: true,
      };
      if (ref.namespace === undefined) await custom.patchClusterCustomObjectStatus(common, APPLY);
      else await custom.patchNamespacedCustomObjectStatus({ ...common, namespace: ref.namespace }, APPLY);
    },
  };
}
