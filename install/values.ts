// What a user can set when installing rtctl into a cluster, with the defaults, and how a values file is read.
// The manifests, the kustomize base and the Helm chart's values.yaml all come from this one description.
import { isRecord } from '../compiler/model/json-value.js';

/** Container resource requests and limits (Kubernetes quantities). */
export interface Resources {
  requests: { cpu: string; memory: string };
  limits: { cpu?: string; memory: string };
}

/** A pod toleration (the subset of fields Kubernetes defines). */
export interface Toleration {
  key?: string;
  operator: 'Exists' | 'Equal';
  value?: string;
  effect?: 'NoSchedule' | 'PreferNoSchedule' | 'NoExecute';
}

/** What the webhook's API server does when the webhook cannot answer a policy request. */
export const FailurePolicy = { Fail: 'Fail', Ignore: 'Ignore' } as const;
export type FailurePolicy = (typeof FailurePolicy)[keyof typeof FailurePolicy];

/** Every value a user can set. */
export interface InstallValues {
  /** Namespace of every namespaced object (Helm: the release namespace). */
  namespace: string;
  /** The one image every component runs, `repository:tag` or `repository@sha256:…`. */
  image: string;
  imagePullPolicy: 'IfNotPresent' | 'Always' | 'Never';
  /** ClusterName in alerts. */
  clusterName: string;
  enforcer: {
    /** `auto` or a data plane name (`rtctl enforcer run --data-plane`). */
    dataPlane: string;
    resources: Resources;
    /** Default: tolerate every taint, so every node runs an enforcer. */
    tolerations: Toleration[];
  };
  webhook: {
    replicas: number;
    /** failurePolicy of the RuntimePolicy/RuntimeHostPolicy webhook (Namespaces and node settings: Ignore). */
    failurePolicy: FailurePolicy;
    timeoutSeconds: number;
    /** Issue the serving certificate with cert-manager (else `rtctl install` or the user creates the Secret). */
    certManager: boolean;
    resources: Resources;
  };
  relay: { enabled: boolean; resources: Resources };
  controller: { enabled: boolean; resources: Resources };
}

/** The defaults (`deploy/` and the chart's values.yaml). */
export const DEFAULT_VALUES: InstallValues = {
  namespace: 'rtctl-system',
  image: 'rtctl:0.1.0',
  imagePullPolicy: 'IfNotPresent',
  clusterName: 'default',
  enforcer: {
    dataPlane: 'auto',
    resources: { requests: { cpu: '100m', memory: '128Mi' }, limits: { memory: '512Mi' } },
    tolerations: [{ operator: 'Exists' }],
  },
  webhook: {
    replicas: 2,
    failurePolicy: FailurePolicy.Fail,
    timeoutSeconds: 5,
    certManager: true,
    resources: { requests: { cpu: '50m', memory: '96Mi' }, limits: { memory: '256Mi' } },
  },
  relay: {
    enabled: true,
    resources: { requests: { cpu: '20m', memory: '64Mi' }, limits: { memory: '192Mi' } },
  },
  // The status controller (`rtctl controller run`): aggregates the node reports into each policy's status.
  controller: {
    enabled: true,
    resources: { requests: { cpu: '20m', memory: '64Mi' }, limits: { memory: '192Mi' } },
  },
};

/** A mistake in a values file: the dotted path and what was expected. */
export interface ValuesError {
  path: string;
  message: string;
}

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

function mergeInto(base: unknown, patch: unknown, path: string, errors: ValuesError[]): unknown {
  if (patch === undefined) return base;
  if (isRecord(base)) {
    if (!isRecord(patch)) {
      errors.push({ path, message: 'expected a mapping' });
      return base;
    }
    const out: Record<string, unknown> = { ...base };
    for (const [k, v] of Object.entries(patch)) {
      const p = path === '' ? k : `${path}.${k}`;
      // Free-form leaves (resources, tolerations) replace the default whole.
      if (!(k in base)) errors.push({ path: p, message: 'unknown value' });
      else if (k === 'resources' || k === 'tolerations') out[k] = v;
      else out[k] = mergeInto(base[k], v, p, errors);
    }
    return out;
  }
  if (typeof base !== typeof patch) errors.push({ path, message: `expected a ${typeof base}` });
  return typeof base === typeof patch ? patch : base;
}

/** Merges a user's values (parsed YAML) over the defaults and checks them. */
export function readValues(input: unknown): { values: InstallValues; errors: ValuesError[] } {
  const errors: ValuesError[] = [];
  const values = mergeInto(DEFAULT_VALUES, input ?? {}, '', errors) as InstallValues;
  if (!DNS_LABEL.test(values.namespace) || values.namespace.length > 63)
    errors.push({ path: 'namespace', message: 'expected a DNS label (lower case, digits, -; at most 63)' });
  if (values.image.trim() === '' || /\s/.test(values.image))
    errors.push({ path: 'image', message: 'expected an image reference without spaces' });
  if (!/^[A-Za-z0-9][-A-Za-z0-9_.]{0,62}$/.test(values.clusterName))
    errors.push({ path: 'clusterName', message: 'expected letters, digits, -, _ and . (at most 63)' });
  if (!/^[a-z0-9-]+$/.test(values.enforcer.dataPlane))
    errors.push({ path: 'enforcer.dataPlane', message: 'expected auto or a data plane name' });
  if (!['IfNotPresent', 'Always', 'Never'].includes(values.imagePullPolicy))
    errors.push({ path: 'imagePullPolicy', message: 'expected IfNotPresent, Always or Never' });
  if (!Object.values(FailurePolicy).includes(values.webhook.failurePolicy))
    errors.push({ path: 'webhook.failurePolicy', message: 'expected Fail or Ignore' });
  if (!Number.isInteger(values.webhook.replicas) || values.webhook.replicas < 1)
    errors.push({ path: 'webhook.replicas', message: 'expected a positive integer' });
  const t = values.webhook.timeoutSeconds;
  if (!Number.isInteger(t) || t < 1 || t > 30)
    errors.push({ path: 'webhook.timeoutSeconds', message: 'expected 1-30 seconds' });
  if (!Array.isArray(values.enforcer.tolerations))
    errors.push({ path: 'enforcer.tolerations', message: 'expected a list' });
  for (const [name, r] of [
    ['enforcer', values.enforcer.resources],
    ['webhook', values.webhook.resources],
    ['relay', values.relay.resources],
    ['controller', values.controller.resources],
  ] as const) {
    if (!isRecord(r) || !isRecord(r.requests) || !isRecord(r.limits))
      errors.push({ path: `${name}.resources`, message: 'expected requests and limits' });
  }
  return { values, errors };
}
