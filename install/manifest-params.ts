// The values as the builders see them: each may be a concrete value (manifests, kustomize base) or a
// reference to a chart value (Helm templates). InstallValues fits this type as it is.
import type { Param } from './template-ref.js';
import type { Resources, Toleration } from './values.js';

/** Inputs of the object builders. */
export interface ManifestParams {
  /** Plain strings; in the chart they hold text references (textRef). */
  namespace: string;
  image: string;
  imagePullPolicy: string;
  clusterName: string;
  enforcer: { dataPlane: string; resources: Param<Resources>; tolerations: Param<Toleration[]> };
  webhook: {
    replicas: Param<number>;
    failurePolicy: string;
    timeoutSeconds: Param<number>;
    resources: Param<Resources>;
  };
  relay: { resources: Param<Resources> };
  controller: { resources: Param<Resources> };
}
