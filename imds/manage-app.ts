// The management endpoint: modify-instance-metadata-options and describe, as JSON over HTTP, on its own
// listener (never the metadata port, so nothing on the instance can change its own options).
//   POST /modify-instance-metadata-options   {"instance-id": ..., "http-tokens": ..., ...} → 200 options | 400 error
//   GET  /instances/<instance-id>/metadata-options                                         → 200 options | 400 error
//   GET  /                                       the console form (HTML), which posts the same operation form-encoded
//   POST /instances/<instance-id>/triggers    {"type": "spot-interruption", "afterSeconds": 30, ...}  → 200 | 400
//   GET  /identity-certificate                   PEM of the certificate that verifies identity documents
//   GET  /healthz                                                                            → 200 ok
// Every request must name this endpoint by address (Host an IP literal or localhost: a DNS-rebinding page
// has its own name there) and, when it carries an Origin, come from this endpoint's own origin; otherwise 403.
// Operations that read or change an instance need the management token (written 0600 at start by
// `rtctl imds serve`): `Authorization: Bearer <token>`, or the `manage-token` field of the console form;
// otherwise 401. JSON bodies must say `Content-Type: application/json` (browsers cannot send that, nor an
// Authorization header, cross-site without a preflight we never answer).
import { timingSafeEqual } from 'node:crypto';
import { isIP } from 'node:net';
import express, { type Express, type NextFunction, type Request, type Response } from 'express';
import type { Logger } from 'pino';
import type { InstanceRegistry } from './instance-registry.js';
import { ApiErrorCode, parseModifyRequest, type ApiError } from './modify-request.js';
import { renderConsoleForm } from './console-form.js';
import { parseTrigger } from './instance-events.js';
import { formatIsoSeconds } from './clock.js';
import { CERTIFICATE_PATH, MANAGE_TOKEN_FIELD, MODIFY_PATH } from './manage-paths.js';

export { MODIFY_PATH };

/** The error body of the management API. */
export interface ApiErrorBody {
  Error: { Code: string; Message: string; Parameter?: string };
  Errors: { Code: string; Message: string; Parameter?: string }[];
}

function toBody(errors: readonly ApiError[]): ApiErrorBody {
  const items = errors.map((e) => ({
    Code: e.code,
    Message: e.message,
    ...(e.parameter === undefined ? {} : { Parameter: e.parameter }),
  }));
  const first = items[0] ?? { Code: ApiErrorCode.InvalidRequest, Message: 'invalid request' };
  return {
    Error: { ...first, Message: items.map((i) => i.Message).join(' ') || first.Message },
    Errors: items,
  };
}

function sendApiErrors(res: Response, status: number, errors: readonly ApiError[]): void {
  res.status(status).json(toBody(errors));
}

/** True when the request body has the given media type. */
function hasType(req: Request, type: string): boolean {
  return typeof req.is(type) === 'string';
}

/** A console form leaves unchanged options empty: those are not given, rather than invalid. */
function dropEmptyFormFields(body: unknown): unknown {
  if (typeof body !== 'object' || body === null) return body;
  return Object.fromEntries(Object.entries(body as Record<string, unknown>).filter(([, v]) => v !== ''));
}

/** The host part of a Host header (`[::1]:9180` → `::1`, `127.0.0.1:9180` → `127.0.0.1`), or undefined. */
function hostOf(header: string | undefined): string | undefined {
  if (header === undefined) return undefined;
  const m = /^(?:\[([^\]]+)\]|([^:[\]]+))(?::[0-9]{1,5})?$/.exec(header);
  if (m === null) return undefined;
  return (m[1] ?? m[2] ?? '').toLowerCase();
}

/** True when the Host header names this endpoint by address: an IP literal or localhost, never a DNS name. */
export function isAcceptedHost(header: string | undefined): boolean {
  const host = hostOf(header);
  return host !== undefined && (host === 'localhost' || isIP(host) !== 0);
}

