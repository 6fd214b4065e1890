// The admission webhook: a Deployment of two replicas spread over nodes, its PodDisruptionBudget, Service,
// the ValidatingWebhookConfiguration `rtctl webhook config` makes, and (with cert-manager) the Issuer and
// Certificate of its serving certificate, whose CA cert-manager injects into the configuration.
import { buildWebhookConfiguration } from '../../webhook/webhook-config.js';
import type { ManifestParams } from '../manifest-params.js';
import { Component, nameOf, objectLabels, Ports, selectorLabels, WEBHOOK_TLS_SECRET } from '../names.js';
import { metadataOf, RESTRICTED_CONTAINER, rtctlContainer, serviceAccount } from './container.js';

const C = Component.Webhook;
const TLS_DIR = '/etc/rtctl/tls';
const POLICY_WEBHOOK = 'policies.security.runtime.com';

function deployment(p: ManifestParams): Record<string, unknown> {
  const args = [
    'webhook',
    'serve',
    `--cert=${TLS_DIR}/tls.crt`,
    `--key=${TLS_DIR}/tls.key`,
    `--listen=0.0.0.0:${Ports.webhookHttps}`,
  ];
  const probe = (path: string, failureThreshold: number): Record<string, unknown> => ({
    httpGet: { path, port: 'https', scheme: 'HTTPS' },
    periodSeconds: 5,
    timeoutSeconds: 3,
    failureThreshold,
  });
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: metadataOf(p, C),
    spec: {
      replicas: p.webhook.replicas,
      selector: { matchLabels: selectorLabels(C) },
      strategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 0, maxSurge: 1 } },
      template: {
        metadata: { labels: selectorLabels(C) },
        spec: {
          serviceAccountName: nameOf(C),
          automountServiceAccountToken: false,
          // Longer than the webhook's --shutdown-delay plus its drain, so a rollout drops no review.
          terminationGracePeriodSeconds: 30,
          affinity: {
            podAntiAffinity: {
              preferredDuringSchedulingIgnoredDuringExecution: [
                {
                  weight: 100,
                  podAffinityTerm: {
                    topologyKey: 'kubernetes.io/hostname',
                    labelSelector: { matchLabels: selectorLabels(C) },
                  },
                },
              ],
            },
          },
          containers: [
            {
              ...rtctlContainer(p, 'webhook', args, p.webhook.resources),
              ports: [{ name: 'https', containerPort: Ports.webhookHttps, protocol: 'TCP' }],
              readinessProbe: probe('/readyz', 1),
              livenessProbe: { ...probe('/healthz', 6), initialDelaySeconds: 10 },
              securityContext: RESTRICTED_CONTAINER,
              volumeMounts: [{ name: 'tls', mountPath: TLS_DIR, readOnly: true }],
            },
          ],
          volumes: [{ name: 'tls', secret: { secretName: WEBHOOK_TLS_SECRET } }],
        },
      },
    },
  };
}

function configuration(p: ManifestParams): Record<string, unknown> {
  // Built by the same function as `rtctl webhook config`; failure policy and timeout come from the values.
  const base = buildWebhookConfiguration({
    name: nameOf(C),
    namespace: p.namespace,
    service: nameOf(C),
    port: 443,
    timeoutSeconds: 5,
  });
  const webhooks = (base['webhooks'] as Array<Record<string, unknown>>).map((w) => ({
    ...w,
    timeoutSeconds: p.webhook.timeoutSeconds,
    ...(w['name'] === POLICY_WEBHOOK ? { failurePolicy: p.webhook.failurePolicy } : {}),
  }));
  return {
    ...base,
    metadata: {
      name: nameOf(C),
      labels: objectLabels(C),
      // cert-manager's CA injector fills caBundle from the Certificate; without cert-manager `rtctl install`
      // sets caBundle itself and this annotation is inert.
      annotations: { 'cert-manager.io/inject-ca-from': `${p.namespace}/${nameOf(C)}` },
    },
    webhooks,
  };
}

/** The webhook's objects that are always there. */
export function buildWebhook(p: ManifestParams): Record<string, unknown>[] {
  return [
    serviceAccount(p, C, false),
    deployment(p),
    {
      apiVersion: 'policy/v1',
      kind: 'PodDisruptionBudget',
      metadata: metadataOf(p, C),
      spec: { minAvailable: 1, selector: { matchLabels: selectorLabels(C) } },
    },
    {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: metadataOf(p, C),
      spec: {
        selector: selectorLabels(C),
        ports: [{ name: 'https', port: 443, targetPort: 'https', protocol: 'TCP' }],
      },
    },
    configuration(p),
  ];
}

/** The cert-manager objects of the serving certificate: a self-signed Issuer and the Certificate. */
export function buildWebhookCertManager(p: ManifestParams): Record<string, unknown>[] {
  const service = `${nameOf(C)}.${p.namespace}.svc`;
  return [
    {
      apiVersion: 'cert-manager.io/v1',
      kind: 'Issuer',
      metadata: metadataOf(p, C),
      spec: { selfSigned: {} },
    },
    {
      apiVersion: 'cert-manager.io/v1',
      kind: 'Certificate',
      metadata: metadataOf(p, C),
      spec: {
        secretName: WEBHOOK_TLS_SECRET,
        dnsNames: [service, `${service}.cluster.local`],
        issuerRef: { kind: 'Issuer', name: nameOf(C) },
        privateKey: { algorithm: 'ECDSA', size: 256, rotationPolicy: 'Always' },
      },
    },
  ];
}
