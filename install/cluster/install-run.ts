// `rtctl install`: server-side apply of the plan, step by step, with the waits that make the order mean
// something: every CRD Established before anything else, the webhook Deployment ready before the
// ValidatingWebhookConfiguration (so admission never depends on a webhook that does not serve yet). Refuses to
// replace an install of another rtctl version unless asked; keeps a valid webhook certificate.
import { RELEASE_CONFIGMAP_NAME } from '../../compiler/model/node-status.js';
import { Component, nameOf, WEBHOOK_TLS_SECRET } from '../names.js';
import type { InstallValues } from '../values.js';
import type { KubeObject } from '../io/kube-client.js';
import {
  InstallStep,
  MANAGED_BY,
  MANAGED_BY_LABEL,
  planInstall,
  RTCTL_VERSION,
  VERSION_LABEL,
  type CertificateSource,
} from './install-plan.js';
import { describeRef, refOf, resourceTypeOf, type ObjectRef } from './kube-resources.js';
import { isEstablished, workloadProblem } from './readiness.js';
import { deadlineIn, ExitCode, RunError, waitUntil, type Deadline, type RunContext } from './run-context.js';
import { certificateProblem, issueCertificate, materialOf, webhookDnsNames } from './webhook-certificate.js';

/** Choices of an install. */
export interface InstallOptions {
  values: InstallValues;
  /** Use cert-manager's Issuer and Certificate instead of issuing the certificate. */
  certManager: boolean;
  /** Server-side apply with force: take over fields another field manager owns. */
  forceConflicts: boolean;
  /** Replace an install of another rtctl version. */
  upgrade: boolean;
  /** Bound of every wait of the run. */
  timeoutMs: number;
}

const ref = (kind: string, name: string, namespace?: string): ObjectRef => ({
  type: resourceTypeOf(kind),
  name,
  ...(namespace === undefined ? {} : { namespace }),
});

/** The enforcer DaemonSet: it carries the version of the install. */
export function enforcerRef(namespace: string): ObjectRef {
  return ref('DaemonSet', nameOf(Component.Enforcer), namespace);
}

async function checkExistingVersion(ctx: RunContext, o: InstallOptions): Promise<void> {
  const existing = await ctx.client.get(enforcerRef(o.values.namespace));
  const version = existing?.metadata?.labels?.[VERSION_LABEL];
  if (existing === undefined || version === RTCTL_VERSION) return;
  const what = version === undefined ? 'an rtctl install of unknown version' : `an rtctl ${version} install`;
  if (!o.upgrade)
    throw new RunError(
      `namespace ${o.values.namespace} has ${what} (DaemonSet ${nameOf(Component.Enforcer)}, label ${VERSION_LABEL}); this is rtctl ${RTCTL_VERSION}: rerun with --upgrade to replace it`,
      ExitCode.Error,
    );
  ctx.progress(`replacing ${what} with rtctl ${RTCTL_VERSION} (--upgrade)`);
}

async function chooseCertificate(ctx: RunContext, o: InstallOptions): Promise<CertificateSource> {
  if (o.certManager) return { kind: 'cert-manager' };
  const secret = await ctx.client.get(ref('Secret', WEBHOOK_TLS_SECRET, o.values.namespace));
  const existing = materialOf(secret);
  if (existing !== undefined) {
    const problem = certificateProblem(existing, webhookDnsNames(o.values.namespace), ctx.now());
    if (problem === undefined) {
      ctx.progress(`certificate: keeping the valid one in Secret ${WEBHOOK_TLS_SECRET}`);
      return { kind: 'secret', material: existing };
    }
    ctx.progress(`certificate: replacing the one in Secret ${WEBHOOK_TLS_SECRET}: ${problem}`);
  } else {
    ctx.progress(
      `certificate: issuing a CA and serving certificate for ${webhookDnsNames(o.values.namespace).join(', ')}`,
    );
  }
  return { kind: 'secret', material: issueCertificate(o.values.namespace, ctx.now()) };
}

