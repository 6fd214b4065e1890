// The Kubernetes API calls each component makes, as one table: the RBAC rules are generated from it, and a
// test runs the components' real client code against a stand-in API server and checks that every request it
// sends is in this table (so RBAC cannot fall behind the code).
import { Component } from './names.js';

/** One kind of request: the verb (RBAC's spelling), API group and resource (or resource/subresource). */
export interface ApiCall {
  verb: 'get' | 'list' | 'watch' | 'create' | 'update' | 'patch' | 'delete';
  group: string;
  resource: string;
  /** Cluster-wide (ClusterRole) or only in the install namespace (Role). */
  scope: 'cluster' | 'namespace';
  /** Where in the code the call is made. */
  source: string;
}

const POLICY_GROUP = 'security.runtime.com';

function listWatch(
  group: string,
  resource: string,
  source: string,
  scope: ApiCall['scope'] = 'cluster',
): ApiCall[] {
  return [
    { verb: 'list', group, resource, scope, source },
    { verb: 'watch', group, resource, scope, source },
  ];
}

const INFORMERS = 'enforcer/io/kubernetes-informer-feeds.ts';
const NODE_STATUS = 'enforcer/io/kubernetes-node-status.ts';
const CONTROLLER_IO = 'controller/io/kubernetes-controller-io.ts';
const LEASES = 'controller/io/kubernetes-lease-store.ts';

/**
 * Server-side apply of an object that does not exist yet creates it, and the API server authorizes that
 * request as `create` besides `patch` (docs: "Patch and apply"): a component that applies objects it may be
 * first to write needs both.
 */
function applyCalls(group: string, resource: string, source: string, scope: ApiCall['scope']): ApiCall[] {
  return [
    { verb: 'patch', group, resource, scope, source },
    { verb: 'create', group, resource, scope, source: `${source} (apply that creates)` },
  ];
}

/** The calls per component. The webhook and the relay make none (their pods get no token). */
export const API_CALLS: Readonly<Record<Component, readonly ApiCall[]>> = {
  [Component.Enforcer]: [
    ...listWatch(POLICY_GROUP, 'runtimepolicies', INFORMERS),
    ...listWatch(POLICY_GROUP, 'runtimehostpolicies', INFORMERS),
    ...listWatch('', 'namespaces', INFORMERS),
    ...listWatch('', 'pods', INFORMERS),
    ...listWatch('', 'nodes', INFORMERS),
    // The node report (one ConfigMap per node) and the release request of `rtctl uninstall`.
    ...applyCalls('', 'configmaps', NODE_STATUS, 'namespace'),
    ...listWatch('', 'configmaps', NODE_STATUS, 'namespace'),
  ],
  [Component.Relay]: [],
  [Component.Webhook]: [],
  // The status controller: policies, nodes and the node reports read, status written, a Lease held.
  [Component.Controller]: [
    ...listWatch(POLICY_GROUP, 'runtimepolicies', CONTROLLER_IO),
    ...listWatch(POLICY_GROUP, 'runtimehostpolicies', CONTROLLER_IO),
    ...listWatch('', 'nodes', CONTROLLER_IO),
    ...listWatch('', 'configmaps', CONTROLLER_IO, 'namespace'),
    {
      verb: 'patch',
      group: POLICY_GROUP,
      resource: 'runtimepolicies/status',
      scope: 'cluster',
      source: CONTROLLER_IO,
    },
    {
      verb: 'patch',
      group: POLICY_GROUP,
      resource: 'runtimehostpolicies/status',
      scope: 'cluster',
      source: CONTROLLER_IO,
    },
    ...(['get', 'create', 'update'] as const).map((verb): ApiCall => ({
      verb,
      group: 'coordination.k8s.io',
      resource: 'leases',
      scope: 'namespace',
      source: LEASES,
    })),
  ],
};

/** An RBAC PolicyRule. */
export interface PolicyRule {
  apiGroups: string[];
  resources: string[];
  verbs: string[];
}

/** The least rules that allow exactly these calls: one rule per group and set of verbs, sorted. */
export function rulesFor(calls: readonly ApiCall[]): PolicyRule[] {
  const verbsOf = new Map<string, Set<string>>();
  for (const c of calls) {
    const key = `${c.group}\u0000${c.resource}`;
    const set = verbsOf.get(key) ?? new Set<string>();
    set.add(c.verb);
    verbsOf.set(key, set);
  }
  const rules = new Map<string, PolicyRule>();
  for (const [key, verbs] of verbsOf) {
    const [group = '', resource = ''] = key.split('\u0000');
    const sorted = [...verbs].sort();
    const ruleKey = `${group}\u0000${sorted.join(',')}`;
    const rule = rules.get(ruleKey) ?? { apiGroups: [group], resources: [], verbs: sorted };
    rule.resources.push(resource);
    rules.set(ruleKey, rule);
  }
  return [...rules.entries()]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([, r]) => ({ ...r, resources: r.resources.sort() }));
}

/** True when the rules allow this call. */
export function allows(
  rules: readonly PolicyRule[],
  call: { verb: string; group: string; resource: string },
): boolean {
  return rules.some(
    (r) =>
      (r.apiGroups.includes(call.group) || r.apiGroups.includes('*')) &&
      (r.resources.includes(call.resource) || r.resources.includes('*')) &&
      (r.verbs.includes(call.verb) || r.verbs.includes('*')),
  );
}
