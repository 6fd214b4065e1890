// `rtctl install --verify`: waits (bounded) for the enforcer DaemonSet and the Deployments to be rolled out and
// ready, and for every node to report; then prints which data plane each node runs and when it last reported.
// Not ready in time: a RunError naming what is missing (exit 1).
import { NODE_STATUS_LABEL } from '../../compiler/model/node-status.js';
import { isEnabled, Toggle } from '../manifests.js';
import { Component, nameOf } from '../names.js';
import type { InstallValues } from '../values.js';
import { enforcerRef } from './install-run.js';
import { describeRef, resourceTypeOf, type ObjectRef } from './kube-resources.js';
import { ageOf, readReport, workloadProblem, type ReadReport } from './readiness.js';
import { deadlineIn, ExitCode, RunError, waitUntil, type RunContext } from './run-context.js';

/** The workloads an install with these values runs. */
export function workloadsOf(values: InstallValues): ObjectRef[] {
  const deployment = (c: Component): ObjectRef => ({
    type: resourceTypeOf('Deployment'),
    name: nameOf(c),
    namespace: values.namespace,
  });
  return [
    enforcerRef(values.namespace),
    deployment(Component.Webhook),
    ...(isEnabled(values, Toggle.Relay) ? [deployment(Component.Relay)] : []),
    ...(isEnabled(values, Toggle.Controller) ? [deployment(Component.Controller)] : []),
  ];
}

/** The node reports in the install namespace. */
export async function listReports(ctx: RunContext, namespace: string): Promise<ReadReport[]> {
  const items = await ctx.client.list(resourceTypeOf('ConfigMap'), namespace, `${NODE_STATUS_LABEL}=true`);
  return items.map(readReport).sort((a, b) => (a.object < b.object ? -1 : a.object > b.object ? 1 : 0));
}

async function nodeNames(ctx: RunContext): Promise<string[]> {
  const nodes = await ctx.client.list(resourceTypeOf('Node'));
  return nodes
    .map((n) => n.metadata?.name ?? '')
    .filter((n) => n !== '')
    .sort();
}

/** Verifies a finished install; prints one line per node on `out`. */
export async function runVerify(
  ctx: RunContext,
  values: InstallValues,
  timeoutMs: number,
  out: (line: string) => void,
): Promise<void> {
  const rollout = deadlineIn(ctx, timeoutMs);
  const workloads = workloadsOf(values);
  const missingWorkloads = await waitUntil(ctx, rollout, async () => {
    const problems: string[] = [];
    for (const w of workloads) {
      const p = workloadProblem(await ctx.client.get(w));
      if (p !== undefined) problems.push(`${describeRef(w)}: ${p}`);
    }
    return problems.length === 0 ? undefined : problems.join('; ');
  });
  if (missingWorkloads !== undefined)
    throw new RunError(`not ready within ${rollout.label}: ${missingWorkloads}`, ExitCode.NotReady);
  for (const w of workloads) ctx.progress(`ready ${describeRef(w)}`);

  let reports: ReadReport[] = [];
  let nodes: string[] = [];
  const unreported = (): string[] => {
    const seen = new Set(reports.flatMap((r) => ('report' in r ? [r.report.node] : [])));
    return nodes.filter((n) => !seen.has(n));
  };
  // The reports get their own --timeout, from the moment the workloads are ready.
  const deadline = deadlineIn(ctx, timeoutMs);
  const missingReports = await waitUntil(ctx, deadline, async () => {
    nodes = await nodeNames(ctx);
    reports = await listReports(ctx, values.namespace);
    const missing = unreported();
    return missing.length === 0 ? undefined : `no report from node ${missing.join(', ')}`;
  });
  const now = ctx.now();
  for (const r of reports) {
    if ('problem' in r) out(`report ${r.object}: unreadable: ${r.problem}`);
    else {
      const p = r.report.policies;
      const enforced = p.filter((x) => x.enforced).length;
      out(
        `node ${r.report.node}: plane ${r.report.plane}, rtctl ${r.report.rtctlVersion}, ${enforced}/${p.length} policies enforced${r.report.released ? ', RELEASED' : ''}, last report ${ageOf(r.report.updatedAt, now)}`,
      );
    }
  }
  for (const n of unreported()) out(`node ${n}: no report`);
  if (missingReports !== undefined)
    throw new RunError(`not verified within ${deadline.label}: ${missingReports}`, ExitCode.NotReady);
  const unreadable = reports.filter((r) => 'problem' in r);
  if (unreadable.length > 0)
    throw new RunError(
      `unreadable node reports: ${unreadable.map((r) => r.object).join(', ')}`,
      ExitCode.NotReady,
    );
  ctx.progress(`verified: ${nodes.length} node(s) report`);
}
