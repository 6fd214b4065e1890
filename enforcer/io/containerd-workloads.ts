// Discovers the containers of this node from containerd (through its `ctr` client: the I/O edge), with
// their labels, image digest, init pid and cgroup. Container records are immutable, so each is read once.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import type { Logger } from 'pino';
import { describeContainer, type Workload } from '../workload.js';

const run = promisify(execFile);

/** Where containerd is. */
export interface ContainerdOptions {
  socket: string;
  /** containerd namespace (`k8s.io` under the kubelet). */
  namespace: string;
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
  const infos = new Map<string, ContainerInfo>();
  const ctr = async (args: string[]): Promise<string> =>
    (await run('ctr', ['-a', options.socket, '-n', options.namespace, ...args], { maxBuffer: 64 << 20 }))
      .stdout;

  return {
    async list(podLabels) {
      const tasks = await ctr(['tasks', 'ls']);
      const running = new Map<string, number>();
      for (const line of tasks.split('\n').slice(1)) {
        const [id, pid, status] = line.trim().split(/\s+/);
        if (id && pid && status === 'RUNNING') running.set(id, Number(pid));
      }
      const digests = new Map<string, string>();
      if (running.size > 0) {
        const images = await ctr(['images', 'ls']);
        for (const line of images.split('\n').slice(1)) {
          const [ref, , digest] = line.trim().split(/\s+/);
          if (ref && digest?.startsWith('sha256:')) digests.set(ref, digest);
        }
      }
      const workloads: Workload[] = [];
      for (const [id, pid] of running) {
        let info = infos.get(id);
        if (info === undefined) {
          try {
            info = JSON.parse(await ctr(['containers', 'info', id])) as ContainerInfo;
            infos.set(id, info);
          } catch (err) {
            options.logger.warn({ err, id }, 'cannot read container info; skipped this round');
            continue;
          }
        }
        const labels = info.Labels ?? {};
        // The CRI's pod sandbox ("pause") containers are not workloads.
        if (labels['io.cri-containerd.kind'] === 'sandbox') continue;
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
          }),
        );
      }
      for (const id of infos.keys()) if (!running.has(id)) infos.delete(id);
      return workloads.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
    },
  };
}
