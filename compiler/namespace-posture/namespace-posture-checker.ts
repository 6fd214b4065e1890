// The DocumentChecker for namespace posture annotations: runtime-file-posture, runtime-network-posture and
// runtime-capabilities-posture must be `audit` or `block` (lower case, as the seed writes them).
import type { CheckContext, DocumentChecker, ObjectHead } from '../checks/document-checker.js';
import { AdmissionCode } from '../diagnostics/codes/admission.js';
import { Severity } from '../diagnostics/diagnostic.js';
import type { Finding } from '../diagnostics/finding.js';
import { describeValue, isRecord } from '../model/json-value.js';

/** The posture annotation keys, one per operation class (Process follows the file posture). */
export const POSTURE_ANNOTATIONS = [
  'runtime-file-posture',
  'runtime-network-posture',
  'runtime-capabilities-posture',
] as const;

/** The values a posture annotation may take. */
export const Posture = { Audit: 'audit', Block: 'block' } as const;
export type Posture = (typeof Posture)[keyof typeof Posture];

/** The findings for one posture annotation value, or none when it is valid. */
export function checkPostureValue(key: string, value: unknown): Finding[] {
  if (value === Posture.Audit || value === Posture.Block) return [];
  const hint =
    typeof value === 'string' &&
    (value.trim().toLowerCase() === Posture.Audit || value.trim().toLowerCase() === Posture.Block)
      ? ` (write it as ${JSON.stringify(value.trim().toLowerCase())}: values are lower case without spaces)`
      : '';
  return [
    {
      code: AdmissionCode.PostureInvalid,
      severity: Severity.Error,
      message: `annotation ${key} is ${describeValue(value)}; expected "audit" or "block"${hint}`,
      pointer: `/metadata/annotations/${key}`,
    },
  ];
}

/** Checks the posture annotations of core/v1 Namespaces. */
export const namespacePostureChecker: DocumentChecker = {
  name: 'namespace-posture',
  appliesTo(head: ObjectHead): boolean {
    return head.apiVersion === 'v1' && head.kind === 'Namespace';
  },
  check(object: unknown, _context: CheckContext): Finding[] {
    if (!isRecord(object)) return [];
    const metadata = object['metadata'];
    if (!isRecord(metadata)) return [];
    const annotations = metadata['annotations'];
    if (!isRecord(annotations)) return [];
    return POSTURE_ANNOTATIONS.flatMap((key) =>
      key in annotations ? checkPostureValue(key, annotations[key]) : [],
    );
  },
};
