// The `crd` target: what Argo CD or Flux syncs. crds/ (both CRDs), policies/ (one normalized manifest per
// policy) and a kustomization.yaml listing them, all deterministic.
import { toYaml } from '../../emit/yaml-text.js';
import type { Artifact, Backend, BackendInput, BackendOutput } from '../backend.js';
import { createCrdManifests } from './crd-manifests.js';
import { emitNormalizedPolicy, policyManifestPath } from './normalize-policy.js';

/** The CRDs' texts: built from the constant schemas, so once per process. */
let crds: readonly Artifact[] | undefined;
function crdTexts(): readonly Artifact[] {
  crds ??= createCrdManifests().map((crd) => ({ path: `crds/${crd.fileName}`, content: toYaml(crd.object) }));
  return crds;
}

export const crdBackend: Backend = {
  name: 'crd',
  description: 'CustomResourceDefinitions, normalized policy manifests and a kustomization.yaml',
  emit(input: BackendInput): BackendOutput {
    const artifacts: Artifact[] = [];
    for (const crd of crdTexts()) artifacts.push({ ...crd });
    const policies = input.documents
      .map((d) => ({ path: policyManifestPath(d), content: emitNormalizedPolicy(d) }))
      .sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
    // One at a time: a spread of more than about 100 000 arguments overflows the stack.
    for (const p of policies) artifacts.push(p);
    const kustomization = {
      apiVersion: 'kustomize.config.k8s.io/v1beta1',
      kind: 'Kustomization',
      resources: artifacts.map((a) => a.path),
    };
    artifacts.push({ path: 'kustomization.yaml', content: toYaml(kustomization) });
    return { artifacts, diagnostics: [] };
  },
};
