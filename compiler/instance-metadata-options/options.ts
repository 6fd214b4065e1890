// The instance-metadata options vocabulary: option names, their allowed values and defaults, shared by the
// IMDS emulator (imds/), the admission webhook's IMDS-unsafe rules and `rtctl lint`. One module, one truth.

/** Values of http-endpoint / HttpEndpoint. */
export const HttpEndpoint = { Enabled: 'enabled', Disabled: 'disabled' } as const;
export type HttpEndpoint = (typeof HttpEndpoint)[keyof typeof HttpEndpoint];

/** Values of http-tokens / HttpTokens. `required` makes the token (v2) mandatory. */
export const HttpTokens = { Optional: 'optional', Required: 'required' } as const;
export type HttpTokens = (typeof HttpTokens)[keyof typeof HttpTokens];

/** Values of instance-metadata-tags / InstanceMetadataTags. */
export const InstanceMetadataTags = { Enabled: 'enabled', Disabled: 'disabled' } as const;
export type InstanceMetadataTags = (typeof InstanceMetadataTags)[keyof typeof InstanceMetadataTags];

/** Values of the response-only HttpProtocolIpv6. */
export const HttpProtocolIpv6 = { Enabled: 'enabled', Disabled: 'disabled' } as const;
export type HttpProtocolIpv6 = (typeof HttpProtocolIpv6)[keyof typeof HttpProtocolIpv6];

/** Values of the response-only State. The seed shows `pending`; we add `applied` once a change took effect. */
export const OptionsState = { Pending: 'pending', Applied: 'applied' } as const;
export type OptionsState = (typeof OptionsState)[keyof typeof OptionsState];

/** Bounds of http-put-response-hop-limit (the EC2 API accepts 1 to 64; the seed uses 1 and 2). */
export const HOP_LIMIT_MIN = 1;
export const HOP_LIMIT_MAX = 64;

/** Bounds of the token TTL header, in seconds (1 second to 6 hours). */
export const TOKEN_TTL_MIN_SECONDS = 1;
export const TOKEN_TTL_MAX_SECONDS = 21600;

/** Header names, with the neutral word `cloud` for the brand part. */
export const TOKEN_HEADER = 'X-cloud-metadata-token';
export const TOKEN_TTL_HEADER = 'X-cloud-metadata-token-ttl-seconds';

/** The options of one instance, in the response field names of the seed. */
export interface InstanceMetadataOptions {
  State: OptionsState;
  HttpTokens: HttpTokens;
  HttpPutResponseHopLimit: number;
  HttpEndpoint: HttpEndpoint;
  HttpProtocolIpv6: HttpProtocolIpv6;
  InstanceMetadataTags: InstanceMetadataTags;
}

/** The options a new instance starts with when nothing is configured (the EC2 API's defaults). */
export const DEFAULT_OPTIONS: Readonly<InstanceMetadataOptions> = Object.freeze({
  State: OptionsState.Applied,
  HttpTokens: HttpTokens.Optional,
  HttpPutResponseHopLimit: 1,
  HttpEndpoint: HttpEndpoint.Enabled,
  HttpProtocolIpv6: HttpProtocolIpv6.Disabled,
  InstanceMetadataTags: InstanceMetadataTags.Disabled,
});

/** Request parameter names of modify-instance-metadata-options, mapped to their response fields. */
export const MODIFY_PARAMETERS = {
  'http-endpoint': 'HttpEndpoint',
  'http-tokens': 'HttpTokens',
  'http-put-response-hop-limit': 'HttpPutResponseHopLimit',
  'instance-metadata-tags': 'InstanceMetadataTags',
} as const;
export type ModifyParameter = keyof typeof MODIFY_PARAMETERS;

/** True when `v` is one of the values of the const object `values`. */
export function isOneOf<T extends Record<string, string>>(values: T, v: unknown): v is T[keyof T] {
  return typeof v === 'string' && (Object.values(values) as unknown[]).includes(v);
}

/** True when `n` is a valid hop limit. */
export function isValidHopLimit(n: unknown): n is number {
  return typeof n === 'number' && Number.isInteger(n) && n >= HOP_LIMIT_MIN && n <= HOP_LIMIT_MAX;
}
