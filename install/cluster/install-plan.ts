// What `rtctl install` applies, in which order: the objects of the install description grouped into named
// steps (CRDs, namespace, RBAC, Services, certificate, workloads, webhook configuration last), each object
// labelled with the rtctl version that applied it. Pure: the runner (install-run.ts) does the I/O and the waits
// between steps.
import { buildManifests } from '../manifests.js';
import { WEBHOOK_TLS_SECRET } from '../names.js';
import type { InstallValues } from '../values.js';
import type { KubeObject } from '../io/kube-client.js';
import { tlsSecret, type TlsMaterial } from './webhook-certificate.js';

/** The rtctl version recorded on every object it applies. */
import { RTCTL_VERSION } from '../../compiler/model/version.js';

export { RTCTL_VERSION };
/** Label: who manages the object (on the namespace: that rtctl created it, so uninstall may delete it). */
export const MANAGED_BY_LABEL = 'app.kubernetes.io/managed-by';
export const MANAGED_BY = 'rtctl';
/** Label: the rtctl version that applied the object. */
export const VERSION_LABEL = 'app.kubernetes.io/version';

/** The steps, in apply order. */
export const InstallStep = {
  Crds: 'crds',
  Namespace: 'namespace',
  Rbac: 'rbac',
  Services: 'services',
  Certificate: 'certificate',
  Workloads: 'workloads',
  WebhookConfiguration: 'webhook-configuration',
} as const;
export type InstallStep = (typeof InstallStep)[keyof typeof InstallStep];

const STEP_OF_KIND: Readonly<Record<string, InstallStep>> = {
  CustomResourceDefinition: InstallStep.Crds,
  Namespace: InstallStep.Namespace,
  ServiceAccount: InstallStep.Rbac,
  ClusterRole: InstallStep.Rbac,
  ClusterRoleBinding: InstallStep.Rbac,
  Role: InstallStep.Rbac,
  RoleBinding: InstallStep.Rbac,
  Service: InstallStep.Services,
  Issuer: InstallStep.Certificate,
  Certificate: InstallStep.Certificate,
  Secret: InstallStep.Certificate,
  DaemonSet: InstallStep.Workloads,
  Deployment: InstallStep.Workloads,
  PodDisruptionBudget: InstallStep.Workloads,
  ValidatingWebhookConfiguration: InstallStep.WebhookConfiguration,
};

/** One step and its objects, in order. */
export interface PlannedStep {
  step: InstallStep;
  objects: KubeObject[];
}

/** How the webhook gets its serving certificate. */
export type CertificateSource = { kind: 'cert-manager' } | { kind: 'secret'; material: TlsMaterial };

/** Inputs of the plan. */
export interface PlanInput {
  values: InstallValues;
  certificate: CertificateSource;
  /** False when the namespace existed before rtctl and is not rtctl's: it is labelled, never owned. */
  ownNamespace: boolean;
}

function labelled(object: KubeObject, own: boolean): KubeObject {
  const meta = object.metadata ?? {};
  return {
    ...object,
    metadata: {
      ...meta,
      labels: {
        ...meta.labels,
        ...(own ? { [MANAGED_BY_LABEL]: MANAGED_BY } : {}),
        [VERSION_LABEL]: RTCTL_VERSION,
      },
    },
  };
}

function withCaBundle(configuration: KubeObject, caCert: string): KubeObject {
  const caBundle = Buffer.from(caCert, 'utf8').toString('base64');
  const metadata = { ...configuration.metadata };
  delete metadata.annotations;
  const webhooks = (configuration['webhooks'] as Array<Record<string, unknown>>).map((w) => ({
    ...w,
    clientConfig: { ...(w['clientConfig'] as Record<string, unknown>), caBundle },
  }));
  // Without cert-manager the CA-injection annotation is dropped, so a cert-manager in the cluster leaves it alone.
  return { ...configuration, metadata, webhooks };
}

/** Every object to apply, grouped in steps, in order. */
export function planInstall(input: PlanInput): PlannedStep[] {
  const { values, certificate } = input;
  const objects: KubeObject[] = buildManifests({
    ...values,
    webhook: { ...values.webhook, certManager: certificate.kind === 'cert-manager' },
  }).map((o) => o as KubeObject);
  if (certificate.kind === 'secret') objects.push(tlsSecret(values.namespace, certificate.material, {}));
  const steps = new Map<InstallStep, KubeObject[]>(Object.values(InstallStep).map((s) => [s, []]));
  for (const o of objects) {
    const kind = String(o['kind']);
    const step = STEP_OF_KIND[kind];
    if (step === undefined) throw new Error(`install: kind ${kind} has no install step`);
    let object = labelled(o, kind !== 'Namespace' || input.ownNamespace);
    if (kind === 'ValidatingWebhookConfiguration' && certificate.kind === 'secret')
      object = withCaBundle(object, certificate.material.caCert);
    steps.get(step)?.push(object);
  }
  return [...steps].map(([step, list]) => ({ step, objects: list }));
}

/**
 * Everything any install may have created in this namespace (every component on, both certificate sources),
 * in uninstall order: the reverse of the apply order.
 */
export function planUninstall(values: InstallValues): PlannedStep[] {
  const all: InstallValues = {
    ...values,
    relay: { ...values.relay, enabled: true },
    controller: { ...values.controller, enabled: true },
  };
  const certManager = planInstall({ values: all, certificate: { kind: 'cert-manager' }, ownNamespace: true });
  const secret: KubeObject = {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: WEBHOOK_TLS_SECRET, namespace: values.namespace },
  };
  return certManager
    .map((s) => (s.step === InstallStep.Certificate ? { ...s, objects: [...s.objects, secret] } : s))
    .reverse()
    .map((s) => ({ ...s, objects: [...s.objects].reverse() }));
}
