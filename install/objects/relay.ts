// The alert relay: one Deployment following the enforcers' alert streams and serving them as one, and its
// Service. It calls no API, so its pod gets no token.
import type { ManifestParams } from '../manifest-params.js';
import { Component, nameOf, Ports, selectorLabels } from '../names.js';
import { metadataOf, RESTRICTED_CONTAINER, rtctlContainer, serviceAccount } from './container.js';

const C = Component.Relay;

/** The relay's objects. */
export function buildRelay(p: ManifestParams): Record<string, unknown>[] {
  const upstream = `${nameOf(Component.Enforcer)}.${p.namespace}.svc:${Ports.enforcerAlerts}`;
  const args = ['enforcer', 'relay', `--upstream=${upstream}`, `--listen=0.0.0.0:${Ports.relayAlerts}`];
  const probe = { httpGet: { path: '/healthz', port: 'alerts' }, periodSeconds: 10, timeoutSeconds: 3 };
  return [
    serviceAccount(p, C, false),
    {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: metadataOf(p, C),
      spec: {
        replicas: 1,
        selector: { matchLabels: selectorLabels(C) },
        template: {
          metadata: { labels: selectorLabels(C) },
          spec: {
            serviceAccountName: nameOf(C),
            automountServiceAccountToken: false,
            containers: [
              {
                ...rtctlContainer(p, 'relay', args, p.relay.resources),
                ports: [{ name: 'alerts', containerPort: Ports.relayAlerts, protocol: 'TCP' }],
                readinessProbe: probe,
                livenessProbe: { ...probe, failureThreshold: 6 },
                securityContext: RESTRICTED_CONTAINER,
              },
            ],
          },
        },
      },
    },
    {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: metadataOf(p, C),
      spec: {
        selector: selectorLabels(C),
        ports: [{ name: 'alerts', port: Ports.relayAlerts, targetPort: 'alerts', protocol: 'TCP' }],
      },
    },
  ];
}