async function ownsNamespace(ctx: RunContext, namespace: string): Promise<boolean> {
  const ns = await ctx.client.get(ref('Namespace', namespace));
  return ns === undefined || ns.metadata?.labels?.[MANAGED_BY_LABEL] === MANAGED_BY;
}

async function applyAll(ctx: RunContext, objects: readonly KubeObject[], force: boolean): Promise<void> {
  for (const object of objects) {
    const { created } = await ctx.client.apply(object, force);
    ctx.progress(`${created ? 'created' : 'applied'} ${describeRef(refOf(object))}`);
  }
}

async function waitEstablished(
  ctx: RunContext,
  crds: readonly KubeObject[],
  deadline: Deadline,
): Promise<void> {
  for (const crd of crds) {
    const r = refOf(crd);
    const missing = await waitUntil(ctx, deadline, async () =>
      isEstablished(await ctx.client.get(r)) ? undefined : 'condition Established is not True',
    );
    if (missing !== undefined)
      throw new RunError(
        `${describeRef(r)} not established within ${deadline.label}: ${missing}`,
        ExitCode.NotReady,
      );
    ctx.progress(`established ${describeRef(r)}`);
  }
}

/** Waits for one workload to be ready; the error says what is missing and what was not applied because of it. */
export async function waitWorkload(
  ctx: RunContext,
  r: ObjectRef,
  deadline: Deadline,
  consequence: string,
): Promise<void> {
  const missing = await waitUntil(ctx, deadline, async () => workloadProblem(await ctx.client.get(r)));
  if (missing !== undefined)
    throw new RunError(
      `${describeRef(r)} not ready within ${deadline.label}: ${missing}${consequence}`,
      ExitCode.NotReady,
    );
  ctx.progress(`ready ${describeRef(r)}`);
}

/** Applies the installation. */
export async function runInstall(ctx: RunContext, o: InstallOptions): Promise<void> {
  const namespace = o.values.namespace;
  // Each wait has its own deadline: a slow step before it does not eat its time.
  const deadline = (): Deadline => deadlineIn(ctx, o.timeoutMs);
  ctx.progress(`installing rtctl ${RTCTL_VERSION} into ${ctx.client.server}, namespace ${namespace}`);
  await checkExistingVersion(ctx, o);
  const ownNamespace = await ownsNamespace(ctx, namespace);
  if (!ownNamespace)
    ctx.progress(`namespace ${namespace} exists and is not rtctl's: labelled, never deleted by uninstall`);
  const certificate = await chooseCertificate(ctx, o);
  for (const { step, objects } of planInstall({ values: o.values, certificate, ownNamespace })) {
    if (step === InstallStep.WebhookConfiguration)
      await waitWorkload(
        ctx,
        ref('Deployment', nameOf(Component.Webhook), namespace),
        deadline(),
        '; the ValidatingWebhookConfiguration was not applied, so admission does not depend on it',
      );
    await applyAll(ctx, objects, o.forceConflicts);
    if (step === InstallStep.Crds) await waitEstablished(ctx, objects, deadline());
    if (step === InstallStep.Namespace) await withdrawRelease(ctx, namespace);
    if (step === InstallStep.Certificate && certificate.kind === 'cert-manager') {
      const secret = ref('Secret', WEBHOOK_TLS_SECRET, namespace);
      const until = deadline();
      const missing = await waitUntil(ctx, until, async () =>
        (await ctx.client.get(secret)) === undefined ? 'cert-manager has not issued it' : undefined,
      );
      if (missing !== undefined)
        throw new RunError(
          `${describeRef(secret)} missing after ${until.label}: ${missing}`,
          ExitCode.NotReady,
        );
    }
  }
  ctx.progress('installed');
}

/** Removes a release request an interrupted uninstall left behind, so the enforcers enforce again. */
export async function withdrawRelease(ctx: RunContext, namespace: string): Promise<void> {
  const r = ref('ConfigMap', RELEASE_CONFIGMAP_NAME, namespace);
  if ((await ctx.client.get(r)) === undefined) return;
  await ctx.client.delete(r);
  ctx.progress(
    `deleted ${describeRef(r)} (an earlier uninstall's release request): the enforcers enforce again`,
  );
}
