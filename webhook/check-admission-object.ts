// The compiler entry the webhook uses for every object under review: every applicable DocumentChecker.
import type { CheckContext } from '../compiler/checks/document-checker.js';
import { findCheckers } from '../compiler/checks/index.js';
import type { Finding } from '../compiler/diagnostics/finding.js';

/** Runs every checker that applies to the object's apiVersion and kind. */
export function checkAdmissionObject(object: unknown, context: CheckContext): Finding[] {
  if (typeof object !== 'object' || object === null) return [];
  const o = object as Record<string, unknown>;
  const apiVersion = o['apiVersion'];
  const kind = o['kind'];
  if (typeof apiVersion !== 'string' || typeof kind !== 'string') return [];
  return findCheckers({ apiVersion, kind }).flatMap((c) => c.check(object, context));
}
