// The narrow interface between the Kubernetes policy source and the API server: one feed of add/update/delete
// events per resource. Production feeds are informers (io/kubernetes-informer-feeds.ts); tests, which have
// no API server, drive an in-memory feed.

/** The parts of a Kubernetes object the enforcer reads. */
export interface KubeObject {
  apiVersion?: string;
  kind?: string;
  metadata?: {
    name?: string;
    namespace?: string;
    resourceVersion?: string;
    uid?: string;
    generation?: number;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
  };
  [field: string]: unknown;
}

/** Event verbs of a feed. */
export const FeedEvent = { Add: 'add', Update: 'update', Delete: 'delete' } as const;
export type FeedEvent = (typeof FeedEvent)[keyof typeof FeedEvent];

/** One resource's stream of changes. start() resolves after the initial list has been delivered. */
export interface KubeFeed {
  start(handler: (event: FeedEvent, object: KubeObject) => void): Promise<void>;
  stop(): Promise<void>;
}

/** The feeds the enforcer needs. */
export interface KubeFeeds {
  runtimePolicies: KubeFeed;
  runtimeHostPolicies: KubeFeed;
  namespaces: KubeFeed;
  /** Pods of this node only. */
  pods: KubeFeed;
  /** This node only. */
  nodes: KubeFeed;
}
