// Least-privilege RBAC of a component, generated from the table of the API calls it makes (api-calls.ts):
// a ClusterRole for cluster-wide calls, a Role in the install namespace for the others, and their bindings.
import { API_CALLS, rulesFor } from '../api-calls.js';
import type { ManifestParams } from '../manifest-params.js';
import { nameOf, objectLabels, type Component } from '../names.js';

/** The RBAC objects of a component (none when it makes no API calls). */
export function buildRbac(p: ManifestParams, component: Component): Record<string, unknown>[] {
  const name = nameOf(component);
  const labels = objectLabels(component);
  const subject = { kind: 'ServiceAccount', name, namespace: p.namespace };
  const out: Record<string, unknown>[] = [];
  const cluster = API_CALLS[component].filter((c) => c.scope === 'cluster');
  const local = API_CALLS[component].filter((c) => c.scope === 'namespace');
  if (cluster.length > 0) {
    out.push(
      {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'ClusterRole',
        metadata: { name, labels },
        rules: rulesFor(cluster),
      },
      {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'ClusterRoleBinding',
        metadata: { name, labels },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name },
        subjects: [subject],
      },
    );
  }
  if (local.length > 0) {
    out.push(
      {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'Role',
        metadata: { name, namespace: p.namespace, labels },
        rules: rulesFor(local),
      },
      {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'RoleBinding',
        metadata: { name, namespace: p.namespace, labels },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name },
        subjects: [subject],
      },
    );
  }
  return out;
}
