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

/**
 * Identity of a container from its containerd record. Pod name, namespace and container name come from the
 * kubelet's labels; pod labels are the container's remaining labels unless the API server supplied the pod's
 * (`podLabels`). A container without the kubelet's namespace label has an empty namespace and is selected by
 * no RuntimePolicy.
 */
export function describeContainer(input: {
  id: string;
  labels: Record<string, string>;
  image: string;
  pid: number;
  cgroupPath: string;
  podLabels?: Record<string, string>;
}): Workload {
  const own: Record<string, string> = {};
  for (const [k, v] of Object.entries(input.labels)) if (!isRuntimeLabel(k)) own[k] = v;
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
