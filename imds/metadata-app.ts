// The metadata service of one instance as an express app: PUT /latest/api/token, GET /latest/meta-data/...,
// GET /latest/user-data, under the effective options of the instance at the time of each request.
//
// Order of decisions for a request: a request target that is not a path (`*`, `http://...`) → 400;
// http-endpoint disabled → 403; the token path takes PUT only (405),
// other paths GET/HEAD only (405); a token PUT needs a valid TTL header (400) and no X-Forwarded-For (403);
// a GET with a token header needs a valid token (401) and a GET without one is refused (401) when tokens are
// required; unknown paths → 404. The token response leaves with IP TTL = http-put-response-hop-limit and
// closes its connection, so a client more hops away never sees it while GETs are unaffected.
import express, { type Express, type Request, type Response } from 'express';
import type { Logger } from 'pino';
import {
  HttpEndpoint,
  HttpTokens,
  TOKEN_HEADER,
  TOKEN_TTL_HEADER,
  TOKEN_TTL_MAX_SECONDS,
  TOKEN_TTL_MIN_SECONDS,
} from '../compiler/instance-metadata-options/options.js';
import { renderErrorPage } from './error-page.js';
import type { InstanceRecord } from './instance-registry.js';
import {
  buildDynamicTree,
  buildMetadataTree,
  renderMetadataNode,
  resolveMetadataPath,
} from './metadata-tree.js';
import type { SocketTtl } from './socket-ttl.js';

/** Path of the token operation. */
export const TOKEN_PATH = '/latest/api/token';

/** What the app needs. */
export interface MetadataAppDeps {
  instance: InstanceRecord;
  logger: Logger;
  /** Sets the TTL of token responses; undefined when the addon is unavailable (hop limit not enforced). */
  socketTtl: SocketTtl | undefined;
}

function sendError(res: Response, status: number, headers: Record<string, string> = {}): void {
  res.status(status);
  for (const [k, v] of Object.entries(headers)) res.setHeader(k, v);
  res.type('text/html').send(renderErrorPage(status));
}

function sendText(res: Response, body: string): void {
  res.status(200).type('text/plain').send(body);
}

/** Parses the TTL header: digits only, within bounds. */
export function parseTokenTtl(header: string | string[] | undefined): number | undefined {
  if (typeof header !== 'string' || !/^[0-9]{1,9}$/.test(header)) return undefined;
  const ttl = Number(header);
  return ttl >= TOKEN_TTL_MIN_SECONDS && ttl <= TOKEN_TTL_MAX_SECONDS ? ttl : undefined;
}

/** The client a token is counted against: its address (IPv4-mapped IPv6 written as IPv4). */
function clientOf(req: Request): string {
  const address = req.socket.remoteAddress ?? '';
  return address.startsWith('::ffff:') ? address.slice(7) : address;
}

/** True for an origin-form request target (`/path`); `*` and absolute URLs are not paths of this server. */
export function isOriginForm(url: string): boolean {
  return url.startsWith('/') && !url.startsWith('//');
}

/** Splits a request path into decoded segments, or undefined when it cannot be decoded. */
function splitPath(path: string): string[] | undefined {
  const trimmed = path.endsWith('/') ? path.slice(0, -1) : path;
  if (trimmed === '') return [];
  const raw = trimmed.split('/').slice(1);
  try {
    return raw.map((s) => decodeURIComponent(s));
  } catch {
    return undefined;
  }
}

/** Creates the metadata app of one instance. */
export function createMetadataApp(deps: MetadataAppDeps): Express {
  const { instance, logger, socketTtl } = deps;
  const app = express();
  app.disable('x-powered-by');
  app.disable('etag');
  app.set('query parser', false);

  function handleToken(req: Request, res: Response, hopLimit: number): void {
    if (req.method !== 'PUT') return sendError(res, 405, { Allow: 'PUT' });
    if (req.headers['x-forwarded-for'] !== undefined) return sendError(res, 403);
    const ttl = parseTokenTtl(req.headers[TOKEN_TTL_HEADER.toLowerCase()]);
    if (ttl === undefined) return sendError(res, 400);
    const issued = instance.tokens.issue(ttl, clientOf(req));
    if (!issued.ok) return sendError(res, 429, { 'Retry-After': '60' });
    const token = issued.token;
    if (socketTtl !== undefined) {
      const set = socketTtl.set(req.socket, hopLimit);
      if (!set.ok) logger.warn({ err: set.error }, 'could not set the hop limit on a token response');
    }
    res.setHeader(TOKEN_TTL_HEADER, String(ttl));
    // The connection keeps the low TTL (retransmissions too), so it ends with this response.
    res.setHeader('Connection', 'close');
    sendText(res, token);
  }

  function handleRead(req: Request, res: Response): void {
    const segments = splitPath(req.path);
    if (segments === undefined) return sendError(res, 404);
    const [first, second, ...rest] = segments;
    if (first === undefined) return sendText(res, 'latest');
    if (first !== 'latest') return sendError(res, 404);
    const userData = instance.config.userData;
    if (second === undefined)
      return sendText(res, ['dynamic', 'meta-data', ...(userData === null ? [] : ['user-data'])].join('\n'));
    if (second === 'user-data' && rest.length === 0) {
      return userData === null ? sendError(res, 404) : sendText(res, userData);
    }
    if (second === 'dynamic') {
      const node = resolveMetadataPath(buildDynamicTree(instance.identity), rest);
      return node === undefined ? sendError(res, 404) : sendText(res, renderMetadataNode(node));
    }
    if (second !== 'meta-data') return sendError(res, 404);
    const tree = buildMetadataTree({
      config: instance.config,
      options: instance.effective(),
      roleCredentials: instance.roleCredentials,
      computeCredentials: instance.computeCredentials,
      events: instance.events,
    });
    const node = resolveMetadataPath(tree, rest);
    if (node === undefined) return sendError(res, 404);
    sendText(res, renderMetadataNode(node));
  }

  app.use((req: Request, res: Response) => {
    res.on('finish', () =>
      logger.debug({ method: req.method, path: req.path, status: res.statusCode }, 'metadata request'),
    );
    if (!isOriginForm(req.url)) return sendError(res, 400);
    const options = instance.effective();
    if (options.HttpEndpoint === HttpEndpoint.Disabled) return sendError(res, 403);
    if (req.path === TOKEN_PATH) return handleToken(req, res, options.HttpPutResponseHopLimit);
    if (req.method !== 'GET' && req.method !== 'HEAD') return sendError(res, 405, { Allow: 'GET, HEAD' });
    const token = req.headers[TOKEN_HEADER.toLowerCase()];
    if (token !== undefined) {
      if (typeof token !== 'string' || !instance.tokens.isValid(token)) return sendError(res, 401);
    } else if (options.HttpTokens === HttpTokens.Required) {
      return sendError(res, 401);
    }
    handleRead(req, res);
  });

  // Last resort: a bug in a handler answers 500 without internals; the process keeps serving.
  app.use((err: unknown, req: Request, res: Response, _next: (e?: unknown) => void) => {
    const e = err instanceof Error ? err : new Error(String(err));
    const status = (err as { status?: unknown }).status;
    if (typeof status === 'number' && status >= 400 && status < 500) return sendError(res, status);
    logger.error({ err: { message: e.message, stack: e.stack }, path: req.path }, 'metadata request failed');
    if (!res.headersSent) sendError(res, 500);
  });
  return app;
}
