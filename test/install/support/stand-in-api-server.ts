// A stateful stand-in Kubernetes API server over HTTPS on loopback, for the install, verify and uninstall tests
// (no real API server can run here). It implements the part of the real semantics the installer relies on:
// server-side apply (PATCH application/apply-patch+yaml with a fieldManager: creates, or replaces the applied
// content; field ownership is reduced to one rule: an object whose managedFields name another manager answers
// 409 to a changing apply without force=true, and belongs to the applier after a forced one), resourceVersion bumped only when the content changes, generation bumped
// on spec changes, get/list (label selectors of the form k=v)/delete, namespaced objects refused in a missing
// namespace, namespace and CRD deletion cascading, CRDs Established after they were read once, workload status
// as an instant controller would write it (ready or not, per the test), cert-manager issuing the Secret of a
// Certificate, 403 injection. Stand-in enforcers (one per node given) write their node report ConfigMap when
// the DaemonSet appears and report `released: true` when the release ConfigMap appears, as the real enforcers do.
// Every request is recorded with its RBAC attributes (recording-api-server.ts) and body.
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { writeFile } from 'node:fs/promises';
import { parse } from 'yaml';
import {
  NODE_STATUS_DATA_KEY,
  NODE_STATUS_LABEL,
  NODE_STATUS_VERSION,
  nodeStatusObjectName,
  RELEASE_CONFIGMAP_NAME,
  type NodeStatusReport,
} from '../../../compiler/model/node-status.js';
import { generateWebhookCertificates } from '../../../webhook/certs.js';
import { attributesOf, type RecordedCall } from './recording-api-server.js';

/** A request as the stand-in saw it. */
export interface StandInRequest extends RecordedCall {
  method: string;
  url: string;
  contentType: string | undefined;
  body: string;
  status: number;
}

type Obj = Record<string, unknown> & {
  metadata: Record<string, unknown> & {
    name: string;
    namespace?: string | undefined;
    labels?: Record<string, string>;
  };
};

/** A stand-in enforcer on one node. */
export interface StandInEnforcer {
  node: string;
  plane: string;
  /** Reports released when asked (default true). */
  releases?: boolean;
  /** Writes no report at all. */
  silent?: boolean;
}

/** Options of the stand-in. */
export interface StandInOptions {
  /** Nodes of the cluster, each with a stand-in enforcer. */
  enforcers?: StandInEnforcer[];
  /** Serve cert-manager.io/v1 (and issue the Secret of each Certificate). Default false. */
  certManager?: boolean;
}

/** A 403 the stand-in answers for matching requests. */
export interface Forbidden {
  verb: string;
  resource: string;
  namespace?: string;
}

/** The stand-in. */
export interface StandInApiServer {
  url: string;
  requests: StandInRequest[];
  /** Workload controllers report ready (default true). */
  workloadsReady: boolean;
  forbidden: Forbidden[];
  /** A kubeconfig file (CA data, token) pointing at the stand-in. */
  kubeconfigPath: string;
  /** Objects by key `group/resource/namespace/name`. */
  objects(): Map<string, Obj>;
  get(resource: string, name: string, namespace?: string): Obj | undefined;
  /** Puts an object as if created by someone else (group from apiVersion). */
  seed(resource: string, object: Record<string, unknown>): void;
  close(): Promise<void>;
}

const CORE_NAMESPACED = new Set(['configmaps', 'secrets', 'services', 'serviceaccounts', 'pods']);

interface Target {
  group: string;
  version: string;
  resource: string;
  namespace: string | undefined;
  name: string | undefined;
  sub: string | undefined;
}

function targetOf(pathname: string): Target | undefined {
  const parts = pathname
    .split('/')
    .filter((p) => p !== '')
    .map(decodeURIComponent);
  const root = parts.shift();
  if (root !== 'api' && root !== 'apis') return undefined;
  const group = root === 'api' ? '' : (parts.shift() ?? '');
  const version = parts.shift() ?? '';
  let namespace: string | undefined;
  if (parts[0] === 'namespaces' && parts.length >= 3) {
    namespace = parts[1];
    parts.splice(0, 2);
  }
  const [resource = '', name, sub] = parts;
  return { group, version, resource, namespace, name, sub };
}

function keyOf(group: string, resource: string, namespace: string | undefined, name: string): string {
  return `${group}/${resource}/${namespace ?? ''}/${name}`;
}

function groupOf(apiVersion: unknown): string {
  const s = String(apiVersion);
  return s.includes('/') ? (s.split('/')[0] ?? '') : '';
}

function status(code: number, reason: string, message: string): string {
  return JSON.stringify({ kind: 'Status', apiVersion: 'v1', status: 'Failure', reason, message, code });
}

