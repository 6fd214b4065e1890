// Filters of `rtctl logs`: namespace, operation, pod, container, labels (a selector), resource and source
// (exact or a `*`/`?` glob), policy, action, minimum severity and a start time. Every given filter must match;
// a list matches any of its values. Names compare case-insensitively except paths, labels and policies.
import type { AlertRecord } from './alert-record.js';
import { matchesLabelSelector, parseAlertLabels, type LabelRequirement } from './label-selector.js';

/** What to keep. Lists match any of their values. */
export interface AlertFilter {
  namespace?: string;
  operations?: string[];
  pods?: string[];
  containers?: string[];
  /** A parsed label selector (label-selector.ts). */
  labels?: LabelRequirement[];
  /** Resource paths: exact, or globs where `*` matches any characters and `?` one. */
  resources?: string[];
  /** Source executables, as resources. */
  sources?: string[];
  policies?: string[];
  /** Block, Audit (case-insensitive). */
  actions?: string[];
  /** Alerts whose numeric Severity is lower are left out (a non-numeric severity is kept). */
  minSeverity?: number;
  /** Alerts older than this (ms since the epoch) are left out. */
  sinceMs?: number;
}

/** True when the alert's numeric severity is at least `min` (a non-numeric severity always is). */
export function meetsMinSeverity(alert: Pick<AlertRecord, 'Severity'>, min: number): boolean {
  if (min <= 0) return true;
  const n = Number(alert.Severity);
  return !Number.isFinite(n) || n >= min;
}

/** The alert's time in ms since the epoch: UpdatedTime, else Timestamp; NaN when it has neither. */
export function alertTimeMs(alert: Pick<AlertRecord, 'UpdatedTime' | 'Timestamp'>): number {
  const t = typeof alert.UpdatedTime === 'string' ? Date.parse(alert.UpdatedTime) : NaN;
  if (Number.isFinite(t)) return t;
  return typeof alert.Timestamp === 'number' ? alert.Timestamp * 1000 : NaN;
}

const globs = new Map<string, RegExp>();

/** True when `value` equals `pattern`, or matches it as a glob (`*` any characters, `?` one). */
export function matchesGlob(pattern: string, value: string): boolean {
  if (!pattern.includes('*') && !pattern.includes('?')) return pattern === value;
  let re = globs.get(pattern);
  if (re === undefined) {
    const body = pattern
      .split('')
      .map((c) => (c === '*' ? '.*' : c === '?' ? '.' : c.replace(/[.+^${}()|[\]\\]/g, '\\$&')))
      .join('');
    re = new RegExp(`^${body}$`, 's');
    if (globs.size < 1000) globs.set(pattern, re);
  }
  return re.test(value);
}

/** True when the alert passes the filter. */
export function matchesAlertFilter(alert: AlertRecord, filter: AlertFilter): boolean {
  if (filter.namespace !== undefined && alert.NamespaceName !== filter.namespace) return false;
  const ci = (list: string[] | undefined, value: string | undefined): boolean =>
    list === undefined ||
    list.length === 0 ||
    list.some((v) => v.toLowerCase() === (typeof value === 'string' ? value : '').toLowerCase());
  const any = (list: string[] | undefined, test: (v: string) => boolean): boolean =>
    list === undefined || list.length === 0 || list.some(test);
  return (
    ci(filter.operations, alert.Operation) &&
    ci(filter.pods, alert.PodName) &&
    ci(filter.containers, alert.ContainerName) &&
    ci(filter.actions, alert.Action) &&
    any(filter.policies, (p) => p === alert.PolicyName) &&
    any(filter.resources, (p) => matchesGlob(p, typeof alert.Resource === 'string' ? alert.Resource : '')) &&
    any(filter.sources, (p) => matchesGlob(p, typeof alert.Source === 'string' ? alert.Source : '')) &&
    (filter.minSeverity === undefined || meetsMinSeverity(alert, filter.minSeverity)) &&
    (filter.sinceMs === undefined || !(alertTimeMs(alert) < filter.sinceMs)) &&
    (filter.labels === undefined ||
      filter.labels.length === 0 ||
      matchesLabelSelector(parseAlertLabels(alert.Labels), filter.labels))
  );
}
