// The AdmissionReview admission.k8s.io/v1 wire format: validating a request body (ajv, one schema) and
// building the response. Pure; the HTTP layer turns a rejected body into a 400 with the reason.
import { Ajv } from 'ajv';
import type { ErrorObject, ValidateFunction } from 'ajv';

/** The group/version/kind of the object under review, as the API server sends it. */
export interface GroupVersionKind {
  group: string;
  version: string;
  kind: string;
}

/** The part of an AdmissionReview request the webhook reads; other fields pass through to OPA policies. */
export interface AdmissionRequest {
  uid: string;
  kind: GroupVersionKind;
  operation: string;
  object?: unknown;
  oldObject?: unknown;
  dryRun?: boolean;
  namespace?: string;
  name?: string;
  [field: string]: unknown;
}

/** The status of a response. */
export interface AdmissionStatus {
  code: number;
  message: string;
  reason?: string;
}

/** The response part of an AdmissionReview. */
export interface AdmissionResponse {
  uid: string;
  allowed: boolean;
  status: AdmissionStatus;
  warnings?: string[];
}

/** A full response body. */
export interface AdmissionReviewResponse {
  apiVersion: 'admission.k8s.io/v1';
  kind: 'AdmissionReview';
  response: AdmissionResponse;
}

/** The only API version the webhook speaks. */
export const ADMISSION_API_VERSION = 'admission.k8s.io/v1';

/** Operations that carry an object to check. */
export const Operation = {
  Create: 'CREATE',
  Update: 'UPDATE',
  Delete: 'DELETE',
  Connect: 'CONNECT',
} as const;
export type Operation = (typeof Operation)[keyof typeof Operation];

const REVIEW_SCHEMA = {
  type: 'object',
  required: ['apiVersion', 'kind', 'request'],
  properties: {
    apiVersion: { const: ADMISSION_API_VERSION },
    kind: { const: 'AdmissionReview' },
    request: {
      type: 'object',
      required: ['uid', 'kind', 'operation'],
      properties: {
        uid: { type: 'string', minLength: 1, maxLength: 256 },
        kind: {
          type: 'object',
          required: ['group', 'version', 'kind'],
          properties: { group: { type: 'string' }, version: { type: 'string' }, kind: { type: 'string' } },
        },
        operation: { enum: Object.values(Operation) },
        dryRun: { type: 'boolean' },
        // Go servers write null for an absent optional field; null is read as absent.
        namespace: { type: ['string', 'null'] },
        name: { type: ['string', 'null'] },
        object: { type: ['object', 'null'] },
        oldObject: { type: ['object', 'null'] },
      },
      if: { properties: { operation: { enum: [Operation.Create, Operation.Update] } } },
      then: { required: ['object'], properties: { object: { type: 'object' } } },
    },
  },
} as const;

/** The outcome of reading a body: the request, or why it is not a valid review. */
export type ParsedReview = { ok: true; request: AdmissionRequest } | { ok: false; reason: string };

function describeError(e: ErrorObject): string {
  const at = e.instancePath === '' ? 'body' : e.instancePath.slice(1).replace(/\//g, '.');
  if (e.keyword === 'required')
    return `${at}: missing ${String((e.params as { missingProperty?: unknown }).missingProperty)}`;
  if (e.keyword === 'const')
    return `${at}: must be ${JSON.stringify((e.params as { allowedValue?: unknown }).allowedValue)}`;
  return `${at}: ${e.message ?? 'invalid'}`;
}

/** Creates the validator for AdmissionReview bodies (compiled once per process). */
export function createReviewParser(): (body: unknown) => ParsedReview {
  const validate: ValidateFunction = new Ajv({ allErrors: false, strict: false }).compile(REVIEW_SCHEMA);
  return (body: unknown): ParsedReview => {
    if (typeof body !== 'object' || body === null || Array.isArray(body)) {
      return { ok: false, reason: 'body: expected an AdmissionReview object' };
    }
    const apiVersion = (body as Record<string, unknown>)['apiVersion'];
    if (apiVersion !== ADMISSION_API_VERSION) {
      const found = typeof apiVersion === 'string' ? JSON.stringify(apiVersion.slice(0, 100)) : 'missing';
      return { ok: false, reason: `apiVersion: ${found}; only ${ADMISSION_API_VERSION} is supported` };
    }
    if (validate(body)) {
      const { request } = body as { request: AdmissionRequest };
      if (request.namespace === null) delete request.namespace;
      if (request.name === null) delete request.name;
      return { ok: true, request };
    }
    const first = validate.errors?.[0];
    return { ok: false, reason: first === undefined ? 'not an AdmissionReview' : describeError(first) };
  };
}

/** Wraps a response in an AdmissionReview body. */
export function createReviewResponse(response: AdmissionResponse): AdmissionReviewResponse {
  return { apiVersion: ADMISSION_API_VERSION, kind: 'AdmissionReview', response };
}
