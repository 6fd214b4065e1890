// `rtctl uninstall`: asks every enforcer to release enforcement (the RELEASE_CONFIGMAP_NAME ConfigMap), waits
// (bounded) until every node report says released, then deletes what install created in reverse order: the
// webhook configuration first, the CRDs (and with them every policy) only with --purge. A node that did not
// release stops the uninstall (the release request is withdrawn, so no node stays unenforced under a running
// install) unless --force; BPF-LSM pins outlive the enforcer, so deleting the DaemonSet under a node that never
// released could leave enforcement nobody manages.
import { RELEASE_CONFIGMAP_NAME, RELEASE_DATA_KEY } from '../../compiler/model/node-status.js';
import type { InstallValues } from '../values.js';
import type { KubeObject } from '../io/kube-client.js';
import { enforcerRef, withdrawRelease } from './install-run.js';
import { InstallStep, MANAGED_BY, MANAGED_BY_LABEL, planUninstall } from './install-plan.js';
import { describeRef, refOf, resourceTypeOf, type ObjectRef } from './kube-resources.js';
import { deadlineIn, ExitCode, RunError, waitUntil, type RunContext } from './run-context.js';
import { listReports } from './verify-run.js';

/** Choices of an uninstall. */
export interface UninstallOptions {
  values: InstallValues;
  /** Delete the CRDs too (and with them every RuntimePolicy and RuntimeHostPolicy). */
  purge: boolean;
  /** Go on when nodes did not release within the timeout (with a warning). */
  force: boolean;
  timeoutMs: number;
}

function releaseRequest(namespace: string): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: RELEASE_CONFIGMAP_NAME, namespace, labels: { 'app.kubernetes.io/part-of': 'rtctl' } },
    data: { [RELEASE_DATA_KEY]: 'true' },
  };
}

async function release(ctx: RunContext, o: UninstallOptions): Promise<void> {
  const namespace = o.values.namespace;
  const daemonSet = await ctx.client.get(enforcerRef(namespace));
  if (daemonSet === undefined) {
    ctx.progress(`no ${describeRef(enforcerRef(namespace))}: nothing to release`);
    return;
  }
  await ctx.client.apply(releaseRequest(namespace), true);
  ctx.progress(`requested release of enforcement (ConfigMap ${namespace}/${RELEASE_CONFIGMAP_NAME})`);
  const pods = (daemonSet['status'] as { desiredNumberScheduled?: unknown } | undefined)
    ?.desiredNumberScheduled;
  const expected = typeof pods === 'number' ? pods : 0;
  const deadline = deadlineIn(ctx, o.timeoutMs);
  const gone = new Set<string>();
  const missing = await waitUntil(ctx, deadline, async () => {
    // A report of a node that left the cluster is never answered: it does not hold the uninstall.
    const nodes = new Set((await ctx.client.list(resourceTypeOf('Node'))).map((n) => n.metadata?.name));
    const reports = (await listReports(ctx, namespace)).filter((r) => {
      if ('problem' in r || nodes.has(r.report.node)) return true;
      if (!gone.has(r.report.node))
        ctx.progress(`ignored the report of node ${r.report.node}: no such node any more`);
      gone.add(r.report.node);
      return false;
    });
    const held = reports.flatMap((r) =>
      'problem' in r ? [`${r.object} (unreadable: ${r.problem})`] : r.report.released ? [] : [r.report.node],
    );
    const unreported = expected - reports.length;
    const parts = [
      ...(held.length > 0 ? [`not released on node ${held.join(', ')}`] : []),
      ...(unreported > 0 ? [`${unreported} enforcer pod(s) of ${expected} have no report`] : []),
    ];
    return parts.length === 0 ? undefined : parts.join('; ');
  });
  if (missing === undefined) {
    ctx.progress('every node released enforcement');
    return;
  }
  if (o.force) {
    ctx.progress(
      `WARNING: ${missing} after ${deadline.label}; going on (--force): those nodes may keep enforcing what rtctl no longer manages (BPF-LSM pins under /sys/fs/bpf outlive the enforcer)`,
    );
    return;
  }
  await withdrawRelease(ctx, namespace);
  throw new RunError(
    `uninstall stopped, nothing deleted: ${missing} after ${deadline.label}; the release request was withdrawn. Rerun with a longer --timeout, or with --force to delete anyway`,
    ExitCode.NotReady,
  );
}

/** Removes the installation. */
export async function runUninstall(ctx: RunContext, o: UninstallOptions): Promise<void> {
  const namespace = o.values.namespace;
  ctx.progress(`uninstalling rtctl from ${ctx.client.server}, namespace ${namespace}`);
  await release(ctx, o);
  let deleted = 0;
  const remove = async (r: ObjectRef): Promise<void> => {
    if (await ctx.client.delete(r)) {
      deleted++;
      ctx.progress(`deleted ${describeRef(r)}`);
    }
  };
  for (const { step, objects } of planUninstall(o.values)) {
    if (step === InstallStep.Crds && !o.purge) {
      ctx.progress('kept the CRDs and every policy (--purge deletes them)');
      continue;
    }
    if (step === InstallStep.Namespace) {
      // The reports and the release request go before the namespace, which is deleted only when rtctl made it.
      const configMaps = resourceTypeOf('ConfigMap');
      for (const r of await listReports(ctx, namespace))
        await remove({ type: configMaps, name: r.object, namespace });
      await remove({ type: configMaps, name: RELEASE_CONFIGMAP_NAME, namespace });
      const ns = await ctx.client.get({ type: resourceTypeOf('Namespace'), name: namespace });
      if (ns === undefined || ns.metadata?.deletionTimestamp !== undefined) continue;
      if (ns.metadata?.labels?.[MANAGED_BY_LABEL] !== MANAGED_BY) {
        ctx.progress(`kept namespace ${namespace}: it existed before rtctl`);
        continue;
      }
    }
    for (const object of objects) await remove(refOf(object));
  }
  ctx.progress(
    deleted === 0 ? 'nothing to do: rtctl is not installed here' : `uninstalled (${deleted} objects deleted)`,
  );
}
