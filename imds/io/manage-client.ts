// HTTP client of the management endpoint, used by `rtctl imds modify-instance-metadata-options`,
// `rtctl imds trigger` and `rtctl imds identity-certificate`. Sends the management token as a bearer token.
import type { ApiErrorBody } from '../manage-app.js';
import { CERTIFICATE_PATH, MODIFY_PATH, triggersPath } from '../manage-paths.js';

/** Outcome of a call: the JSON answer, an API error, or a transport failure. */
export type ManageCallResult =
  | { kind: 'ok'; response: unknown }
  | { kind: 'api-error'; status: number; body: ApiErrorBody }
  | { kind: 'transport-error'; message: string };

function isApiErrorBody(v: unknown): v is ApiErrorBody {
  if (typeof v !== 'object' || v === null) return false;
  const e = (v as { Error?: unknown }).Error;
  return typeof e === 'object' && e !== null && typeof (e as { Code?: unknown }).Code === 'string';
}

/** Sends modify-instance-metadata-options to the management endpoint at `endpoint` (e.g. http://127.0.0.1:9180). */
export function callModifyInstanceMetadataOptions(
  endpoint: string,
  token: string,
  body: Record<string, string | number>,
  timeoutMs = 10000,
): Promise<ManageCallResult> {
  return callManage(endpoint, MODIFY_PATH, token, body, timeoutMs);
}

/** Registers a trigger (spot interruption, rebalance, maintenance event, Auto Scaling state) on an instance. */
export function callTrigger(
  endpoint: string,
  token: string,
  instanceId: string,
  body: Record<string, string | number>,
  timeoutMs = 10000,
): Promise<ManageCallResult> {
  return callManage(endpoint, triggersPath(instanceId), token, body, timeoutMs);
}

/** Fetches the identity certificate (PEM). */
export async function fetchIdentityCertificate(
  endpoint: string,
  timeoutMs = 10000,
): Promise<{ ok: true; pem: string } | { ok: false; message: string }> {
  try {
    const url = new URL(CERTIFICATE_PATH, endpoint.endsWith('/') ? endpoint : `${endpoint}/`);
    const res = await fetch(url, { signal: AbortSignal.timeout(timeoutMs) });
    const text = await res.text();
    if (res.ok && text.startsWith('-----BEGIN CERTIFICATE-----')) return { ok: true, pem: text };
    return { ok: false, message: `${res.status} from ${url.href}` };
  } catch (err) {
    const e = err instanceof Error ? err : new Error(String(err));
    const cause = e.cause instanceof Error ? `: ${e.cause.message}` : '';
    return { ok: false, message: `${endpoint}: ${e.message}${cause}` };
  }
}

async function callManage(
  endpoint: string,
  path: string,
  token: string,
  body: Record<string, string | number>,
  timeoutMs: number,
): Promise<ManageCallResult> {
  let url: URL;
  try {
    url = new URL(path.slice(1), endpoint.endsWith('/') ? endpoint : `${endpoint}/`);
  } catch {
    return { kind: 'transport-error', message: `invalid endpoint URL: ${endpoint}` };
  }
  try {
    const res = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(timeoutMs),
    });
    const text = await res.text();
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      return {
        kind: 'transport-error',
        message: `${res.status} with a body that is not JSON from ${url.href}`,
      };
    }
    if (res.ok) return { kind: 'ok', response: json };
    if (isApiErrorBody(json)) return { kind: 'api-error', status: res.status, body: json };
    return { kind: 'transport-error', message: `${res.status} from ${url.href}` };
  } catch (err) {
    const e = err instanceof Error ? err : new Error(String(err));
    const cause = e.cause instanceof Error ? `: ${e.cause.message}` : '';
    return { kind: 'transport-error', message: `${url.href}: ${e.message}${cause}` };
  }
}
