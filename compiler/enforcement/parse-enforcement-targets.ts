// Parses the value of `--require-enforced`: a comma-separated list of enforcement targets.
import { ENFORCEMENT_TARGETS, findEnforcementTarget, type EnforcementTarget } from './enforcement-table.js';

/** The targets of `bpf-lsm,fanotify`; throws a usage error naming the known targets for anything else. */
export function parseEnforcementTargets(value: string): EnforcementTarget[] {
  const names = value
    .split(',')
    .map((t) => t.trim())
    .filter((t) => t !== '');
  if (names.length === 0) throw new Error('--require-enforced expects at least one target');
  return [
    ...new Set(
      names.map((n) => {
        const target = findEnforcementTarget(n);
        if (target === undefined) {
          throw new Error(
            `--require-enforced: unknown target ${JSON.stringify(n)}; expected ${ENFORCEMENT_TARGETS.map((t) => t.target).join(', ')}`,
          );
        }
        return target;
      }),
    ),
  ];
}
