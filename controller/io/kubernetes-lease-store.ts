// The Lease of the leader election over @kubernetes/client-node (CoordinationV1Api: get, create, replace with
// the resourceVersion read, a 409 meaning another candidate wrote first).
import * as k8s from '@kubernetes/client-node';
import type { LeaseRecord, LeaseStore } from '../leader-election.js';

function codeOf(err: unknown): number | undefined {
  return err instanceof k8s.ApiException ? (err as k8s.ApiException<unknown>).code : undefined;
}

function toSpec(r: LeaseRecord): k8s.V1LeaseSpec {
  const spec: k8s.V1LeaseSpec = {};
  if (r.holderIdentity !== undefined) spec.holderIdentity = r.holderIdentity;
  if (r.leaseDurationSeconds !== undefined) spec.leaseDurationSeconds = r.leaseDurationSeconds;
  if (r.leaseTransitions !== undefined) spec.leaseTransitions = r.leaseTransitions;
  if (r.acquireTime !== undefined) spec.acquireTime = new k8s.V1MicroTime(Date.parse(r.acquireTime));
  if (r.renewTime !== undefined) spec.renewTime = new k8s.V1MicroTime(Date.parse(r.renewTime));
  return spec;
}

function timeText(v: unknown): string | undefined {
  if (v instanceof Date) return v.toISOString();
  return typeof v === 'string' ? v : undefined;
}

/** The Lease `name` in `namespace`. */
export function createKubernetesLeaseStore(kc: k8s.KubeConfig, namespace: string, name: string): LeaseStore {
  const api = kc.makeApiClient(k8s.CoordinationV1Api);
  return {
    async get() {
      try {
        const lease = await api.readNamespacedLease({ name, namespace });
        const s = lease.spec ?? {};
        const record: LeaseRecord = {};
        if (s.holderIdentity !== undefined) record.holderIdentity = s.holderIdentity;
        if (s.leaseDurationSeconds !== undefined) record.leaseDurationSeconds = s.leaseDurationSeconds;
        if (s.leaseTransitions !== undefined) record.leaseTransitions = s.leaseTransitions;
        const acquire = timeText(s.acquireTime);
        const renew = timeText(s.renewTime);
        if (acquire !== undefined) record.acquireTime = acquire;
        if (renew !== undefined) record.renewTime = renew;
        return { record, resourceVersion: lease.metadata?.resourceVersion ?? '' };
      } catch (err) {
        if (codeOf(err) === 404) return undefined;
        throw err;
      }
    },
    async create(record) {
      try {
        await api.createNamespacedLease({
          namespace,
          body: {
            apiVersion: 'coordination.k8s.io/v1',
            kind: 'Lease',
            metadata: { name, namespace },
            spec: toSpec(record),
          },
        });
        return true;
      } catch (err) {
        if (codeOf(err) === 409) return false;
        throw err;
      }
    },
    async update(record, resourceVersion) {
      try {
        await api.replaceNamespacedLease({
          name,
          namespace,
          body: {
            apiVersion: 'coordination.k8s.io/v1',
            kind: 'Lease',
            metadata: { name, namespace, resourceVersion },
            spec: toSpec(record),
          },
        });
        return true;
      } catch (err) {
        if (codeOf(err) === 409) return false;
        throw err;
      }
    },
  };
}
