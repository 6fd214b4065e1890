// The enforcer's Kubernetes clients in one module, loaded by `rtctl enforcer run` only with the Kubernetes
// policy source: the client library is large (tens of MB of heap once loaded), and directory and rule-table
// modes (systemd hosts) never use it.
import * as k8s from '@kubernetes/client-node';

export { createInformerFeeds } from './kubernetes-informer-feeds.js';
export { createConfigMapReleaseWatch, createConfigMapStatusWriter } from './kubernetes-node-status.js';

/** The kubeconfig from a file, or the default chain (in-cluster service account, KUBECONFIG, ~/.kube). */
export function loadKubeConfig(kubeconfig: string | undefined): k8s.KubeConfig {
  const kc = new k8s.KubeConfig();
  if (kubeconfig) kc.loadFromFile(kubeconfig);
  else kc.loadFromDefault();
  return kc;
}