/** Content that decides whether an apply changed the object: everything but server-set metadata and status. */
function contentOf(o: Record<string, unknown>): string {
  const rest: Record<string, unknown> = { ...o };
  delete rest['status'];
  const m = { ...(o['metadata'] as Record<string, unknown>) };
  for (const k of ['resourceVersion', 'uid', 'creationTimestamp', 'generation', 'managedFields']) delete m[k];
  return JSON.stringify({ ...rest, metadata: m });
}

function specOf(o: Record<string, unknown>): string {
  return JSON.stringify(o['spec'] ?? o['webhooks'] ?? o['rules'] ?? o['data'] ?? null);
}

/** Starts the stand-in on 127.0.0.1 with a fresh CA; writes its kubeconfig to `kubeconfigPath`. */
export async function startStandInApiServer(
  kubeconfigPath: string,
  options: StandInOptions = {},
): Promise<StandInApiServer> {
  const tls = generateWebhookCertificates({ dnsNames: ['localhost'], ipAddresses: ['127.0.0.1'] });
  const store = new Map<string, Obj>();
  const crdReads = new Map<string, number>();
  const requests: StandInRequest[] = [];
  let version = 1000;
  let uid = 0;
  const enforcers = options.enforcers ?? [];
  let pendingRelease: string | undefined;

  const put = (group: string, resource: string, o: Obj): void => {
    store.set(keyOf(group, resource, o.metadata.namespace, o.metadata.name), o);
  };

  const state = {
    workloadsReady: true,
    forbidden: [] as Forbidden[],
  };

  function served(t: Target): boolean {
    if (t.group === 'cert-manager.io') return options.certManager === true;
    if (t.group === 'security.runtime.com')
      return [...store.values()].some(
        (o) =>
          o['kind'] === 'CustomResourceDefinition' &&
          (o['spec'] as { group?: string; names?: { plural?: string } }).group === t.group &&
          (o['spec'] as { names?: { plural?: string } }).names?.plural === t.resource,
      );
    return true;
  }

  function report(e: StandInEnforcer, namespace: string, released: boolean): Obj {
    const r: NodeStatusReport = {
      version: NODE_STATUS_VERSION,
      node: e.node,
      plane: e.plane,
      rtctlVersion: '0.1.0',
      updatedAt: '2026-01-01T00:00:00.000Z',
      released,
      policies: [],
    };
    return {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: {
        name: nodeStatusObjectName(e.node),
        namespace,
        labels: { [NODE_STATUS_LABEL]: 'true' },
        resourceVersion: String(++version),
      },
      data: { [NODE_STATUS_DATA_KEY]: JSON.stringify(r) },
    };
  }

  /** What the cluster's controllers and the stand-in enforcers do after a change. */
  function react(t: Target, o: Obj, created: boolean): void {
    if (o['kind'] === 'DaemonSet' && created)
      for (const e of enforcers)
        if (e.silent !== true) put('', 'configmaps', report(e, o.metadata.namespace ?? '', false));
    // The enforcers release after the installer has read their reports once more (not at once, as no real
    // node does): an uninstall that does not wait deletes the DaemonSet under unreleased nodes.
    if (o['kind'] === 'ConfigMap' && o.metadata.name === RELEASE_CONFIGMAP_NAME)
      pendingRelease = o.metadata.namespace ?? '';
    if (o['kind'] === 'Certificate' && t.group === 'cert-manager.io') {
      const secretName = (o['spec'] as { secretName?: string }).secretName ?? '';
      put('', 'secrets', {
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: {
          name: secretName,
          namespace: o.metadata.namespace ?? '',
          resourceVersion: String(++version),
        },
        type: 'kubernetes.io/tls',
        data: { 'tls.crt': 'eA==', 'tls.key': 'eA==', 'ca.crt': 'eA==' },
      });
    }
  }

  /** The object as a GET returns it (status written by the stand-in controllers). */
  function view(t: Target, o: Obj, read = false): Obj {
    const gen = (o.metadata['generation'] as number | undefined) ?? 1;
    if (o['kind'] === 'CustomResourceDefinition') {
      const k = keyOf(t.group, t.resource, undefined, o.metadata.name);
      const reads = crdReads.get(k) ?? 0;
      if (read) crdReads.set(k, reads + 1);
      // Established from the second read on: an installer that does not wait would miss it.
      return reads === 0 ? o : { ...o, status: { conditions: [{ type: 'Established', status: 'True' }] } };
    }
    if (o['kind'] === 'DaemonSet') {
      const n = state.workloadsReady ? enforcers.length : 0;
      return {
        ...o,
        status: {
          observedGeneration: gen,
          desiredNumberScheduled: enforcers.length,
          numberReady: n,
          updatedNumberScheduled: n,
          numberAvailable: n,
        },
      };
    }
    if (o['kind'] === 'Deployment') {
      const replicas = (o['spec'] as { replicas?: number }).replicas ?? 1;
      const n = state.workloadsReady ? replicas : 0;
      return {
        ...o,
        status: {
          observedGeneration: gen,
          replicas,
          readyReplicas: n,
          updatedReplicas: n,
          availableReplicas: n,
        },
      };
    }
    return o;
  }

  function matches(o: Obj, selector: string | null): boolean {
    if (selector === null || selector === '') return true;
    return selector.split(',').every((term) => {
      const [k = '', v] = term.split('=');
      return v === undefined ? o.metadata.labels?.[k] !== undefined : o.metadata.labels?.[k] === v;
    });
  }

  function handle(method: string, url: URL, contentType: string | undefined, body: string): [number, string] {
    const t = targetOf(url.pathname);
    if (t === undefined)
      return [404, status(404, 'NotFound', 'the server could not find the requested resource')];
    const attrs = attributesOf(method, url.pathname + url.search);
    const denied = state.forbidden.find(
      (f) =>
        f.verb === attrs.verb &&
        f.resource === attrs.resource &&
        (f.namespace === undefined || f.namespace === t.namespace),
    );
    if (denied !== undefined) {
      const where = t.namespace === undefined ? 'at the cluster scope' : `in the namespace "${t.namespace}"`;
      return [
        403,
        status(
          403,
          'Forbidden',
          `${t.resource}${t.name === undefined ? '' : ` "${t.name}"`} is forbidden: User "installer" cannot ${attrs.verb} resource "${t.resource}" in API group "${t.group}" ${where}`,
        ),
      ];
    }
    if (!served(t)) return [404, status(404, 'NotFound', 'the server could not find the requested resource')];
    const namespaced = t.namespace !== undefined;
    if (method === 'GET' && t.name === undefined) {
      const releaseNow = t.resource === 'configmaps' && pendingRelease !== undefined;
      const items = [...store.entries()]
        .filter(([k]) => k.startsWith(`${t.group}/${t.resource}/${namespaced ? `${t.namespace}/` : ''}`))
        .map(([, o]) => o)
        .filter((o) => matches(o, url.searchParams.get('labelSelector')))
        .map((o) => view(t, o, true));
      if (releaseNow) {
        for (const e of enforcers)
          if (e.silent !== true && e.releases !== false)
            put('', 'configmaps', report(e, pendingRelease ?? '', true));
        pendingRelease = undefined;
      }
      return [
        200,
        JSON.stringify({
          kind: 'List',
          apiVersion: 'v1',
          metadata: { resourceVersion: String(version) },
          items,
        }),
      ];
    }
    const name = t.name ?? '';
    const key = keyOf(t.group, t.resource, t.namespace, name);
    const existing = store.get(key);
    if (method === 'GET') {
      return existing === undefined
        ? [404, status(404, 'NotFound', `${t.resource} "${name}" not found`)]
        : [200, JSON.stringify(view(t, existing, true))];
    }
    if (method === 'DELETE') {
      if (existing === undefined) return [404, status(404, 'NotFound', `${t.resource} "${name}" not found`)];
      store.delete(key);
      if (t.resource === 'namespaces')
        for (const k of [...store.keys()]) if (store.get(k)?.metadata.namespace === name) store.delete(k);
      if (t.resource === 'customresourcedefinitions') {
        const spec = existing['spec'] as { group?: string; names?: { plural?: string } };
        for (const k of [...store.keys()])
          if (k.startsWith(`${spec.group}/${spec.names?.plural}/`)) store.delete(k);
      }
      return [200, status(200, '', '').replace('"Failure"', '"Success"')];
    }
    if (method !== 'PATCH')
      return [405, status(405, 'MethodNotAllowed', `${method} is not supported by the stand-in`)];
    if (contentType !== 'application/apply-patch+yaml')
      return [
        415,
        status(
          415,
          'UnsupportedMediaType',
          `the stand-in supports only server-side apply, not ${contentType}`,
        ),
      ];
    if (url.searchParams.get('fieldManager') === null)
      return [400, status(400, 'BadRequest', 'fieldManager is required for apply requests')];
    let applied: Obj;
    try {
      applied = parse(body) as Obj;
    } catch (err) {
      return [400, status(400, 'BadRequest', `body is not YAML: ${String(err)}`)];
    }
    if (
      applied?.metadata?.name !== name ||
      typeof applied['kind'] !== 'string' ||
      groupOf(applied['apiVersion']) !== t.group
    )
      return [400, status(400, 'BadRequest', 'the body does not match the URL (name, kind, group)')];
    if (namespaced && (applied.metadata.namespace ?? t.namespace) !== t.namespace)
      return [400, status(400, 'BadRequest', 'the namespace of the body does not match that of the URL')];
    if (namespaced && store.get(keyOf('', 'namespaces', undefined, t.namespace ?? '')) === undefined)
      return [404, status(404, 'NotFound', `namespaces "${t.namespace}" not found`)];
    if (!namespaced && CORE_NAMESPACED.has(t.resource))
      return [404, status(404, 'NotFound', 'the server could not find the requested resource')];
    if (existing === undefined) {
      const created: Obj = {
        ...applied,
        metadata: {
          ...applied.metadata,
          ...(namespaced ? { namespace: t.namespace } : {}),
          uid: `uid-${++uid}`,
          resourceVersion: String(++version),
          generation: 1,
        },
      };
      store.set(key, created);
      react(t, created, true);
      return [201, JSON.stringify(view(t, created))];
    }
    const managers = (existing.metadata['managedFields'] as Array<{ manager?: string }> | undefined) ?? [];
    const manager = url.searchParams.get('fieldManager') ?? '';
    const others = managers.map((m) => m.manager ?? '').filter((m) => m !== manager);
    const forced = url.searchParams.get('force') === 'true';
    const changes = (o: Obj): boolean =>
      contentOf({ ...o, metadata: { ...o.metadata, managedFields: undefined } }) !==
      contentOf({ ...existing, metadata: { ...existing.metadata, managedFields: undefined } });
    const next: Obj = {
      ...applied,
      ...(existing['status'] === undefined ? {} : { status: existing['status'] }),
      metadata: {
        ...applied.metadata,
        ...(namespaced ? { namespace: t.namespace } : {}),
        uid: existing.metadata['uid'],
        resourceVersion: existing.metadata['resourceVersion'],
        generation: existing.metadata['generation'],
        ...(others.length > 0 && !forced ? { managedFields: managers } : {}),
      },
    };
    if (others.length > 0 && !forced && changes(next))
      return [
        409,
        status(
          409,
          'Conflict',
          `Apply failed with 1 conflict: conflict with "${others[0]}": .metadata.labels`,
        ),
      ];
    if (contentOf(next) !== contentOf(existing)) {
      next.metadata['resourceVersion'] = String(++version);
      if (specOf(next) !== specOf(existing))
        next.metadata['generation'] = ((existing.metadata['generation'] as number | undefined) ?? 1) + 1;
      store.set(key, next);
      react(t, next, false);
      return [200, JSON.stringify(view(t, next))];
    }
    return [200, JSON.stringify(view(t, existing))];
  }

  const server: Server = createServer({ cert: tls.tlsCert, key: tls.tlsKey }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const url = new URL(req.url ?? '/', 'https://x');
      const method = req.method ?? 'GET';
      const contentType = req.headers['content-type'];
      const [code, text] =
        req.headers.authorization === 'Bearer stand-in-token'
          ? handle(method, url, contentType, body)
          : [401, status(401, 'Unauthorized', 'Unauthorized')];
      requests.push({
        ...attributesOf(method, req.url ?? '/'),
        method,
        url: req.url ?? '/',
        contentType,
        body,
        status: code,
      });
      res.writeHead(code, { 'content-type': 'application/json' }).end(text);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
  await writeFile(
    kubeconfigPath,
    [
      'apiVersion: v1',
      'kind: Config',
      'clusters:',
      '  - name: stand-in',
      '    cluster:',
      `      server: ${url}`,
      `      certificate-authority-data: ${Buffer.from(tls.caCert).toString('base64')}`,
      'users:',
      '  - name: installer',
      '    user:',
      '      token: stand-in-token',
      'contexts:',
      '  - name: stand-in',
      '    context: { cluster: stand-in, user: installer }',
      'current-context: stand-in',
      '',
    ].join('\n'),
  );
  for (const e of enforcers)
    put('', 'nodes', { apiVersion: 'v1', kind: 'Node', metadata: { name: e.node, resourceVersion: '1' } });
  return {
    url,
    requests,
    get workloadsReady() {
      return state.workloadsReady;
    },
    set workloadsReady(v: boolean) {
      state.workloadsReady = v;
    },
    get forbidden() {
      return state.forbidden;
    },
    set forbidden(v: Forbidden[]) {
      state.forbidden = v;
    },
    kubeconfigPath,
    objects: () => store,
    get: (resource, name, namespace) => {
      for (const [k, o] of store) if (k.endsWith(`/${resource}/${namespace ?? ''}/${name}`)) return o;
      return undefined;
    },
    seed(resource, object) {
      const o = object as Obj;
      put(groupOf(o['apiVersion']), resource, {
        ...o,
        metadata: { ...o.metadata, uid: `uid-${++uid}`, resourceVersion: String(++version), generation: 1 },
      });
    },
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
