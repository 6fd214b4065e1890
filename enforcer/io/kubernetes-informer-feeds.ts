// KubeFeeds backed by @kubernetes/client-node informers (list + watch with resync), for the DaemonSet mode.
import * as k8s from '@kubernetes/client-node';
import type { Logger } from 'pino';
import { FeedEvent, type KubeFeed, type KubeFeeds, type KubeObject } from '../kubernetes/kube-feed.js';

const GROUP = 'security.runtime.com';
const VERSION = 'v1';

/** One informer (list + watch, restarted after a watch error) as a KubeFeed. */
export function feedOf<T extends k8s.KubernetesObject>(
  kc: k8s.KubeConfig,
  path: string,
  list: () => Promise<k8s.KubernetesListObject<T>>,
  logger: Logger,
): KubeFeed {
  const informer = k8s.makeInformer<T>(kc, path, list);
  // stop() aborts the watch, which the informer reports as an error: no restart after a stop (a restart
  // would keep the process alive after SIGTERM).
  let stopped = false;
  return {
    async start(handler) {
      informer.on(k8s.ADD, (o) => handler(FeedEvent.Add, o as unknown as KubeObject));
      informer.on(k8s.UPDATE, (o) => handler(FeedEvent.Update, o as unknown as KubeObject));
      informer.on(k8s.DELETE, (o) => handler(FeedEvent.Delete, o as unknown as KubeObject));
      informer.on(k8s.ERROR, (err: unknown) => {
        if (stopped) return;
        logger.warn({ err, path }, 'watch failed; restarting');
        setTimeout(() => {
          if (stopped) return;
          informer.start().catch((e: unknown) => logger.error({ err: e, path }, 'watch restart failed'));
        }, 2000).unref();
      });
      await informer.start();
    },
    stop: () => {
      stopped = true;
      return informer.stop();
    },
  };
}

/** Informer feeds for one node, from a kubeconfig (in-cluster or file). */
export function createInformerFeeds(kc: k8s.KubeConfig, nodeName: string, logger: Logger): KubeFeeds {
  const core = kc.makeApiClient(k8s.CoreV1Api);
  const custom = kc.makeApiClient(k8s.CustomObjectsApi);
  const customList = (plural: string) => async (): Promise<k8s.KubernetesListObject<k8s.KubernetesObject>> =>
    (await custom.listClusterCustomObject({
      group: GROUP,
      version: VERSION,
      plural,
    })) as k8s.KubernetesListObject<k8s.KubernetesObject>;
  const nodeSelector = `metadata.name=${nodeName}`;
  const podSelector = `spec.nodeName=${nodeName}`;
  return {
    runtimePolicies: feedOf(
      kc,
      `/apis/${GROUP}/${VERSION}/runtimepolicies`,
      customList('runtimepolicies'),
      logger,
    ),
    runtimeHostPolicies: feedOf(
      kc,
      `/apis/${GROUP}/${VERSION}/runtimehostpolicies`,
      customList('runtimehostpolicies'),
      logger,
    ),
    namespaces: feedOf(kc, '/api/v1/namespaces', () => core.listNamespace(), logger),
    pods: feedOf(
      kc,
      `/api/v1/pods?fieldSelector=${encodeURIComponent(podSelector)}`,
      () => core.listPodForAllNamespaces({ fieldSelector: podSelector }),
      logger,
    ),
    nodes: feedOf(
      kc,
      `/api/v1/nodes?fieldSelector=${encodeURIComponent(nodeSelector)}`,
      () => core.listNode({ fieldSelector: nodeSelector }),
      logger,
    ),
  };
}
