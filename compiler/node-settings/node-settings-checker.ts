// The DocumentChecker for IMDS-unsafe node settings: applies to every kind in the node-kinds table, so
// `rtctl lint` and the admission webhook both refuse node pools whose pods can read the node's credentials.
import type { CheckContext, DocumentChecker, ObjectHead } from '../checks/document-checker.js';
import type { Finding } from '../diagnostics/finding.js';
import { evaluateNodeSettings } from './evaluate-node-settings.js';
import { isRecord } from '../model/json-value.js';
import { findNodeKind } from './node-kinds.js';

function readHead(object: unknown): ObjectHead | undefined {
  if (!isRecord(object)) return undefined;
  const apiVersion = object['apiVersion'];
  const kind = object['kind'];
  return typeof apiVersion === 'string' && typeof kind === 'string' ? { apiVersion, kind } : undefined;
}

/** Checks instance-metadata options of node-provisioning kinds (Karpenter, CAPA, Crossplane, ACK, kops, eksctl). */
export const nodeSettingsChecker: DocumentChecker = {
  name: 'node-settings',
  appliesTo(head: ObjectHead): boolean {
    return findNodeKind(head.apiVersion, head.kind) !== undefined;
  },
  check(object: unknown, _context: CheckContext): Finding[] {
    const head = readHead(object);
    const entry = head === undefined ? undefined : findNodeKind(head.apiVersion, head.kind);
    return entry === undefined ? [] : evaluateNodeSettings(entry, object);
  },
};
