// The installer's narrow door to a Kubernetes API server: kubeconfig, credentials and TLS from
// @kubernetes/client-node, requests over node:https with a deadline. Four operations (server-side apply, get,
// list, delete); failures become KubeError values that name the server, the verb, the resource and the
// namespace, so the CLI can say what went wrong without a stack.
import http from 'node:http';
import https from 'node:https';
import * as k8s from '@kubernetes/client-node';
import {
  collectionPath,
  objectPath,
  resourceTypeOf,
  type ObjectRef,
  type ResourceType,
} from '../cluster/kube-resources.js';

/** A Kubernetes object as JSON. */
export type KubeObject = Record<string, unknown> & {
  metadata?: {
    name?: string;
    namespace?: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
    resourceVersion?: string;
    generation?: number;
    deletionTimestamp?: string;
  };
};

/** The field manager of every server-side apply. */
export const FIELD_MANAGER = 'rtctl';
/** Content type of a server-side apply. */
export const APPLY_CONTENT_TYPE = 'application/apply-patch+yaml';

/** Why a request failed. */
export const KubeErrorReason = {
  /** The kubeconfig cannot be read, or lacks the context or cluster. */
  Config: 'config',
  /** No answer from the server (connection refused, DNS, TLS, timeout). */
  Unreachable: 'unreachable',
  /** 401. */
  Unauthorized: 'unauthorized',
  /** 403: RBAC. */
  Forbidden: 'forbidden',
  /** 404 of a collection: the server does not serve this resource (a CRD or cert-manager missing). */
  NotServed: 'not-served',
  /** 409 on apply: fields owned by another manager. */
  Conflict: 'conflict',
  /** Any other status. */
  Status: 'status',
} as const;
export type KubeErrorReason = (typeof KubeErrorReason)[keyof typeof KubeErrorReason];

/** A failed request, described for a person. */
export class KubeError extends Error {
  constructor(
    readonly reason: KubeErrorReason,
    message: string,
    readonly code?: number,
  ) {
    super(message);
    this.name = 'KubeError';
  }
}

/** The operations the installer uses. */
export interface KubeClient {
  /** The API server URL (for messages). */
  readonly server: string;
  /** Server-side apply (creates or updates); `force` takes over fields other managers own. */
  apply(object: KubeObject, force: boolean): Promise<{ object: KubeObject; created: boolean }>;
  /** The object, or undefined when it does not exist. */
  get(ref: ObjectRef): Promise<KubeObject | undefined>;
  list(type: ResourceType, namespace?: string, labelSelector?: string): Promise<KubeObject[]>;
  /** True when deleted, false when it did not exist. */
  delete(ref: ObjectRef): Promise<boolean>;
}

/** Where the kubeconfig comes from. */
export interface KubeConfigSource {
  /** A kubeconfig file (else KUBECONFIG, ~/.kube/config, or the in-cluster service account). */
  kubeconfig?: string;
  context?: string;
}

/** Loads a kubeconfig as kubectl would; a usage error names the file or context. */
export function loadKubeConfig(source: KubeConfigSource): k8s.KubeConfig {
  const kc = new k8s.KubeConfig();
  try {
    if (source.kubeconfig !== undefined) kc.loadFromFile(source.kubeconfig);
    else kc.loadFromDefault();
  } catch (err) {
    throw new KubeError(
      KubeErrorReason.Config,
      `cannot read the kubeconfig${source.kubeconfig === undefined ? '' : ` ${source.kubeconfig}`}: ${messageOf(err)}`,
    );
  }
  if (source.context !== undefined) {
    if (kc.getContextObject(source.context) === null)
      throw new KubeError(
        KubeErrorReason.Config,
        `kubeconfig has no context ${JSON.stringify(source.context)}`,
      );
    kc.setCurrentContext(source.context);
  }
  const cluster = kc.getCurrentCluster();
  if (cluster === null)
    throw new KubeError(KubeErrorReason.Config, 'no cluster in the kubeconfig (current context unset?)');
  // With nothing to load, client-node falls back to an unnamed cluster at http://localhost:8080.
  if (
    source.kubeconfig === undefined &&
    cluster.name === 'cluster' &&
    cluster.server === 'http://localhost:8080'
  )
    throw new KubeError(
      KubeErrorReason.Config,
      'no kubeconfig found: set KUBECONFIG or --kubeconfig, create ~/.kube/config, or run inside a pod',
    );
  return kc;
}

