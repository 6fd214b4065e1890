// A stand-in Kubernetes API server on loopback for tests (no real API server can run here): it answers list
// requests with empty lists, holds watches open, and records every request as the RBAC attributes the real
// API server would check (verb, API group, resource).
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import * as k8s from '@kubernetes/client-node';

/** A request as RBAC sees it. */
export interface RecordedCall {
  verb: string;
  group: string;
  resource: string;
  path: string;
}

/** The stand-in server. */
export interface RecordingApiServer {
  url: string;
  calls: RecordedCall[];
  kubeConfig(): k8s.KubeConfig;
  close(): Promise<void>;
}

/** RBAC attributes of a request path (`/api/v1/...` or `/apis/<group>/<version>/...`). */
export function attributesOf(method: string, rawUrl: string): RecordedCall {
  const url = new URL(rawUrl, 'http://x');
  const parts = url.pathname.split('/').filter((p) => p !== '');
  const [root, ...rest] = parts;
  const group = root === 'api' ? '' : (rest.shift() ?? '');
  rest.shift(); // version
  if (rest[0] === 'namespaces' && rest.length > 2) rest.splice(0, 2);
  const [resource = '', name, sub] = rest;
  const watch = url.searchParams.get('watch') === 'true';
  const verbs: Record<string, string> = { POST: 'create', PUT: 'update', PATCH: 'patch', DELETE: 'delete' };
  const verb = verbs[method] ?? (watch ? 'watch' : name === undefined ? 'list' : 'get');
  return { verb, group, resource: sub === undefined ? resource : `${resource}/${sub}`, path: url.pathname };
}

/** Starts the stand-in on 127.0.0.1. */
export async function startRecordingApiServer(): Promise<RecordingApiServer> {
  const calls: RecordedCall[] = [];
  const server: Server = createServer((req, res) => {
    calls.push(attributesOf(req.method ?? 'GET', req.url ?? '/'));
    if (new URL(req.url ?? '/', 'http://x').searchParams.get('watch') === 'true') {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.flushHeaders();
      return;
    }
    res
      .writeHead(200, { 'content-type': 'application/json' })
      .end(JSON.stringify({ kind: 'List', apiVersion: 'v1', metadata: { resourceVersion: '1' }, items: [] }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    calls,
    kubeConfig() {
      const kc = new k8s.KubeConfig();
      kc.loadFromOptions({
        clusters: [{ name: 'stand-in', server: url, skipTLSVerify: true }],
        users: [{ name: 'u', token: 'test' }],
        contexts: [{ name: 'c', cluster: 'stand-in', user: 'u' }],
        currentContext: 'c',
      });
      return kc;
    },
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
