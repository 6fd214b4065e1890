// The description of an installation: every object rtctl puts into a cluster, grouped in files, each file
// with the value that switches it on. `rtctl install --dry-run`, the kustomize base (deploy/) and the Helm
// chart (charts/rtctl/) are all rendered from this.
import { createCrdManifests } from '../compiler/backends/crd/crd-manifests.js';
import type { ManifestParams } from './manifest-params.js';
import { buildController } from './objects/controller.js';
import { buildEnforcer } from './objects/enforcer.js';
import { buildRelay } from './objects/relay.js';
import { buildWebhook, buildWebhookCertManager } from './objects/webhook.js';
import type { InstallValues } from './values.js';

/** The boolean values that switch files on, by their path in the values. */
export const Toggle = {
  Relay: 'relay.enabled',
  Controller: 'controller.enabled',
  CertManager: 'webhook.certManager',
} as const;
export type Toggle = (typeof Toggle)[keyof typeof Toggle];

/** A Kubernetes object as the builders make it. */
export type ManifestObject = Record<string, unknown>;

/** A file of the kustomize base / a template of the chart. */
export interface ManifestFile {
  /** File name (`enforcer.yaml`). */
  name: string;
  /** Off when this value is false. */
  enabledBy?: Toggle;
  objects: ManifestObject[];
}

/** The component files (not the CRDs nor the namespace, which Helm handles its own way). */
export function describeComponentFiles(p: ManifestParams): ManifestFile[] {
  return [
    { name: 'enforcer.yaml', objects: buildEnforcer(p) },
    { name: 'relay.yaml', enabledBy: Toggle.Relay, objects: buildRelay(p) },
    { name: 'webhook.yaml', objects: buildWebhook(p) },
    { name: 'webhook-cert-manager.yaml', enabledBy: Toggle.CertManager, objects: buildWebhookCertManager(p) },
    { name: 'controller.yaml', enabledBy: Toggle.Controller, objects: buildController(p) },
  ];
}

/** The value of a toggle. */
export function isEnabled(values: InstallValues, toggle: Toggle | undefined): boolean {
  switch (toggle) {
    case undefined:
      return true;
    case Toggle.Relay:
      return values.relay.enabled;
    case Toggle.Controller:
      return values.controller.enabled;
    case Toggle.CertManager:
      return values.webhook.certManager;
  }
}

/** The CRDs, as the compiler generates them (charts/rtctl/crds/). */
export function buildCrds(): Array<{ fileName: string; object: ManifestObject }> {
  return createCrdManifests().map((c) => ({ fileName: c.fileName, object: c.object }));
}

/** The install namespace. */
export function buildNamespace(namespace: string): ManifestObject {
  return {
    apiVersion: 'v1',
    kind: 'Namespace',
    metadata: {
      name: namespace,
      labels: {
        'app.kubernetes.io/part-of': 'rtctl',
        // The enforcer needs host access; the other pods meet `restricted`.
        'pod-security.kubernetes.io/enforce': 'privileged',
      },
    },
  };
}

/** Every object of an installation with these values, in the order they are applied. */
export function buildManifests(values: InstallValues): ManifestObject[] {
  return [
    ...buildCrds().map((c) => c.object),
    buildNamespace(values.namespace),
    ...describeComponentFiles(values)
      .filter((f) => isEnabled(values, f.enabledBy))
      .flatMap((f) => f.objects),
  ];
}
