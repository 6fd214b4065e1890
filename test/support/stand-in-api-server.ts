// A stand-in Kubernetes API server on loopback for tests (no real API server can run here). It keeps objects in
// memory and implements the requests rtctl's clients make: list (label and field selectors), watch (from a
// resourceVersion, replaying later events), get, create, replace (optimistic concurrency on resourceVersion),
// delete, server-side apply (PATCH application/apply-patch+yaml with a fieldManager) and JSON merge patch, on
// objects and on their status subresource. metadata.generation moves on spec changes of custom resources,
// as the real server does for CRDs with a status subresource. Every request is recorded (method, path, query,
// content type, body, RBAC attributes) so tests assert the exact requests. Not implemented: field ownership
// conflicts of server-side apply (one manager per field here), set-based selectors, protobuf.
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import * as k8s from '@kubernetes/client-node';
import { parse as parseYaml } from 'yaml';
import { attributesOf, type RecordedCall } from '../install/support/recording-api-server.js';

/** An object as stored. */
export interface StoredObject {
  apiVersion?: string;
  kind?: string;
  metadata: {
    name: string;
    namespace?: string;
    uid?: string;
    resourceVersion?: string;
    generation?: number;
    labels?: Record<string, string>;
    [k: string]: unknown;
  };
  [k: string]: unknown;
}

/** One request as received. */
export interface StandInRequest {
  method: string;
  path: string;
  query: Record<string, string>;
  contentType: string;
  body: unknown;
  /** The RBAC attributes of the request (verb, group, resource[/subresource]). */
  call: RecordedCall;
  /** The HTTP status answered. */
  status: number;
  /** The bearer token the client sent (tests give each client its own: kubeConfig(token)). */
  user: string;
}

/** Where an object lives: `<group>/<version>/<resource>`, namespace, name. */
interface Address {
  /** `v1/configmaps`, `coordination.k8s.io/v1/leases`. */
  collection: string;
  group: string;
  namespace?: string;
  name?: string;
  subresource?: string;
}

interface WatchEvent {
  rv: number;
  collection: string;
  type: 'ADDED' | 'MODIFIED' | 'DELETED';
  object: StoredObject;
}

/** The stand-in server. */
export interface StandInApiServer {
  url: string;
  requests: StandInRequest[];
  /** A kubeconfig for this server; `token` tells clients apart in `requests` (default `test`). */
  kubeConfig(token?: string): k8s.KubeConfig;
  /** Creates or replaces an object as a user would (events to watchers, generation on spec changes). */
  put(collection: string, object: StoredObject): StoredObject;
  remove(collection: string, namespace: string | undefined, name: string): void;
  get(collection: string, namespace: string | undefined, name: string): StoredObject | undefined;
  list(collection: string): StoredObject[];
  /** Requests matching a predicate. */
  find(predicate: (r: StandInRequest) => boolean): StandInRequest[];
  /** Answers every request matching the predicate with this status until cleared (undefined clears). */
  failWhen(
    predicate: ((r: { method: string; path: string; user: string }) => boolean) | undefined,
    code?: number,
  ): void;
  close(): Promise<void>;
}

const CUSTOM_GROUPS = new Set(['security.runtime.com']);
/** Events kept for watches that start from an older resourceVersion. */
const EVENT_LOG = 10000;

function addressOf(pathname: string): Address | undefined {
  const parts = pathname.split('/').filter((p) => p !== '');
  let group: string;
  let rest: string[];
  if (parts[0] === 'api' && parts[1] !== undefined) {
    group = '';
    rest = parts.slice(2);
  } else if (parts[0] === 'apis' && parts[1] !== undefined && parts[2] !== undefined) {
    group = parts[1];
    rest = parts.slice(3);
  } else return undefined;
  const version = group === '' ? (parts[1] ?? 'v1') : (parts[2] ?? 'v1');
  const prefix = group === '' ? version : `${group}/${version}`;
  let namespace: string | undefined;
  if (rest[0] === 'namespaces' && rest.length >= 3) {
    namespace = rest[1];
    rest = rest.slice(2);
  }
  const [resource, name, subresource] = rest;
  if (resource === undefined) return undefined;
  return {
    collection: `${prefix}/${resource}`,
    group,
    ...(namespace === undefined ? {} : { namespace }),
    ...(name === undefined ? {} : { name }),
    ...(subresource === undefined ? {} : { subresource }),
  };
}

