// Groups host policies into node sets for SELinux: one set per distinct nodeSelector. A set's module
// holds every host policy whose node selector any node of the set also satisfies.
import { createHash } from 'node:crypto';
import type { PolicyIR } from '../../ir/rule-set.js';

/** One node set: its selector and the host policies its nodes get. */
export interface HostSet {
  /** Module name `rtctl_<hash>`. */
  name: string;
  nodeLabels: Record<string, string>;
  policies: PolicyIR[];
}

function canonical(labels: Record<string, string>): string {
  return JSON.stringify(
    Object.keys(labels)
      .sort()
      .map((k) => [k, labels[k]]),
  );
}

function isImpliedBy(required: Record<string, string>, set: Record<string, string>): boolean {
  return Object.entries(required).every(([k, v]) => Object.hasOwn(set, k) && (v === '*' || set[k] === v));
}

/** The node sets of the host policies, sorted by name. */
export function groupHostSets(policies: readonly PolicyIR[]): HostSet[] {
  const selectors = new Map<string, Record<string, string>>();
  for (const p of policies) {
    if (p.target.kind === 'host') selectors.set(canonical(p.target.nodeLabels), p.target.nodeLabels);
  }
  const sets: HostSet[] = [];
  for (const [key, nodeLabels] of selectors) {
    const members = policies
      .filter((p) => p.target.kind === 'host' && isImpliedBy(p.target.nodeLabels, nodeLabels))
      .sort((a, b) =>
        a.name < b.name ? -1 : a.name > b.name ? 1 : a.location.file < b.location.file ? -1 : 1,
      );
    const hash = createHash('sha256').update(key).digest('hex').slice(0, 10);
    sets.push({ name: `rtctl_${hash}`, nodeLabels, policies: members });
  }
  return sets.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}
