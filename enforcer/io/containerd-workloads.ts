// Discovers the containers of this node from containerd (through its `ctr` client: the I/O edge), with
// their labels, image digest, init pid and cgroup. Container records are immutable, so each is read once.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import type { Logger } from 'pino';
import {
  NAMESPACE_LABEL,
  describeContainer,
  isKubernetesContainer,
  isNamespaceName,
  type Workload,
} from '../workload.js';

const run = promisify(execFile);

/** Where containerd is. */
export interface ContainerdOptions {
  socket: string;
  /** containerd namespace (`k8s.io` under the kubelet). */
  namespace: string;
  /**
   * containerd namespaces to list, in order (default: `namespace` alone). Plain containerd and nerdctl use
   * `default`, Docker `moby`. A container id already seen in an earlier namespace is skipped with a warning.
   */
  namespaces?: readonly string[];
  /** Namespace of containers without Kubernetes that name none (enforcer/workload.ts). */
  nonKubernetesNamespace?: string;
  logger: Logger;
}

/** Lists running containers; pod labels may be supplied by the Kubernetes source. */
export interface ContainerLister {
  list(
    podLabels?: (namespace: string, pod: string) => Record<string, string> | undefined,
  ): Promise<Workload[]>;
}

interface ContainerInfo {
  ID: string;
  Labels?: Record<string, string> | null;
  Image?: string;
  Spec?: { linux?: { cgroupsPath?: string } };
}

/** Creates a lister over `ctr`. */
export function createContainerdLister(options: ContainerdOptions): ContainerLister {
  const namespaces = options.namespaces ?? [options.namespace];
  /** Container records by `namespace/id`. */
  const infos = new Map<string, ContainerInfo>();
  /** What was warned about, so each problem is logged once while it lasts. */
  const warned = new Set<string>();
  const warnOnce = (key: string, fields: Record<string, unknown>, message: string): void => {
    if (warned.has(key)) return;
    warned.add(key);
    options.logger.warn(fields, message);
  };
  const ctr = async (namespace: string, args: string[]): Promise<string> =>
    (await run('ctr', ['-a', options.socket, '-n', namespace, ...args], { maxBuffer: 64 << 20 })).stdout;

  const listNamespace = async (
    namespace: string,
    seen: Set<string>,
    live: Set<string>,
    podLabels: Parameters<ContainerLister['list']>[0],
  ): Promise<Workload[]> => {
    const tasks = await ctr(namespace, ['tasks', 'ls']);
    const running = new Map<string, number>();
    for (const line of tasks.split('\n').slice(1)) {
      const [id, pid, status] = line.trim().split(/\s+/);
      if (id && pid && status === 'RUNNING') running.set(id, Number(pid));
    }
    const digests = new Map<string, string>();
    if (running.size > 0) {
      const images = await ctr(namespace, ['images', 'ls']);
      for (const line of images.split('\n').slice(1)) {
        const [ref, , digest] = line.trim().split(/\s+/);
        if (ref && digest?.startsWith('sha256:')) digests.set(ref, digest);
      }
    }
    const workloads: Workload[] = [];
    for (const [id, pid] of running) {
      const recordKey = `${namespace}/${id}`;
      live.add(recordKey);
      if (seen.has(id)) {
        warnOnce(
          `dup:${recordKey}`,
          { id, namespace },
          'a container of this id was listed in an earlier containerd namespace; this one is not enforced',
        );
        continue;
      }
      let info = infos.get(recordKey);
      if (info === undefined) {
        try {
          info = JSON.parse(await ctr(namespace, ['containers', 'info', id])) as ContainerInfo;
          infos.set(recordKey, info);
        } catch (err) {
          options.logger.warn({ err, id, namespace }, 'cannot read container info; skipped this round');
          continue;
        }
      }
      const labels = info.Labels ?? {};
      // The CRI's pod sandbox ("pause") containers are not workloads.
      if (labels['io.cri-containerd.kind'] === 'sandbox') continue;
      seen.add(id);
      const named = labels[NAMESPACE_LABEL];
      if (!isKubernetesContainer(labels) && named !== undefined && !isNamespaceName(named)) {
        warnOnce(
          `ns:${recordKey}`,
          { id, namespace, label: NAMESPACE_LABEL, value: named },
          'the namespace label is not a namespace name; no RuntimePolicy selects this container',
        );
      }
      const image = info.Image ?? '';
      const digest = digests.get(image);
      const ns = labels['io.kubernetes.pod.namespace'] ?? '';
      const pod = labels['io.kubernetes.pod.name'] ?? '';
      const fromApi = podLabels?.(ns, pod);
      workloads.push(
        describeContainer({
          id,
          labels,
          image: digest && !image.includes('@') ? `${image}@${digest}` : image,
          pid,
          cgroupPath: info.Spec?.linux?.cgroupsPath ?? '',
          ...(fromApi ? { podLabels: fromApi } : {}),
          ...(options.nonKubernetesNamespace !== undefined
            ? { nonKubernetesNamespace: options.nonKubernetesNamespace }
            : {}),
        }),
      );
    }
    return workloads;
  };

  return {
    async list(podLabels) {
      const seen = new Set<string>();
      const live = new Set<string>();
      const workloads: Workload[] = [];
      for (const namespace of namespaces) {
        workloads.push(...(await listNamespace(namespace, seen, live, podLabels)));
      }
      for (const key of infos.keys()) if (!live.has(key)) infos.delete(key);
      for (const key of warned) if (!live.has(key.slice(key.indexOf(':') + 1))) warned.delete(key);
      return workloads.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
    },
  };
}