function keyOf(namespace: string | undefined, name: string): string {
  return `${namespace ?? ''}/${name}`;
}

function matchesLabels(selector: string | undefined, labels: Record<string, string> | undefined): boolean {
  if (selector === undefined || selector === '') return true;
  return selector.split(',').every((term) => {
    const [k = '', v] = term.split('=');
    if (v === undefined) return labels?.[k.trim()] !== undefined;
    return labels?.[k.trim()] === v.trim();
  });
}

function fieldValue(o: StoredObject, path: string): unknown {
  let v: unknown = o;
  for (const p of path.split('.'))
    v = typeof v === 'object' && v !== null ? (v as Record<string, unknown>)[p] : undefined;
  return v;
}

function matchesFields(selector: string | undefined, o: StoredObject): boolean {
  if (selector === undefined || selector === '') return true;
  return selector.split(',').every((term) => {
    const [k = '', v = ''] = term.split('=');
    const found = fieldValue(o, k.trim());
    return (typeof found === 'string' ? found : JSON.stringify(found ?? '')) === v.trim();
  });
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** RFC 7386 merge (lists replaced, null deletes): used for JSON merge patch and for apply. */
function merge(base: unknown, patch: unknown): unknown {
  if (!isRecord(patch)) return patch;
  const out: Record<string, unknown> = isRecord(base) ? { ...base } : {};
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k];
    else out[k] = merge(out[k], v);
  }
  return out;
}