function sameSecret(given: string, expected: string): boolean {
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

/** The token a request carries: the Authorization bearer, or the console form's field. */
function presentedToken(req: Request): string | undefined {
  const auth = req.headers.authorization;
  if (typeof auth === 'string') {
    const m = /^Bearer ([A-Za-z0-9_-]{1,256})$/.exec(auth);
    return m?.[1] ?? '';
  }
  const body: unknown = req.body;
  if (typeof body === 'object' && body !== null) {
    const field = (body as Record<string, unknown>)[MANAGE_TOKEN_FIELD];
    if (typeof field === 'string') return field;
  }
  return undefined;
}

/** What the management app needs. */
export interface ManageAppDeps {
  registry: InstanceRegistry;
  logger: Logger;
  /** The secret every operation on an instance must present. */
  manageToken: string;
}

/** Creates the management app over the registry. */
export function createManageApp(deps: ManageAppDeps): Express {
  const { registry, logger, manageToken } = deps;
  const app = express();
  app.disable('x-powered-by');
  app.set('query parser', false);

  // Request target, Host and Origin come first: a cross-site or rebinding request learns nothing.
  app.use((req: Request, res: Response, next: NextFunction) => {
    if (!req.url.startsWith('/') || req.url.startsWith('//')) {
      const message = 'the request target must be a path';
      return sendApiErrors(res, 400, [{ code: ApiErrorCode.InvalidRequest, message }]);
    }
    const host = req.headers.host;
    if (!isAcceptedHost(host)) {
      const message = 'the Host header must name this endpoint by IP address or localhost';
      return sendApiErrors(res, 403, [{ code: ApiErrorCode.InvalidRequest, message }]);
    }
    const origin = req.headers.origin;
    const site = req.headers['sec-fetch-site'];
    if ((origin !== undefined && origin !== `http://${host ?? ''}`) || site === 'cross-site') {
      const message = `requests from another origin (${origin ?? String(site)}) are refused`;
      return sendApiErrors(res, 403, [{ code: ApiErrorCode.InvalidRequest, message }]);
    }
    next();
  });
  app.use(express.json({ limit: '16kb', strict: false, type: 'application/json' }));
  app.use(express.urlencoded({ limit: '16kb', extended: false, type: 'application/x-www-form-urlencoded' }));

  app.get('/', (_req, res) => {
    res.type('text/html').send(renderConsoleForm(registry.ids()));
  });

  app.get('/healthz', (_req, res) => {
    res.type('text/plain').send('ok');
  });

  app.get(CERTIFICATE_PATH, (_req, res) => {
    res.type('text/plain').send(registry.identityCertificate());
  });

  // Everything below reads or changes an instance: the management token is required.
  app.use((req: Request, res: Response, next: NextFunction) => {
    const given = presentedToken(req);
    if (given !== undefined && sameSecret(given, manageToken)) return next();
    res.setHeader('WWW-Authenticate', 'Bearer realm="rtctl imds management"');
    const message =
      given === undefined
        ? 'the management token is required (Authorization: Bearer <token>; rtctl imds serve wrote it to its --manage-token-file)'
        : 'the management token is not valid';
    sendApiErrors(res, 401, [{ code: ApiErrorCode.AuthFailure, message }]);
  });

  app.post(MODIFY_PATH, (req: Request, res: Response) => {
    let body: unknown = req.body;
    if (hasType(req, 'application/x-www-form-urlencoded')) {
      body = dropEmptyFormFields(body);
      if (typeof body === 'object' && body !== null) {
        body = Object.fromEntries(
          Object.entries(body as Record<string, unknown>).filter(([k]) => k !== MANAGE_TOKEN_FIELD),
        );
      }
    } else if (!hasType(req, 'application/json')) {
      const message = 'send the request as application/json (or form-encoded from the console form)';
      return sendApiErrors(res, 415, [{ code: ApiErrorCode.InvalidRequest, message }]);
    }
    const parsed = parseModifyRequest(body);
    if (!parsed.ok) return sendApiErrors(res, 400, parsed.errors);
    const result = registry.modify(parsed.request);
    if (!result.ok) return sendApiErrors(res, 400, [result.error]);
    logger.info(
      { instanceId: parsed.request.instanceId, changes: parsed.request.changes },
      'metadata options modified',
    );
    res.status(200).json(result.response);
  });

  app.get('/instances/:id/metadata-options', (req: Request, res: Response) => {
    const id = String(req.params['id']);
    const described = registry.describe(id);
    if (described === undefined) {
      return sendApiErrors(res, 400, [
        {
          code: ApiErrorCode.InstanceIdNotFound,
          parameter: 'instance-id',
          message: `The instance ID '${id}' does not exist.`,
        },
      ]);
    }
    res.status(200).json(described);
  });

  app.post('/instances/:id/triggers', (req: Request, res: Response) => {
    if (!hasType(req, 'application/json')) {
      const message = 'send the trigger as application/json';
      return sendApiErrors(res, 415, [{ code: ApiErrorCode.InvalidRequest, message }]);
    }
    const id = String(req.params['id']);
    const parsed = parseTrigger(req.body);
    if (!parsed.ok) {
      return sendApiErrors(
        res,
        400,
        parsed.errors.map((e) => ({
          code: ApiErrorCode.InvalidParameterValue,
          parameter: e.pointer.replace(/^\//, '') || 'body',
          message: `${e.pointer === '' ? 'the trigger' : e.pointer.slice(1)}: ${e.message}`,
        })),
      );
    }
    const result = registry.trigger(id, parsed.trigger);
    if (!result.ok) return sendApiErrors(res, 400, [result.error]);
    logger.info({ instanceId: id, trigger: parsed.trigger }, 'trigger registered');
    res
      .status(200)
      .json({ InstanceId: id, Trigger: parsed.trigger, FiresAt: formatIsoSeconds(result.firesAt) });
  });

  app.use((req: Request, res: Response) => {
    sendApiErrors(res, 404, [
      { code: ApiErrorCode.InvalidRequest, message: `no operation at ${req.method} ${req.path}` },
    ]);
  });

  app.use((err: unknown, _req: Request, res: Response, _next: (e?: unknown) => void) => {
    const status = (err as { status?: unknown }).status;
    if (typeof status === 'number' && status >= 400 && status < 500) {
      const type = (err as { type?: unknown }).type;
      const message =
        status === 413
          ? 'the request body is too large (16 KiB at most)'
          : type === 'entity.parse.failed'
            ? 'the request body is not valid JSON'
            : 'the request is malformed';
      return sendApiErrors(res, status, [{ code: ApiErrorCode.InvalidRequest, message }]);
    }
    const e = err instanceof Error ? err : new Error(String(err));
    logger.error({ err: { message: e.message, stack: e.stack } }, 'management request failed');
    if (!res.headersSent)
      sendApiErrors(res, 500, [{ code: ApiErrorCode.InvalidRequest, message: 'internal error' }]);
  });
  return app;
}
