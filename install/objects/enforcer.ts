// The enforcer: a DaemonSet on every node (host PID, the host paths and capabilities of node-access.ts,
// readiness on the alert server), its ServiceAccount and RBAC, and a headless Service naming its pods.
import { API_CALLS } from '../api-calls.js';
import type { ManifestParams } from '../manifest-params.js';
import { Component, nameOf, Ports, selectorLabels } from '../names.js';
import {
  ENFORCER_CAPABILITIES,
  ENFORCER_MOUNTS,
  HOST_CGROUP_MOUNT,
  networkPlaneEnvironment,
  syscallPlaneEnvironment,
} from '../node-access.js';
import { metadataOf, rtctlContainer, serviceAccount } from './container.js';
import { buildRbac } from './rbac.js';

const C = Component.Enforcer;

/** The enforcer container's security context: root with named capabilities, not privileged. */
export const ENFORCER_SECURITY_CONTEXT = {
  privileged: false,
  runAsUser: 0,
  runAsGroup: 0,
  allowPrivilegeEscalation: false,
  readOnlyRootFilesystem: true,
  capabilities: { drop: ['ALL'], add: ENFORCER_CAPABILITIES.map((c) => c.capability) },
  // bpf() and fanotify_init() are allowed by the runtime's default seccomp profile to holders of the
  // capabilities above; the default AppArmor profile forbids writes under /sys/fs, which the pins need.
  seccompProfile: { type: 'RuntimeDefault' },
  appArmorProfile: { type: 'Unconfined' },
};

function daemonSet(p: ManifestParams): Record<string, unknown> {
  const args = [
    'enforcer',
    'run',
    '--kubernetes',
    '--node-name=$(NODE_NAME)',
    `--namespace=${p.namespace}`,
    `--cluster-name=${p.clusterName}`,
    `--data-plane=${p.enforcer.dataPlane}`,
    `--listen=0.0.0.0:${Ports.enforcerAlerts}`,
    '--state-dir=/run/rtctl',
    '--alert-log=/var/log/rtctl/alerts.ndjson',
    '--containerd-socket=/run/containerd/containerd.sock',
  ];
  const probe = (failureThreshold: number): Record<string, unknown> => ({
    httpGet: { path: '/healthz', port: 'alerts' },
    periodSeconds: 10,
    timeoutSeconds: 3,
    failureThreshold,
  });
  return {
    apiVersion: 'apps/v1',
    kind: 'DaemonSet',
    metadata: metadataOf(p, C),
    spec: {
      selector: { matchLabels: selectorLabels(C) },
      updateStrategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 1 } },
      template: {
        metadata: { labels: selectorLabels(C) },
        spec: {
          serviceAccountName: nameOf(C),
          hostPID: true,
          priorityClassName: 'system-node-critical',
          terminationGracePeriodSeconds: 30,
          tolerations: p.enforcer.tolerations,
          containers: [
            {
              ...rtctlContainer(p, 'enforcer', args, p.enforcer.resources),
              env: [
                { name: 'NODE_NAME', valueFrom: { fieldRef: { fieldPath: 'spec.nodeName' } } },
                ...networkPlaneEnvironment(HOST_CGROUP_MOUNT),
                ...syscallPlaneEnvironment(HOST_CGROUP_MOUNT),
              ],
              ports: [{ name: 'alerts', containerPort: Ports.enforcerAlerts, protocol: 'TCP' }],
              readinessProbe: { ...probe(3), initialDelaySeconds: 2 },
              livenessProbe: { ...probe(6), initialDelaySeconds: 30 },
              securityContext: ENFORCER_SECURITY_CONTEXT,
              volumeMounts: [
                ...ENFORCER_MOUNTS.map((m) => ({
                  name: m.name,
                  mountPath: m.mountPath,
                  ...(m.readOnly ? { readOnly: true } : {}),
                })),
                { name: 'tmp', mountPath: '/tmp' },
              ],
            },
          ],
          volumes: [
            ...ENFORCER_MOUNTS.map((m) => ({ name: m.name, hostPath: { path: m.hostPath, type: m.type } })),
            { name: 'tmp', emptyDir: { sizeLimit: '64Mi' } },
          ],
        },
      },
    },
  };
}

function headlessService(p: ManifestParams): Record<string, unknown> {
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: metadataOf(p, C),
    spec: {
      clusterIP: 'None',
      selector: selectorLabels(C),
      ports: [{ name: 'alerts', port: Ports.enforcerAlerts, targetPort: 'alerts', protocol: 'TCP' }],
    },
  };
}

/** The enforcer's objects. */
export function buildEnforcer(p: ManifestParams): Record<string, unknown>[] {
  return [
    serviceAccount(p, C, API_CALLS[C].length > 0),
    ...buildRbac(p, C),
    daemonSet(p),
    headlessService(p),
  ];
}
