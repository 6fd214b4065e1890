// Relates node pools that let pods reach the instance metadata service (hop limit above 1, allowed by the
// security.runtime.com/allow-pod-imds annotation, RT5003) to the policies of the same input that keep the
// other pods out: RuntimePolicies with a Block rule on connects to 169.254.169.254 (policies/hardening/imds/).
// RT5008 names them; RT5009 warns when there are none. Placed where RT5003 is. Only when the input holds
// RuntimePolicies at all: a node-pool file linted alone (or admitted by the webhook, which sees one object)
// says nothing about the policies of the cluster.
import { matchesRule } from '../decide/match-rule.js';
import { AdmissionCode } from '../diagnostics/codes/admission.js';
import type { Diagnostic } from '../diagnostics/diagnostic.js';
import { Action, Operation, PolicyKind, type PolicyIR } from '../ir/rule-set.js';
import type { LocatedPolicy } from '../checks/cross/cross-rule.js';

/** The metadata service's addresses (IPv4, and the IPv6 one of the second source document's cloud). */
export const IMDS_ADDRESSES = ['169.254.169.254', 'fd00:ec2::254'] as const;

/** True when a pod policy blocks, for any executable, a tcp connect to the metadata service on port 80. */
export function isImdsGuard(policy: PolicyIR): boolean {
  if (policy.kind !== PolicyKind.RuntimePolicy) return false;
  return policy.rules.some(
    (r) =>
      r.action === Action.Block &&
      r.fromSource.length === 0 &&
      !r.pts &&
      r.matcher.kind === 'address' &&
      matchesRule(r, {
        operation: Operation.Network,
        resource: 'tcp',
        address: IMDS_ADDRESSES[0],
        port: 80,
        write: false,
        owner: false,
      }),
  );
}

function describeSelector(policy: PolicyIR): string {
  if (policy.target.kind !== 'pods') return '';
  const labels = Object.entries(policy.target.matchLabels).map(([k, v]) => `${k}=${v}`);
  const exprs = policy.target.matchExpressions.map((e) => `${e.operator} ${e.values.join(',')}`);
  const all = [...labels, ...exprs];
  return all.length === 0 ? 'every pod' : `pods with ${all.join('; ')}`;
}

/** One RT5008 or RT5009 per RT5003 diagnostic of the input. */
export function relateImdsPodGuards(
  diagnostics: readonly Diagnostic[],
  located: readonly LocatedPolicy[],
): Diagnostic[] {
  const allowed = diagnostics.filter((d) => d.code === AdmissionCode.ImdsHopLimitAllowed);
  if (allowed.length === 0 || !located.some((l) => l.policy.kind === PolicyKind.RuntimePolicy)) return [];
  const guards = located.filter((l) => isImdsGuard(l.policy));
  return allowed.map((d): Diagnostic => {
    const base = { file: d.file, pointer: d.pointer, document: d.document };
    const placed = {
      ...base,
      ...(d.start === undefined ? {} : { start: d.start }),
      ...(d.end === undefined ? {} : { end: d.end }),
    };
    if (guards.length === 0)
      return {
        ...placed,
        code: AdmissionCode.ImdsPodGuardMissing,
        severity: 'warning',
        message:
          'pods on these nodes can reach the metadata service, and no RuntimePolicy in this input blocks connects to 169.254.169.254 for the pods that do not need it; apply policies/hardening/imds/ to their namespaces',
      };
    const names = guards.map(
      (g) =>
        `${g.policy.namespace}/${g.policy.name} (${describeSelector(g.policy)}; ${g.file}:${g.policy.location.line})`,
    );
    return {
      ...placed,
      code: AdmissionCode.ImdsPodGuard,
      severity: 'info',
      message: `pods on these nodes can reach the metadata service; kept out by ${names.join(', ')}`,
      related: guards.map((g) => ({
        message: `blocks connects to the metadata service for ${describeSelector(g.policy)}`,
        file: g.file,
        pointer: g.policy.location.pointer,
      })),
    };
  });
}