function status(code: number, reason: string, message: string): Record<string, unknown> {
  return { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', reason, message, code };
}

function sameContent(a: StoredObject, b: StoredObject): boolean {
  const strip = (o: StoredObject): unknown => ({
    ...o,
    metadata: { ...o.metadata, resourceVersion: undefined, managedFields: undefined, generation: undefined },
  });
  return JSON.stringify(strip(a)) === JSON.stringify(strip(b));
}

function userOf(req: IncomingMessage): string {
  return (req.headers.authorization ?? '').replace(/^Bearer /, '');
}

/** Starts the stand-in on 127.0.0.1. */
export async function startStandInApiServer(): Promise<StandInApiServer> {
  const stores = new Map<string, Map<string, StoredObject>>();
  const events: WatchEvent[] = [];
  const watchers = new Set<{
    collection: string;
    namespace?: string;
    labels?: string;
    fields?: string;
    res: ServerResponse;
  }>();
  const requests: StandInRequest[] = [];
  let failure:
    { predicate: (r: { method: string; path: string; user: string }) => boolean; code: number } | undefined;
  let version = 1000;

  const storeOf = (collection: string): Map<string, StoredObject> => {
    let s = stores.get(collection);
    if (s === undefined) {
      s = new Map();
      stores.set(collection, s);
    }
    return s;
  };

  const emit = (collection: string, type: WatchEvent['type'], object: StoredObject): void => {
    const event: WatchEvent = { rv: version, collection, type, object: structuredClone(object) };
    events.push(event);
    if (events.length > EVENT_LOG) events.shift();
    for (const w of watchers) send(w, event);
  };

  const send = (
    w: { collection: string; namespace?: string; labels?: string; fields?: string; res: ServerResponse },
    e: WatchEvent,
  ): void => {
    if (e.collection !== w.collection) return;
    if (w.namespace !== undefined && e.object.metadata.namespace !== w.namespace) return;
    if (!matchesLabels(w.labels, e.object.metadata.labels) || !matchesFields(w.fields, e.object)) return;
    w.res.write(`${JSON.stringify({ type: e.type, object: e.object })}\n`);
  };

  /** Stores a new version of an object (create or update); no event and no new version when nothing changed. */
  const write = (
    collection: string,
    group: string,
    next: StoredObject,
    previous: StoredObject | undefined,
  ): StoredObject => {
    if (previous !== undefined && sameContent(previous, next)) return previous;
    version++;
    const md = next.metadata;
    md.resourceVersion = String(version);
    md.uid = previous?.metadata.uid ?? md.uid ?? randomUUID();
    md['creationTimestamp'] =
      previous?.metadata['creationTimestamp'] ?? new Date().toISOString().slice(0, 19) + 'Z';
    if (CUSTOM_GROUPS.has(group)) {
      const before = previous?.metadata.generation ?? 0;
      const specChanged =
        previous === undefined || JSON.stringify(previous['spec']) !== JSON.stringify(next['spec']);
      md.generation = specChanged ? before + 1 : before;
    }
    storeOf(collection).set(keyOf(md.namespace, md.name), next);
    emit(collection, previous === undefined ? 'ADDED' : 'MODIFIED', next);
    return next;
  };

  const handle = (req: IncomingMessage, res: ServerResponse, raw: string): number => {
    const url = new URL(req.url ?? '/', 'http://x');
    const method = req.method ?? 'GET';
    const answer = (code: number, body: unknown): number => {
      res.writeHead(code, { 'content-type': 'application/json' }).end(JSON.stringify(body));
      return code;
    };
    if (failure?.predicate({ method, path: url.pathname, user: userOf(req) }))
      return answer(failure.code, status(failure.code, 'InternalError', 'injected failure'));
    const a = addressOf(url.pathname);
    if (a === undefined) return answer(404, status(404, 'NotFound', `no route ${url.pathname}`));
    const store = storeOf(a.collection);
    const q = url.searchParams;
    const labels = q.get('labelSelector') ?? undefined;
    const fields = q.get('fieldSelector') ?? undefined;
    if (method === 'GET' && a.name === undefined) {
      const items = [...store.values()]
        .filter((o) => a.namespace === undefined || o.metadata.namespace === a.namespace)
        .filter((o) => matchesLabels(labels, o.metadata.labels) && matchesFields(fields, o))
        .sort((x, y) =>
          keyOf(x.metadata.namespace, x.metadata.name) < keyOf(y.metadata.namespace, y.metadata.name)
            ? -1
            : 1,
        );
      if (q.get('watch') === 'true' || q.get('watch') === '1') {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.flushHeaders();
        const w = {
          collection: a.collection,
          ...(a.namespace === undefined ? {} : { namespace: a.namespace }),
          ...(labels === undefined ? {} : { labels }),
          ...(fields === undefined ? {} : { fields }),
          res,
        };
        const from = Number(q.get('resourceVersion') ?? version);
        for (const e of events) if (e.rv > from) send(w, e);
        watchers.add(w);
        res.on('close', () => watchers.delete(w));
        return 200;
      }
      return answer(200, {
        kind: 'List',
        apiVersion: 'v1',
        metadata: { resourceVersion: String(version) },
        items,
      });
    }
    const body: unknown =
      raw === ''
        ? undefined
        : ((): unknown => {
            try {
              return (req.headers['content-type'] ?? '').includes('yaml') ? parseYaml(raw) : JSON.parse(raw);
            } catch {
              return null;
            }
          })();
    if (method === 'POST') {
      if (!isRecord(body) || !isRecord(body['metadata']) || typeof body['metadata']['name'] !== 'string')
        return answer(400, status(400, 'BadRequest', 'metadata.name required'));
      const object = structuredClone(body) as StoredObject;
      if (a.namespace !== undefined) object.metadata.namespace = a.namespace;
      if (store.has(keyOf(object.metadata.namespace, object.metadata.name)))
        return answer(
          409,
          status(409, 'AlreadyExists', `${a.collection} "${object.metadata.name}" already exists`),
        );
      delete object.metadata.resourceVersion;
      return answer(201, write(a.collection, a.group, object, undefined));
    }
    if (a.name === undefined) return answer(405, status(405, 'MethodNotAllowed', method));
    const key = keyOf(a.namespace, a.name);
    const current = store.get(key);
    if (method === 'GET') {
      if (current === undefined)
        return answer(404, status(404, 'NotFound', `${a.collection} "${a.name}" not found`));
      return answer(200, current);
    }
    if (method === 'DELETE') {
      if (current === undefined)
        return answer(404, status(404, 'NotFound', `${a.collection} "${a.name}" not found`));
      store.delete(key);
      version++;
      emit(a.collection, 'DELETED', {
        ...current,
        metadata: { ...current.metadata, resourceVersion: String(version) },
      });
      return answer(200, status(200, 'Deleted', 'deleted'));
    }
    if (!isRecord(body))
      return answer(400, status(400, 'BadRequest', 'a JSON or YAML object body is required'));
    if (method === 'PUT') {
      if (current === undefined)
        return answer(404, status(404, 'NotFound', `${a.collection} "${a.name}" not found`));
      const rv = isRecord(body['metadata']) ? body['metadata']['resourceVersion'] : undefined;
      if (rv !== undefined && rv !== current.metadata.resourceVersion)
        return answer(
          409,
          status(
            409,
            'Conflict',
            'the object has been modified; please apply your changes to the latest version and try again',
          ),
        );
      const replaced = structuredClone(body) as StoredObject;
      const next: StoredObject =
        a.subresource === 'status'
          ? { ...structuredClone(current), status: replaced['status'] }
          : {
              ...replaced,
              ...(current['status'] === undefined ? {} : { status: current['status'] }),
              metadata: {
                ...replaced.metadata,
                name: a.name,
                ...(a.namespace === undefined ? {} : { namespace: a.namespace }),
              },
            };
      return answer(200, write(a.collection, a.group, next, current));
    }
    if (method === 'PATCH') {
      const type = req.headers['content-type'] ?? '';
      const apply = type.startsWith('application/apply-patch+yaml');
      if (!apply && !type.startsWith('application/merge-patch+json'))
        return answer(415, status(415, 'UnsupportedMediaType', `stand-in: unsupported patch type ${type}`));
      if (apply && (q.get('fieldManager') ?? '') === '')
        return answer(400, status(400, 'BadRequest', 'fieldManager is required for apply patch'));
      if (current === undefined && (!apply || a.subresource !== undefined))
        return answer(404, status(404, 'NotFound', `${a.collection} "${a.name}" not found`));
      const patch = structuredClone(body);
      let next: StoredObject;
      if (a.subresource === 'status') {
        next = {
          ...structuredClone(current as StoredObject),
          status: merge((current as StoredObject)['status'], patch['status']),
        };
      } else {
        const rest = { ...patch };
        delete rest['status'];
        next = merge(structuredClone(current ?? { metadata: { name: a.name } }), rest) as StoredObject;
        next.metadata.name = a.name;
        if (a.namespace !== undefined) next.metadata.namespace = a.namespace;
      }
      if (current?.metadata.resourceVersion !== undefined)
        next.metadata.resourceVersion = current.metadata.resourceVersion;
      const written = write(a.collection, a.group, next, current);
      return answer(current === undefined ? 201 : 200, written);
    }
    return answer(405, status(405, 'MethodNotAllowed', method));
  };

  const server: Server = createServer((req, res) => {
    let raw = '';
    req.setEncoding('utf8');
    req.on('data', (c: string) => (raw += c));
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'http://x');
      const method = req.method ?? 'GET';
      const code = handle(req, res, raw);
      let body: unknown = raw;
      try {
        body = raw === '' ? undefined : JSON.parse(raw);
      } catch {
        // YAML bodies are kept as text.
      }
      requests.push({
        method,
        path: url.pathname,
        query: Object.fromEntries(url.searchParams),
        contentType: req.headers['content-type'] ?? '',
        body,
        call: attributesOf(method, req.url ?? '/'),
        status: code,
        user: userOf(req),
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const groupOf = (collection: string): string =>
    collection.split('/').length === 3 ? (collection.split('/')[0] ?? '') : '';
  return {
    url,
    requests,
    kubeConfig(token = 'test') {
      const kc = new k8s.KubeConfig();
      kc.loadFromOptions({
        clusters: [{ name: 'stand-in', server: url, skipTLSVerify: true }],
        users: [{ name: 'u', token }],
        contexts: [{ name: 'c', cluster: 'stand-in', user: 'u' }],
        currentContext: 'c',
      });
      return kc;
    },
    put(collection, object) {
      const current = storeOf(collection).get(keyOf(object.metadata.namespace, object.metadata.name));
      const next = structuredClone(object);
      if (current !== undefined && next['status'] === undefined && current['status'] !== undefined)
        next['status'] = current['status'];
      return write(collection, groupOf(collection), next, current);
    },
    remove(collection, namespace, name) {
      const store = storeOf(collection);
      const current = store.get(keyOf(namespace, name));
      if (current === undefined) return;
      store.delete(keyOf(namespace, name));
      version++;
      emit(collection, 'DELETED', current);
    },
    get: (collection, namespace, name) => storeOf(collection).get(keyOf(namespace, name)),
    list: (collection) => [...storeOf(collection).values()],
    find: (predicate) => requests.filter(predicate),
    failWhen(predicate, code = 500) {
      failure = predicate === undefined ? undefined : { predicate, code };
    },
    close: () =>
      new Promise((resolve) => {
        for (const w of watchers) w.res.end();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
