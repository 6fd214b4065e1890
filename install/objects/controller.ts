// The status controller: a leader-elected Deployment (two replicas, one active) that aggregates the enforcers'
// reports into each policy's status, with its RBAC (`rtctl controller run`, controller/).
import { API_CALLS } from '../api-calls.js';
import type { ManifestParams } from '../manifest-params.js';
import { Component, nameOf, Ports, selectorLabels } from '../names.js';
import { metadataOf, RESTRICTED_CONTAINER, rtctlContainer, serviceAccount } from './container.js';
import { buildRbac } from './rbac.js';

const C = Component.Controller;

/** The controller's objects. */
export function buildController(p: ManifestParams): Record<string, unknown>[] {
  const args = [
    'controller',
    'run',
    `--namespace=${p.namespace}`,
    '--leader-elect',
    `--lease-namespace=${p.namespace}`,
    '--identity=$(POD_NAME)',
    `--health-listen=0.0.0.0:${Ports.controllerHealth}`,
  ];
  const probe = (path: string): Record<string, unknown> => ({
    httpGet: { path, port: 'health' },
    periodSeconds: 10,
    timeoutSeconds: 3,
  });
  return [
    serviceAccount(p, C, API_CALLS[C].length > 0),
    ...buildRbac(p, C),
    {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: metadataOf(p, C),
      spec: {
        replicas: 2,
        selector: { matchLabels: selectorLabels(C) },
        template: {
          metadata: { labels: selectorLabels(C) },
          spec: {
            serviceAccountName: nameOf(C),
            containers: [
              {
                ...rtctlContainer(p, 'controller', args, p.controller.resources),
                env: [{ name: 'POD_NAME', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } }],
                ports: [{ name: 'health', containerPort: Ports.controllerHealth, protocol: 'TCP' }],
                readinessProbe: probe('/readyz'),
                livenessProbe: { ...probe('/healthz'), failureThreshold: 6 },
                securityContext: RESTRICTED_CONTAINER,
              },
            ],
          },
        },
      },
    },
  ];
}
