// Workload identity: what the enforcer knows about a container (from containerd and, under Kubernetes,
// the pod from the API server) or about the host, and how it maps onto the oracle's selection input.
import { WorkloadKind, type Workload as DecisionWorkload } from '../compiler/decide/decision-input.js';

/** The key of the host workload (host processes, selected by RuntimeHostPolicy). */
export const HOST_WORKLOAD_KEY = 'host';

/** Label keys the kubelet puts on pod containers. */
export const KubeletLabel = {
  PodName: 'io.kubernetes.pod.name',
  PodNamespace: 'io.kubernetes.pod.namespace',
  ContainerName: 'io.kubernetes.container.name',
  PodUid: 'io.kubernetes.pod.uid',
} as const;
export type KubeletLabel = (typeof KubeletLabel)[keyof typeof KubeletLabel];

/** One workload on this node. */
export interface Workload {
  /** Container id, or `host`. */
  key: string;
  kind: WorkloadKind;
  containerId: string;
  containerName: string;
  /** Image reference with its digest (`name:tag@sha256:...`). */
  image: string;
  podName: string;
  namespace: string;
  /** Pod labels (policy selectors match these). */
  podLabels: Record<string, string>;
  /** Host pid of the container's init process (1 for the host). */
  pid: number;
  cgroupPath: string;
}

/** Container labels that describe the runtime rather than the pod. */
function isRuntimeLabel(key: string): boolean {
  return (
    key.startsWith('io.kubernetes.') ||
    key.startsWith('io.containerd.') ||
    key.startsWith('io.cri-containerd.')
  );
}

/** The label that names the namespace of a container without Kubernetes (docs/enforcer.md). */
export const NAMESPACE_LABEL = 'security.runtime.com/namespace';

/** The namespace of containers without Kubernetes that name none (`--non-kubernetes-namespace`). */
export const DEFAULT_NON_KUBERNETES_NAMESPACE = 'default';

/** Label nerdctl gives a container with its name (`nerdctl run --name`). */
const NERDCTL_NAME_LABEL = 'nerdctl/name';

/** A Kubernetes namespace name (RFC 1123 label): what a namespace label must be. */
export function isNamespaceName(value: string): boolean {
  return value.length <= 63 && /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/.test(value);
}

/** True when the kubelet created the container (it carries the pod's namespace label). */
export function isKubernetesContainer(labels: Readonly<Record<string, string>>): boolean {
  return Object.hasOwn(labels, KubeletLabel.PodNamespace);
}

/**
 * Identity of a container from its containerd record.
 * - A pod container (the kubelet's labels): pod name, namespace and container name come from those labels;
 *   pod labels are the container's remaining labels unless the API server supplied the pod's (`podLabels`).
 * - A container without Kubernetes (plain containerd, nerdctl, Docker): its own labels are its labels, its
 *   namespace is the `security.runtime.com/namespace` label or else `nonKubernetesNamespace` (default
 *   `default`), its name is nerdctl's name label or else its id, and it has no pod. A namespace label that
 *   is not a namespace name gives the empty namespace, which no RuntimePolicy selects (the lister warns).
 */
export function describeContainer(input: {
  id: string;
  labels: Record<string, string>;
  image: string;
  pid: number;
  cgroupPath: string;
  podLabels?: Record<string, string>;
  nonKubernetesNamespace?: string;
}): Workload {
  const own: Record<string, string> = {};
  for (const [k, v] of Object.entries(input.labels)) if (!isRuntimeLabel(k)) own[k] = v;
  if (!isKubernetesContainer(input.labels)) {
    const named = input.labels[NAMESPACE_LABEL];
    const valid = named === undefined || isNamespaceName(named);
    return {
      key: input.id,
      kind: WorkloadKind.Container,
      containerId: input.id,
      containerName: input.labels[NERDCTL_NAME_LABEL] ?? input.id,
      image: input.image,
      podName: '',
      namespace: valid ? (named ?? input.nonKubernetesNamespace ?? DEFAULT_NON_KUBERNETES_NAMESPACE) : '',
      podLabels: own,
      pid: input.pid,
      cgroupPath: input.cgroupPath,
    };
  }
  return {
    key: input.id,
    kind: WorkloadKind.Container,
    containerId: input.id,
    containerName: input.labels[KubeletLabel.ContainerName] ?? input.id,
    image: input.image,
    podName: input.labels[KubeletLabel.PodName] ?? '',
    namespace: input.labels[KubeletLabel.PodNamespace] ?? '',
    podLabels: input.podLabels ?? own,
    pid: input.pid,
    cgroupPath: input.cgroupPath,
  };
}

/** The host workload. */
export function describeHost(): Workload {
  return {
    key: HOST_WORKLOAD_KEY,
    kind: WorkloadKind.Host,
    containerId: '',
    containerName: '',
    image: '',
    podName: '',
    namespace: '',
    podLabels: {},
    pid: 1,
    cgroupPath: '',
  };
}

/** The oracle's view of a workload, for policy selection. */
export function toDecisionWorkload(w: Workload, nodeLabels: Record<string, string>): DecisionWorkload {
  return { kind: w.kind, namespace: w.namespace, labels: w.podLabels, nodeLabels };
}

/** Pod labels as the alert's `Labels` field: `k=v` pairs sorted by key, joined with commas. */
export function formatLabels(labels: Record<string, string>): string {
  return Object.keys(labels)
    .sort()
    .map((k) => `${k}=${labels[k] ?? ''}`)
    .join(',');
}
