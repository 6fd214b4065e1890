// A document checker validates one parsed YAML document of a kind it knows (policies, Namespaces, node
// settings with instance-metadata options). Checkers are listed in one array in checks/index.ts; `rtctl lint`
// runs them over files and the admission webhook runs them over AdmissionReview objects.
import type { Finding } from '../diagnostics/finding.js';
import type { EnforcementTarget } from '../enforcement/enforcement-table.js';

/** The identity of a Kubernetes object, read before any validation. */
export interface ObjectHead {
  apiVersion: string;
  kind: string;
}

/** Context a checker gets besides the object. */
export interface CheckContext {
  /** The admission operation when run by the webhook (`CREATE`, `UPDATE`); undefined in lint. */
  operation?: string;
  /** Targets on which every rule must be enforced (`--require-enforced`): gaps there are errors. */
  requireEnforced?: readonly EnforcementTarget[];
  /** The object has no text (an API object under admission): rule locations are pointers only. */
  withoutPositions?: boolean;
}

/** A pure validator for one family of objects. */
export interface DocumentChecker {
  /** Stable name, for logs and metrics. */
  readonly name: string;
  /** True when this checker validates objects with this head. */
  appliesTo(head: ObjectHead): boolean;
  /** Returns every finding; never throws for bad input. */
  check(object: unknown, context: CheckContext): Finding[];
}
