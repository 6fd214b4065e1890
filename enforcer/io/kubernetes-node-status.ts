// The node report and the release request over @kubernetes/client-node: the report ConfigMap is written by
// server-side apply (field manager rtctl-enforcer), the release ConfigMap is watched by name in the install
// namespace.
import * as k8s from '@kubernetes/client-node';
import type { Logger } from 'pino';
import {
  NODE_STATUS_DATA_KEY,
  NODE_STATUS_LABEL,
  RELEASE_CONFIGMAP_NAME,
  RELEASE_DATA_KEY,
  formatNodeStatusReport,
  nodeStatusObjectName,
} from '../../compiler/model/node-status.js';
import type { NodeStatusWriter, ReleaseWatch } from '../kubernetes/node-status-writer.js';

/** Field manager of the enforcer's writes. */
export const ENFORCER_FIELD_MANAGER = 'rtctl-enforcer';

const APPLY = k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.ServerSideApply);

/** Writes the report ConfigMap of this node in `namespace`. */
export function createConfigMapStatusWriter(kc: k8s.KubeConfig, namespace: string): NodeStatusWriter {
  const core = kc.makeApiClient(k8s.CoreV1Api);
  return {
    async write(report) {
      const name = nodeStatusObjectName(report.node);
      await core.patchNamespacedConfigMap(
        {
          name,
          namespace,
          fieldManager: ENFORCER_FIELD_MANAGER,
          force: true,
          body: {
            apiVersion: 'v1',
            kind: 'ConfigMap',
            metadata: {
              name,
              namespace,
              labels: { [NODE_STATUS_LABEL]: 'true', 'app.kubernetes.io/part-of': 'rtctl' },
            },
            data: { [NODE_STATUS_DATA_KEY]: formatNodeStatusReport(report) },
          },
        },
        APPLY,
      );
    },
  };
}

/** Watches RELEASE_CONFIGMAP_NAME in `namespace`; calls back once its data says `release: "true"`. */
export function createConfigMapReleaseWatch(
  kc: k8s.KubeConfig,
  namespace: string,
  logger: Logger,
): ReleaseWatch {
  const core = kc.makeApiClient(k8s.CoreV1Api);
  const fieldSelector = `metadata.name=${RELEASE_CONFIGMAP_NAME}`;
  const informer = k8s.makeInformer<k8s.V1ConfigMap>(
    kc,
    `/api/v1/namespaces/${namespace}/configmaps?fieldSelector=${encodeURIComponent(fieldSelector)}`,
    () => core.listNamespacedConfigMap({ namespace, fieldSelector }),
  );
  let stopped = false;
  return {
    async start(onRelease) {
      let fired = false;
      const check = (cm: k8s.V1ConfigMap): void => {
        if (fired || cm.metadata?.name !== RELEASE_CONFIGMAP_NAME) return;
        if (cm.data?.[RELEASE_DATA_KEY] !== 'true') return;
        fired = true;
        onRelease();
      };
      informer.on(k8s.ADD, check);
      informer.on(k8s.UPDATE, check);
      informer.on(k8s.ERROR, (err: unknown) => {
        if (stopped) return;
        logger.warn({ err }, 'release watch failed; restarting');
        setTimeout(() => {
          if (!stopped)
            informer.start().catch((e: unknown) => logger.error({ err: e }, 'release watch restart failed'));
        }, 2000).unref();
      });
      await informer.start();
    },
    async stop() {
      stopped = true;
      await informer.stop();
    },
  };
}
