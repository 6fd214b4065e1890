// Diagnostic codes of the admission area: namespace posture annotations, IMDS-unsafe node settings, custom
// (OPA) rules and malformed admission requests. See ../code-info.ts; docs/diagnostics.md is generated from all lists.
import type { CodeInfo } from '../code-info.js';

/** The admission codes by name, so rules refer to them without magic strings. */
export const AdmissionCode = {
  ImdsTokensOptional: 'RT5001',
  ImdsHopLimit: 'RT5002',
  ImdsHopLimitAllowed: 'RT5003',
  ImdsEndpointDisabled: 'RT5004',
  ImdsMetadataTags: 'RT5005',
  ImdsInvalidValue: 'RT5006',
  ImdsAllowReasonEmpty: 'RT5007',
  ImdsPodGuard: 'RT5008',
  ImdsPodGuardMissing: 'RT5009',
  PostureInvalid: 'RT5010',
  CustomDeny: 'RT5020',
  CustomPolicyFailed: 'RT5021',
  MalformedReview: 'RT5030',
  FindingsTruncated: 'RT5031',
  UnsupportedMediaType: 'RT5032',
  ObjectTooComplex: 'RT5033',
} as const;
export type AdmissionCode = (typeof AdmissionCode)[keyof typeof AdmissionCode];

export const ADMISSION_CODES = [
  {
    code: AdmissionCode.ImdsTokensOptional,
    severity: 'error',
    name: 'imds-tokens-optional',
    summary:
      'Instance metadata tokens are not required (set or defaulted to optional), so any process can read the node role credentials with a plain GET; set the tokens field to required.',
  },
  {
    code: AdmissionCode.ImdsHopLimit,
    severity: 'error',
    name: 'imds-hop-limit',
    summary:
      'The metadata response hop limit is above 1, so pods can obtain metadata tokens and the node role credentials; set it to 1, or annotate the object with security.runtime.com/allow-pod-imds: "<reason>".',
  },
  {
    code: AdmissionCode.ImdsHopLimitAllowed,
    severity: 'warning',
    name: 'imds-hop-limit-allowed',
    summary:
      'The hop limit lets pods reach the metadata service, accepted because of the security.runtime.com/allow-pod-imds annotation whose reason is echoed.',
  },
  {
    code: AdmissionCode.ImdsEndpointDisabled,
    severity: 'warning',
    name: 'imds-endpoint-disabled',
    summary:
      'The metadata endpoint is disabled; node components (kubelet credential providers, CNI, cloud controllers) may rely on it.',
  },
  {
    code: AdmissionCode.ImdsMetadataTags,
    severity: 'warning',
    name: 'imds-metadata-tags',
    summary:
      'Instance tags are exposed through the metadata service; tags often carry names and secrets workloads should not read.',
  },
  {
    code: AdmissionCode.ImdsInvalidValue,
    severity: 'error',
    name: 'imds-invalid-value',
    summary:
      'An instance metadata option has the wrong type or a value outside its allowed set; the message names what was found and what is allowed.',
  },
  {
    code: AdmissionCode.ImdsAllowReasonEmpty,
    severity: 'error',
    name: 'imds-allow-reason-empty',
    summary:
      'The security.runtime.com/allow-pod-imds annotation must be a non-empty string giving the reason pods need the metadata service.',
  },
  {
    code: AdmissionCode.ImdsPodGuard,
    severity: 'info',
    name: 'imds-pod-guard',
    summary:
      'A node pool lets pods reach the metadata service (hop limit 2, allowed by security.runtime.com/allow-pod-imds); the message names the policies in the same input that keep every other pod out (policies/hardening/imds/). Lint only.',
  },
  {
    code: AdmissionCode.ImdsPodGuardMissing,
    severity: 'warning',
    name: 'imds-pod-guard-missing',
    summary:
      'A node pool lets pods reach the metadata service, and no RuntimePolicy in the same input (which holds policies) blocks connects to 169.254.169.254 for the pods that do not need it: every pod on those nodes can read the node role credentials. Apply policies/hardening/imds/. Lint only.',
  },
  {
    code: AdmissionCode.PostureInvalid,
    severity: 'error',
    name: 'posture-invalid',
    summary:
      'A namespace posture annotation (runtime-file-posture, runtime-network-posture, runtime-capabilities-posture) must be audit or block.',
  },
  {
    code: AdmissionCode.CustomDeny,
    severity: 'error',
    name: 'custom-deny',
    summary: 'A custom OPA policy loaded by the webhook denied the request; the message is the policy’s own.',
  },
  {
    code: AdmissionCode.CustomPolicyFailed,
    severity: 'error',
    name: 'custom-policy-failed',
    summary:
      'A custom OPA policy failed to evaluate; the request is denied (fail closed) and the failure is logged by the webhook.',
  },
  {
    code: AdmissionCode.MalformedReview,
    severity: 'error',
    name: 'malformed-review',
    summary:
      'The admission request body is not a valid admission.k8s.io/v1 AdmissionReview; the webhook answers 400 with the reason.',
  },
  {
    code: AdmissionCode.FindingsTruncated,
    severity: 'error',
    name: 'findings-truncated',
    summary:
      'The object has more findings than one admission response lists; the first are listed and this line counts the rest. Run rtctl lint on the object to see them all.',
  },
  {
    code: AdmissionCode.UnsupportedMediaType,
    severity: 'error',
    name: 'unsupported-media-type',
    summary:
      'The admission request body is not declared as application/json (the only type the API server sends); the webhook answers 415.',
  },
  {
    code: AdmissionCode.ObjectTooComplex,
    severity: 'error',
    name: 'object-too-complex',
    summary:
      'The object under review nests deeper, or holds more objects, arrays or keys, than any policy, Namespace or node setting needs (bounds that keep every decision within milliseconds); it is denied without being checked further.',
  },
] as const satisfies readonly CodeInfo[];
