// The DocumentChecker for namespace posture annotations: runtime-file-posture, runtime-network-posture and
// runtime-capabilities-posture must be `audit` or `block` (lower case, as the seed writes them). Names,
// values and the reading rule are the model's (compiler/model/posture.ts).
import type { CheckContext, DocumentChecker, ObjectHead } from '../checks/document-checker.js';
import { AdmissionCode } from '../diagnostics/codes/admission.js';
import { Severity } from '../diagnostics/diagnostic.js';
import type { Finding } from '../diagnostics/finding.js';
import { describeValue, isRecord } from '../model/json-value.js';
import { isPosture, Posture, POSTURE_ANNOTATIONS } from '../model/posture.js';

/** The findings for one posture annotation value, or none when it is valid. */
export function checkPostureValue(key: string, value: unknown): Finding[] {
  if (isPosture(value)) return [];
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
