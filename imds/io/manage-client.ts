// HTTP client of the management endpoint, used by `rtctl imds modify-instance-metadata-options`.
import type { ApiErrorBody } from '../manage-app.js';
import { MODIFY_PATH } from '../manage-paths.js';
import type { MetadataOptionsResponse } from '../instance-registry.js';

/** Outcome of a call: the options, an API error, or a transport failure. */
export type ManageCallResult =
  | { kind: 'ok'; response: MetadataOptionsResponse }
  | { kind: 'api-error'; status: number; body: ApiErrorBody }
  | { kind: 'transport-error'; message: string };

function isApiErrorBody(v: unknown): v is ApiErrorBody {
  if (typeof v !== 'object' || v === null) return false;
  const e = (v as { Error?: unknown }).Error;
  return typeof e === 'object' && e !== null && typeof (e as { Code?: unknown }).Code === 'string';
}

/** Sends modify-instance-metadata-options to the management endpoint at `endpoint` (e.g. http://127.0.0.1:9180). */
export async function callModifyInstanceMetadataOptions(
  endpoint: string,
  body: Record<string, string | number>,
  timeoutMs = 10000,
): Promise<ManageCallResult> {
  let url: URL;
  try {
    url = new URL(MODIFY_PATH, endpoint.endsWith('/') ? endpoint : `${endpoint}/`);
  } catch {
    return { kind: 'transport-error', message: `invalid endpoint URL: ${endpoint}` };
  }
  try {
    const res = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
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
    if (res.ok) return { kind: 'ok', response: json as MetadataOptionsResponse };
    if (isApiErrorBody(json)) return { kind: 'api-error', status: res.status, body: json };
    return { kind: 'transport-error', message: `${res.status} from ${url.href}` };
  } catch (err) {
    const e = err instanceof Error ? err : new Error(String(err));
    const cause = e.cause instanceof Error ? `: ${e.cause.message}` : '';
    return { kind: 'transport-error', message: `${url.href}: ${e.message}${cause}` };
  }
}
