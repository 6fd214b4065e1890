// Policy source over the Kubernetes API (DaemonSet mode): RuntimePolicy and RuntimeHostPolicy objects,
// Namespace posture annotations, this node's labels and this node's pods' labels, kept in caches fed by
// KubeFeeds; every change produces a new snapshot (after a short quiet period, so a burst gives one).
import type { Logger } from 'pino';
import type { SourceObject } from '../../compiler/lint.js';
import { readDeclaredPostures } from '../../compiler/model/posture.js';
import { buildSnapshotFromObjects } from '../policy-snapshot.js';
import {
  policyObjectKey,
  type PolicyObjectMetadata,
  type PolicySnapshot,
  type PolicySource,
} from '../policy-source.js';
import { FeedEvent, type KubeFeed, type KubeFeeds, type KubeObject } from './kube-feed.js';

/** Options of the Kubernetes source. */
export interface KubernetesSourceOptions {
  feeds: KubeFeeds;
  nodeName: string;
  logger: Logger;
  debounceMs?: number;
}

function keyOf(o: KubeObject): string {
  return `${o.metadata?.namespace ?? ''}/${o.metadata?.name ?? ''}`;
}

/** Creates the Kubernetes policy source. */
export function createKubernetesPolicySource(options: KubernetesSourceOptions): PolicySource {
  const { feeds, logger } = options;
  const caches = {
    runtimePolicies: new Map<string, KubeObject>(),
    runtimeHostPolicies: new Map<string, KubeObject>(),
    namespaces: new Map<string, KubeObject>(),
    pods: new Map<string, KubeObject>(),
    nodes: new Map<string, KubeObject>(),
  };
  let timer: NodeJS.Timeout | undefined;
  let started = false;
  let notify: ((s: PolicySnapshot) => void) | undefined;

  const snapshot = (): PolicySnapshot => {
    const objects: SourceObject[] = [];
    const metadata = new Map<string, PolicyObjectMetadata>();
    for (const [kind, cache] of [
      ['RuntimePolicy', caches.runtimePolicies],
      ['RuntimeHostPolicy', caches.runtimeHostPolicies],
    ] as const) {
      for (const key of [...cache.keys()].sort()) {
        const o = cache.get(key);
        if (o === undefined) continue;
        const md = o.metadata ?? {};
        const object: Record<string, unknown> = { ...o };
        delete object['status'];
        object['kind'] = kind;
        object['metadata'] = {
          ...(md.name === undefined ? {} : { name: md.name }),
          ...(md.namespace ? { namespace: md.namespace } : {}),
        };
        objects.push({ file: `kubernetes:${kind}/${key}`, object });
        if (md.name !== undefined)
          metadata.set(policyObjectKey(kind, md.namespace ?? '', md.name), {
            generation: typeof md.generation === 'number' ? md.generation : 0,
            ...(md.uid === undefined ? {} : { uid: md.uid }),
          });
      }
    }
    const s = buildSnapshotFromObjects(objects);
    s.policyMetadata = metadata;
    for (const ns of caches.namespaces.values()) {
      const name = ns.metadata?.name;
      if (name) s.postures.set(name, readDeclaredPostures(ns.metadata?.annotations));
    }
    const node = [...caches.nodes.values()].find((n) => n.metadata?.name === options.nodeName);
    if (node) s.nodeLabels = { ...(node.metadata?.labels ?? {}) };
    s.podLabels = new Map([...caches.pods.entries()].map(([k, p]) => [k, { ...(p.metadata?.labels ?? {}) }]));
    return s;
  };

  const changed = (): void => {
    if (!started || notify === undefined) return;
    if (timer) clearTimeout(timer);
    const n = notify;
    timer = setTimeout(() => {
      try {
        n(snapshot());
      } catch (err) {
        logger.error({ err }, 'cannot build the policy snapshot');
      }
    }, options.debounceMs ?? 50);
  };

  const attach = (feed: KubeFeed, cache: Map<string, KubeObject>): Promise<void> =>
    feed.start((event, object) => {
      if (event === FeedEvent.Delete) cache.delete(keyOf(object));
      else cache.set(keyOf(object), object);
      changed();
    });

  return {
    async start(onChange) {
      notify = onChange;
      await Promise.all([
        attach(feeds.runtimePolicies, caches.runtimePolicies),
        attach(feeds.runtimeHostPolicies, caches.runtimeHostPolicies),
        attach(feeds.namespaces, caches.namespaces),
        attach(feeds.pods, caches.pods),
        attach(feeds.nodes, caches.nodes),
      ]);
      started = true;
      return snapshot();
    },
    async stop() {
      if (timer) clearTimeout(timer);
      await Promise.all(Object.values(feeds).map((f: KubeFeed) => f.stop()));
    },
  };
}
