// The narrow interfaces between the enforcer's node report and the API server: write the report ConfigMap
// (server-side apply), and learn when `rtctl uninstall` asks for enforcement to be released. Implemented
// over @kubernetes/client-node in enforcer/io/kubernetes-node-status.ts; tests use a stand-in API server.
import type { NodeStatusReport } from '../../compiler/model/node-status.js';

/** Writes this node's report object. */
export interface NodeStatusWriter {
  write(report: NodeStatusReport): Promise<void>;
}

/** Calls back once when the release request (RELEASE_CONFIGMAP_NAME with `release: "true"`) appears. */
export interface ReleaseWatch {
  start(onRelease: () => void): Promise<void>;
  stop(): Promise<void>;
}
