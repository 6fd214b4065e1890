// The modify-instance-metadata-options operation's input, validated as data. The wire form is a JSON object
// keyed by the request parameter names of the seed (`instance-id`, `http-endpoint`, ...). Errors carry the
// error codes the real API uses, so clients can tell a bad value from an unknown instance.
import {
  HOP_LIMIT_MAX,
  HOP_LIMIT_MIN,
  HttpEndpoint,
  HttpTokens,
  InstanceMetadataTags,
  isOneOf,
  isValidHopLimit,
  MODIFY_PARAMETERS,
  type InstanceMetadataOptions,
  type ModifyParameter,
} from '../compiler/instance-metadata-options/options.js';

/** The option fields the operation can change. */
export type ModifiableOptions = Pick<
  InstanceMetadataOptions,
  'HttpEndpoint' | 'HttpTokens' | 'HttpPutResponseHopLimit' | 'InstanceMetadataTags'
>;

/** A validated request. */
export interface ModifyRequest {
  instanceId: string;
  changes: Partial<ModifiableOptions>;
}

/** Error codes of the management API. */
export const ApiErrorCode = {
  InvalidRequest: 'InvalidRequest',
  MissingParameter: 'MissingParameter',
  UnknownParameter: 'UnknownParameter',
  InvalidParameterValue: 'InvalidParameterValue',
  InstanceIdMalformed: 'InvalidInstanceID.Malformed',
  InstanceIdNotFound: 'InvalidInstanceID.NotFound',
  UnsupportedOperation: 'UnsupportedOperation',
  AuthFailure: 'AuthFailure',
} as const;
export type ApiErrorCode = (typeof ApiErrorCode)[keyof typeof ApiErrorCode];

/** One error of the management API. */
export interface ApiError {
  code: ApiErrorCode;
  message: string;
  /** The request parameter at fault, when there is one. */
  parameter?: string;
}

const INSTANCE_ID = /^i-[0-9a-f]{8,17}$/;

function describeValue(v: unknown): string {
  const text = typeof v === 'string' ? v : JSON.stringify(v);
  return text.length > 64 ? `${text.slice(0, 64)}...` : text;
}

function invalid(parameter: string, value: unknown, expected: string): ApiError {
  return {
    code: ApiErrorCode.InvalidParameterValue,
    parameter,
    message: `Value (${describeValue(value)}) for parameter ${parameter} is invalid. Expected ${expected}.`,
  };
}

function parseHopLimit(v: unknown): number | undefined {
  if (typeof v === 'string' && /^[0-9]{1,3}$/.test(v)) return Number(v);
  return typeof v === 'number' ? v : undefined;
}

/** Validates the operation's input; returns every problem found. */
export function parseModifyRequest(
  body: unknown,
): { ok: true; request: ModifyRequest } | { ok: false; errors: ApiError[] } {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    return {
      ok: false,
      errors: [{ code: ApiErrorCode.InvalidRequest, message: 'the request body must be a JSON object' }],
    };
  }
  const input = body as Record<string, unknown>;
  const errors: ApiError[] = [];
  const known = new Set<string>(['instance-id', ...Object.keys(MODIFY_PARAMETERS)]);
  for (const key of Object.keys(input)) {
    if (!known.has(key)) {
      errors.push({
        code: ApiErrorCode.UnknownParameter,
        parameter: key,
        message: `Unknown parameter ${describeValue(key)}; expected instance-id, ${Object.keys(MODIFY_PARAMETERS).join(', ')}.`,
      });
    }
  }
  const instanceId = input['instance-id'];
  if (instanceId === undefined) {
    errors.push({
      code: ApiErrorCode.MissingParameter,
      parameter: 'instance-id',
      message: 'The parameter instance-id is required.',
    });
  } else if (typeof instanceId !== 'string' || !INSTANCE_ID.test(instanceId)) {
    errors.push({
      code: ApiErrorCode.InstanceIdMalformed,
      parameter: 'instance-id',
      message: `Invalid id: ${describeValue(instanceId)} (expecting "i-" followed by 8 to 17 hex digits).`,
    });
  }
  const changes: Partial<ModifiableOptions> = {};
  const given = (p: ModifyParameter) => input[p] !== undefined;
  if (given('http-endpoint')) {
    const v = input['http-endpoint'];
    if (isOneOf(HttpEndpoint, v)) changes.HttpEndpoint = v;
    else errors.push(invalid('http-endpoint', v, `one of ${Object.values(HttpEndpoint).join(', ')}`));
  }
  if (given('http-tokens')) {
    const v = input['http-tokens'];
    if (isOneOf(HttpTokens, v)) changes.HttpTokens = v;
    else errors.push(invalid('http-tokens', v, `one of ${Object.values(HttpTokens).join(', ')}`));
  }
  if (given('http-put-response-hop-limit')) {
    const raw = input['http-put-response-hop-limit'];
    const v = parseHopLimit(raw);
    if (isValidHopLimit(v)) changes.HttpPutResponseHopLimit = v;
    else
      errors.push(
        invalid('http-put-response-hop-limit', raw, `an integer from ${HOP_LIMIT_MIN} to ${HOP_LIMIT_MAX}`),
      );
  }
  if (given('instance-metadata-tags')) {
    const v = input['instance-metadata-tags'];
    if (isOneOf(InstanceMetadataTags, v)) changes.InstanceMetadataTags = v;
    else
      errors.push(
        invalid('instance-metadata-tags', v, `one of ${Object.values(InstanceMetadataTags).join(', ')}`),
      );
  }
  const anyOption = (Object.keys(MODIFY_PARAMETERS) as ModifyParameter[]).some(given);
  if (!anyOption) {
    errors.push({
      code: ApiErrorCode.MissingParameter,
      message: `At least one of ${Object.keys(MODIFY_PARAMETERS).join(', ')} is required.`,
    });
  }
  if (errors.length > 0 || typeof instanceId !== 'string') return { ok: false, errors };
  return { ok: true, request: { instanceId, changes } };
}
