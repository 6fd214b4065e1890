// Pieces every component's pod shares: the container image, the restricted security context of the
// components that need no host access, and the ServiceAccount.
import type { Param } from '../template-ref.js';
import type { ManifestParams } from '../manifest-params.js';
import type { Resources } from '../values.js';
import { nameOf, objectLabels, type Component } from '../names.js';

/** The image's entry point: rtctl on PATH. */
export const RTCTL_COMMAND = ['rtctl'];

/** A container of the rtctl image running `rtctl <args>`. */
export function rtctlContainer(
  p: ManifestParams,
  name: string,
  args: string[],
  resources: Param<Resources>,
): Record<string, unknown> {
  return {
    name,
    image: p.image,
    imagePullPolicy: p.imagePullPolicy,
    command: RTCTL_COMMAND,
    args,
    resources,
  };
}

/** The security context of a component with no host access: non-root, nothing added, read-only root. */
export const RESTRICTED_CONTAINER = {
  runAsNonRoot: true,
  runAsUser: 65532,
  runAsGroup: 65532,
  allowPrivilegeEscalation: false,
  readOnlyRootFilesystem: true,
  capabilities: { drop: ['ALL'] },
  seccompProfile: { type: 'RuntimeDefault' },
};

/** A component's ServiceAccount; a token is mounted only when the component calls the API. */
export function serviceAccount(
  p: ManifestParams,
  component: Component,
  callsApi: boolean,
): Record<string, unknown> {
  return {
    apiVersion: 'v1',
    kind: 'ServiceAccount',
    metadata: { name: nameOf(component), namespace: p.namespace, labels: objectLabels(component) },
    automountServiceAccountToken: callsApi,
  };
}

/** Object metadata of a namespaced object of a component. */
export function metadataOf(
  p: ManifestParams,
  component: Component,
  name = nameOf(component),
): Record<string, unknown> {
  return { name, namespace: p.namespace, labels: objectLabels(component) };
}
