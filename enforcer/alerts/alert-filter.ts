// Filters of `rtctl logs`: namespace, operation, pod, container (all optional; every given one must match).
import type { AlertRecord } from './alert-record.js';

/** What to keep. Lists match any of their values. */
export interface AlertFilter {
  namespace?: string;
  operations?: string[];
  pods?: string[];
  containers?: string[];
}

/** True when the alert passes the filter. */
export function matchesAlertFilter(alert: AlertRecord, filter: AlertFilter): boolean {
  if (filter.namespace !== undefined && alert.NamespaceName !== filter.namespace) return false;
  const ci = (list: string[] | undefined, value: string): boolean =>
    list === undefined || list.length === 0 || list.some((v) => v.toLowerCase() === value.toLowerCase());
  return (
    ci(filter.operations, alert.Operation) &&
    ci(filter.pods, alert.PodName) &&
    ci(filter.containers, alert.ContainerName)
  );
}
