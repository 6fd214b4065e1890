// Where each kind rtctl installs lives in the Kubernetes API: group, version, plural resource and scope, and
// the request paths built from them. One table for the installer, uninstaller, verifier and their RBAC list.

/** A resource of the API (RBAC's group and resource, plus what a path needs). */
export interface ResourceType {
  group: string;
  version: string;
  kind: string;
  /** Plural, lower case (RBAC's resource). */
  resource: string;
  namespaced: boolean;
}

function r(
  group: string,
  version: string,
  kind: string,
  resource: string,
  namespaced: boolean,
): ResourceType {
  return { group, version, kind, resource, namespaced };
}

/** Every kind the installer touches. */
export const RESOURCE_TYPES: readonly ResourceType[] = [
  r('apiextensions.k8s.io', 'v1', 'CustomResourceDefinition', 'customresourcedefinitions', false),
  r('', 'v1', 'Namespace', 'namespaces', false),
  r('', 'v1', 'Node', 'nodes', false),
  r('', 'v1', 'ServiceAccount', 'serviceaccounts', true),
  r('', 'v1', 'Service', 'services', true),
  r('', 'v1', 'Secret', 'secrets', true),
  r('', 'v1', 'ConfigMap', 'configmaps', true),
  r('rbac.authorization.k8s.io', 'v1', 'ClusterRole', 'clusterroles', false),
  r('rbac.authorization.k8s.io', 'v1', 'ClusterRoleBinding', 'clusterrolebindings', false),
  r('rbac.authorization.k8s.io', 'v1', 'Role', 'roles', true),
  r('rbac.authorization.k8s.io', 'v1', 'RoleBinding', 'rolebindings', true),
  r('apps', 'v1', 'DaemonSet', 'daemonsets', true),
  r('apps', 'v1', 'Deployment', 'deployments', true),
  r('policy', 'v1', 'PodDisruptionBudget', 'poddisruptionbudgets', true),
  r(
    'admissionregistration.k8s.io',
    'v1',
    'ValidatingWebhookConfiguration',
    'validatingwebhookconfigurations',
    false,
  ),
  r('cert-manager.io', 'v1', 'Issuer', 'issuers', true),
  r('cert-manager.io', 'v1', 'Certificate', 'certificates', true),
];

/** The resource type of `kind` (throws for a kind the table lacks: a bug in the install description). */
export function resourceTypeOf(kind: string): ResourceType {
  const t = RESOURCE_TYPES.find((x) => x.kind === kind);
  if (t === undefined) throw new Error(`install: no resource type for kind ${kind}`);
  return t;
}

/** `group/version`, or `version` for the core group. */
export function apiVersionOf(t: ResourceType): string {
  return t.group === '' ? t.version : `${t.group}/${t.version}`;
}

/** One object's address. */
export interface ObjectRef {
  type: ResourceType;
  name: string;
  /** For namespaced types. */
  namespace?: string;
}

/** The collection path (`/apis/apps/v1/namespaces/x/deployments`, or cluster-wide without a namespace). */
export function collectionPath(type: ResourceType, namespace?: string): string {
  const root = type.group === '' ? `/api/${type.version}` : `/apis/${type.group}/${type.version}`;
  const ns = type.namespaced && namespace !== undefined ? `/namespaces/${encodeURIComponent(namespace)}` : '';
  return `${root}${ns}/${type.resource}`;
}

/** The path of one object. */
export function objectPath(ref: ObjectRef): string {
  return `${collectionPath(ref.type, ref.namespace)}/${encodeURIComponent(ref.name)}`;
}

/** The address of a manifest object. */
export function refOf(object: Record<string, unknown>): ObjectRef {
  const type = resourceTypeOf(String(object['kind']));
  const meta = (object['metadata'] ?? {}) as { name?: string; namespace?: string };
  return {
    type,
    name: meta.name ?? '',
    ...(type.namespaced && meta.namespace !== undefined ? { namespace: meta.namespace } : {}),
  };
}

/** `Deployment rtctl-system/rtctl-webhook` for messages. */
export function describeRef(ref: ObjectRef): string {
  return `${ref.type.kind} ${ref.namespace === undefined ? '' : `${ref.namespace}/`}${ref.name}`;
}