function messageOf(err: unknown): string {
  if (err instanceof Error) {
    const code = (err as NodeJS.ErrnoException).code;
    return code !== undefined && !err.message.includes(code) ? `${code}: ${err.message}` : err.message;
  }
  return String(err);
}

/** Per-request deadline: a server that accepts and never answers does not hang the installer. */
const REQUEST_TIMEOUT_MS = 30_000;
/** Largest response body read (the largest list the installer makes is the node reports). */
const MAX_RESPONSE_BYTES = 64 * 1024 * 1024;

interface Answer {
  status: number;
  body: unknown;
}

/** The RBAC description of a request, for a 403 message. */
interface Attempt {
  verb: string;
  what: string;
}

/** A client over the kubeconfig's current context. */
export function createKubeClient(kc: k8s.KubeConfig, timeoutMs = REQUEST_TIMEOUT_MS): KubeClient {
  const server = kc.getCurrentCluster()?.server ?? '';

  async function send(
    method: string,
    path: string,
    attempt: Attempt,
    body?: { type: string; text: string },
  ): Promise<Answer> {
    // The server URL may carry a path prefix (a proxy); keep it.
    const base = new URL(server);
    const url = new URL(`${base.origin}${base.pathname.replace(/\/$/, '')}${path}`);
    const options: https.RequestOptions = {
      method,
      headers: {
        Accept: 'application/json',
        ...(body === undefined ? {} : { 'Content-Type': body.type }),
      },
    };
    await kc.applyToHTTPSOptions(options);
    const plain = url.protocol === 'http:';
    if (plain) delete options.agent;
    return await new Promise<Answer>((resolve, reject) => {
      const req = (plain ? http : https).request(url, options, (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (c: Buffer) => {
          size += c.length;
          if (size > MAX_RESPONSE_BYTES) {
            req.destroy(new Error(`response larger than ${MAX_RESPONSE_BYTES} bytes`));
            return;
          }
          chunks.push(c);
        });
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let parsed: unknown = text;
          try {
            parsed = text === '' ? undefined : (JSON.parse(text) as unknown);
          } catch {
            // Not JSON (a proxy's error page): keep the text for the message.
          }
          resolve({ status: res.statusCode ?? 0, body: parsed });
        });
        res.on('error', reject);
      });
      req.setTimeout(timeoutMs, () => req.destroy(new Error(`no answer within ${timeoutMs / 1000} s`)));
      req.on('error', (err) =>
        reject(
          new KubeError(
            KubeErrorReason.Unreachable,
            `cannot reach the cluster at ${server} (${attempt.verb} ${attempt.what}): ${messageOf(err)}`,
          ),
        ),
      );
      req.end(body?.text);
    });
  }

  function statusMessage(a: Answer): string {
    const b = a.body as { message?: unknown } | string | undefined;
    if (typeof b === 'string') return b.slice(0, 500);
    return typeof b?.message === 'string' ? b.message : `HTTP ${a.status}`;
  }

  function failure(a: Answer, attempt: Attempt): KubeError {
    const msg = statusMessage(a);
    switch (a.status) {
      case 401:
        return new KubeError(
          KubeErrorReason.Unauthorized,
          `the cluster at ${server} did not accept the credentials (${attempt.verb} ${attempt.what}): ${msg}`,
          401,
        );
      case 403:
        return new KubeError(
          KubeErrorReason.Forbidden,
          `permission denied: cannot ${attempt.verb} ${attempt.what} (${msg}); the installing user needs the permissions listed in docs/install.md`,
          403,
        );
      case 409:
        return new KubeError(
          KubeErrorReason.Conflict,
          `conflict on ${attempt.verb} ${attempt.what}: ${msg}; another field manager owns these fields (rerun with --force-conflicts to take them over)`,
          409,
        );
      default:
        return new KubeError(
          KubeErrorReason.Status,
          `${attempt.verb} ${attempt.what} failed: HTTP ${a.status}: ${msg}`,
          a.status,
        );
    }
  }

  function whatOf(type: ResourceType, namespace: string | undefined, name?: string): string {
    const res = type.group === '' ? type.resource : `${type.resource}.${type.group}`;
    const scope = type.namespaced ? `in namespace ${namespace ?? '(all)'}` : '(cluster-wide)';
    return `${res}${name === undefined ? '' : ` ${JSON.stringify(name)}`} ${scope}`;
  }

  function notServed(type: ResourceType, attempt: Attempt, a: Answer): KubeError {
    const gv = type.group === '' ? type.version : `${type.group}/${type.version}`;
    const hint = type.group === 'cert-manager.io' ? ' (is cert-manager installed?)' : '';
    return new KubeError(
      KubeErrorReason.NotServed,
      `${attempt.verb} ${attempt.what}: the server does not serve ${type.resource} in ${gv}${hint}: ${statusMessage(a)}`,
      404,
    );
  }

  return {
    server,
    async apply(object, force) {
      const meta = object.metadata ?? {};
      const kind = String(object['kind']);
      const type = resourceTypeOf(kind);
      const ref: ObjectRef = {
        type,
        name: meta.name ?? '',
        ...(type.namespaced && meta.namespace !== undefined ? { namespace: meta.namespace } : {}),
      };
      const attempt = { verb: 'patch', what: whatOf(type, ref.namespace, ref.name) };
      const query = `?fieldManager=${FIELD_MANAGER}${force ? '&force=true' : ''}`;
      const a = await send('PATCH', `${objectPath(ref)}${query}`, attempt, {
        type: APPLY_CONTENT_TYPE,
        // JSON is YAML; sorted nowhere: the builders' key order is stable, so the body is byte-identical per run.
        text: JSON.stringify(object),
      });
      if (a.status === 200 || a.status === 201)
        return { object: a.body as KubeObject, created: a.status === 201 };
      if (a.status === 404) throw notServed(type, attempt, a);
      throw failure(a, attempt);
    },
    async get(ref) {
      const attempt = { verb: 'get', what: whatOf(ref.type, ref.namespace, ref.name) };
      const a = await send('GET', objectPath(ref), attempt);
      if (a.status === 200) return a.body as KubeObject;
      if (a.status === 404) return undefined;
      throw failure(a, attempt);
    },
    async list(type, namespace, labelSelector) {
      const path = collectionPath(type, namespace);
      const attempt = { verb: 'list', what: whatOf(type, namespace), path };
      const q = labelSelector === undefined ? '' : `?labelSelector=${encodeURIComponent(labelSelector)}`;
      const a = await send('GET', `${path}${q}`, attempt);
      if (a.status === 200) {
        const items = (a.body as { items?: unknown } | undefined)?.items;
        return Array.isArray(items) ? (items as KubeObject[]) : [];
      }
      if (a.status === 404) throw notServed(type, attempt, a);
      throw failure(a, attempt);
    },
    async delete(ref) {
      const attempt = { verb: 'delete', what: whatOf(ref.type, ref.namespace, ref.name) };
      const a = await send('DELETE', `${objectPath(ref)}?propagationPolicy=Background`, attempt);
      if (a.status === 200 || a.status === 202) return true;
      if (a.status === 404) return false;
      throw failure(a, attempt);
    },
  };
}
