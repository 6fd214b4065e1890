// The ValidatingWebhookConfiguration that registers the webhook: failurePolicy Fail for our own policy kinds,
// Ignore for Namespaces and node-settings kinds (the webhook must never be why a cluster stops working),
// kube-system and the webhook's own namespace excluded. Pure: returns the object.
import { X509Certificate } from 'node:crypto';
import { NODE_KINDS } from '../compiler/node-settings/node-kinds.js';

/** Where the webhook runs and how the API server reaches it. */
export interface WebhookConfigOptions {
  name: string;
  namespace: string;
  service: string;
  port: number;
  /** PEM of the CA that signed the serving certificate; embedded base64 as caBundle when given. */
  caBundlePem?: string;
  timeoutSeconds: number;
}

/** Defaults of `rtctl webhook config`. */
export const DEFAULT_WEBHOOK_CONFIG: WebhookConfigOptions = {
  name: 'rtctl-webhook',
  namespace: 'rtctl-system',
  service: 'rtctl-webhook',
  port: 443,
  timeoutSeconds: 5,
};

interface RuleWithOperations {
  apiGroups: string[];
  apiVersions: string[];
  resources: string[];
  operations: string[];
  scope: string;
}

const OPERATIONS = ['CREATE', 'UPDATE'];

/** The rules for node-settings kinds that reach an API server, one per group and version set, sorted. */
export function buildNodeSettingsRules(): RuleWithOperations[] {
  const byKey = new Map<string, RuleWithOperations>();
  for (const k of NODE_KINDS) {
    if (k.lintOnly === true) continue;
    const key = `${k.group}|${k.versions.join(',')}`;
    const rule = byKey.get(key) ?? {
      apiGroups: [k.group],
      apiVersions: [...k.versions],
      resources: [],
      operations: OPERATIONS,
      scope: '*',
    };
    if (!rule.resources.includes(k.resource)) rule.resources.push(k.resource);
    byKey.set(key, rule);
  }
  return [...byKey.entries()]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([, r]) => ({ ...r, resources: [...r.resources].sort() }));
}

const PEM_CERTIFICATE = /-----BEGIN CERTIFICATE-----\r?\n[\s\S]*?-----END CERTIFICATE-----/g;

/**
 * Why `pem` cannot be a caBundle (one or more PEM certificates and nothing else), or undefined when it can.
 * The API server would otherwise accept the configuration and then fail every call to the webhook.
 */
export function checkCaBundle(pem: string): string | undefined {
  const blocks = pem.match(PEM_CERTIFICATE) ?? [];
  if (blocks.length === 0) return 'holds no PEM certificate (-----BEGIN CERTIFICATE-----)';
  if (pem.replace(PEM_CERTIFICATE, '').trim() !== '')
    return 'holds text besides PEM certificates (a private key, or something else)';
  for (const [i, block] of blocks.entries()) {
    try {
      new X509Certificate(block);
    } catch {
      return `certificate ${i + 1} of ${blocks.length} is not a valid X.509 certificate`;
    }
  }
  return undefined;
}

/** Builds the ValidatingWebhookConfiguration object. */
export function buildWebhookConfiguration(options: WebhookConfigOptions): Record<string, unknown> {
  const clientConfig = {
    service: { name: options.service, namespace: options.namespace, path: '/validate', port: options.port },
    ...(options.caBundlePem === undefined
      ? {}
      : { caBundle: Buffer.from(options.caBundlePem).toString('base64') }),
  };
  const namespaceSelector = {
    matchExpressions: [
      { key: 'kubernetes.io/metadata.name', operator: 'NotIn', values: ['kube-system', options.namespace] },
    ],
  };
  const common = {
    clientConfig,
    admissionReviewVersions: ['v1'],
    sideEffects: 'None',
    timeoutSeconds: options.timeoutSeconds,
    matchPolicy: 'Equivalent',
    namespaceSelector,
  };
  return {
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'ValidatingWebhookConfiguration',
    metadata: { name: options.name, labels: { 'app.kubernetes.io/name': 'rtctl-webhook' } },
    webhooks: [
      {
        name: 'policies.security.runtime.com',
        ...common,
        failurePolicy: 'Fail',
        rules: [
          {
            apiGroups: ['security.runtime.com'],
            apiVersions: ['v1'],
            resources: ['runtimehostpolicies', 'runtimepolicies'],
            operations: OPERATIONS,
            scope: '*',
          },
        ],
      },
      {
        name: 'namespaces.security.runtime.com',
        ...common,
        failurePolicy: 'Ignore',
        rules: [
          {
            apiGroups: [''],
            apiVersions: ['v1'],
            resources: ['namespaces'],
            operations: OPERATIONS,
            scope: 'Cluster',
          },
        ],
      },
      {
        name: 'node-settings.security.runtime.com',
        ...common,
        failurePolicy: 'Ignore',
        rules: buildNodeSettingsRules(),
      },
    ],
  };
}
