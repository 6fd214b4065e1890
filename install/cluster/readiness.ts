// Pure checks of what the API server reports: is a CRD Established, is a DaemonSet or Deployment rolled out
// and ready, and the enforcers' node reports read from their ConfigMaps (an unreadable report is named, not
// dropped).
import {
  NODE_STATUS_DATA_KEY,
  NODE_STATUS_VERSION,
  type NodeStatusReport,
} from '../../compiler/model/node-status.js';
import type { KubeObject } from '../io/kube-client.js';

/** True when the CRD's Established condition is True. */
export function isEstablished(crd: KubeObject | undefined): boolean {
  const conditions = (crd?.['status'] as { conditions?: unknown } | undefined)?.conditions;
  return (
    Array.isArray(conditions) &&
    conditions.some(
      (c) =>
        typeof c === 'object' &&
        c !== null &&
        (c as { type?: unknown }).type === 'Established' &&
        (c as { status?: unknown }).status === 'True',
    )
  );
}

function num(v: unknown): number {
  return typeof v === 'number' ? v : 0;
}

/** What keeps a DaemonSet or Deployment from being ready, or undefined when it is (absent: "not found"). */
export function workloadProblem(object: KubeObject | undefined): string | undefined {
  if (object === undefined) return 'not found';
  const status = (object['status'] ?? {}) as Record<string, unknown>;
  const generation = object.metadata?.generation ?? 0;
  if (num(status['observedGeneration']) < generation)
    return `generation ${generation} not observed yet (observed ${num(status['observedGeneration'])})`;
  if (object['kind'] === 'DaemonSet') {
    const desired = num(status['desiredNumberScheduled']);
    const parts: Array<[string, number]> = [
      ['ready', num(status['numberReady'])],
      ['updated', num(status['updatedNumberScheduled'])],
      ['available', num(status['numberAvailable'])],
    ];
    const short = parts.filter(([, n]) => n !== desired);
    return short.length === 0
      ? undefined
      : `${short.map(([k, n]) => `${n}/${desired} ${k}`).join(', ')} (pods on ${desired} nodes)`;
  }
  const spec = (object['spec'] ?? {}) as Record<string, unknown>;
  const desired = typeof spec['replicas'] === 'number' ? spec['replicas'] : 1;
  const parts: Array<[string, number]> = [
    ['ready', num(status['readyReplicas'])],
    ['updated', num(status['updatedReplicas'])],
    ['available', num(status['availableReplicas'])],
  ];
  const short = parts.filter(([, n]) => n !== desired);
  return short.length === 0 ? undefined : short.map(([k, n]) => `${n}/${desired} ${k}`).join(', ');
}

/** A report ConfigMap read: the report, or why it could not be read. */
export type ReadReport = { object: string; report: NodeStatusReport } | { object: string; problem: string };

/** Reads one report ConfigMap. */
export function readReport(configMap: KubeObject): ReadReport {
  const object = configMap.metadata?.name ?? '(unnamed)';
  const text = (configMap['data'] as Record<string, unknown> | undefined)?.[NODE_STATUS_DATA_KEY];
  if (typeof text !== 'string') return { object, problem: `no ${NODE_STATUS_DATA_KEY}` };
  let parsed: unknown;
  try {
    parsed = JSON.parse(text) as unknown;
  } catch (err) {
    return {
      object,
      problem: `${NODE_STATUS_DATA_KEY} is not JSON: ${err instanceof Error ? err.message : ''}`,
    };
  }
  const r = parsed as Partial<NodeStatusReport> | null;
  if (typeof r !== 'object' || r === null) return { object, problem: 'report is not an object' };
  if (r.version !== NODE_STATUS_VERSION)
    return {
      object,
      problem: `report version ${String(r.version)} (this rtctl reads ${NODE_STATUS_VERSION})`,
    };
  if (typeof r.node !== 'string' || typeof r.plane !== 'string' || typeof r.updatedAt !== 'string')
    return { object, problem: 'report lacks node, plane or updatedAt' };
  return {
    object,
    report: {
      version: NODE_STATUS_VERSION,
      node: r.node,
      plane: r.plane,
      rtctlVersion: typeof r.rtctlVersion === 'string' ? r.rtctlVersion : '?',
      updatedAt: r.updatedAt,
      released: r.released === true,
      policies: Array.isArray(r.policies) ? r.policies : [],
    },
  };
}

/** `12s`, `4m`, `3h` since `iso` (or the text itself when it is not a time). */
export function ageOf(iso: string, now: Date): string {
  const t = Date.parse(iso);
  if (Number.isNaN(t)) return `at ${JSON.stringify(iso)}`;
  const s = Math.max(0, Math.round((now.getTime() - t) / 1000));
  const ago = s < 120 ? `${s}s` : s < 7200 ? `${Math.round(s / 60)}m` : `${Math.round(s / 3600)}h`;
  return `${iso} (${ago} ago)`;
}
