// The management endpoint: modify-instance-metadata-options and describe, as JSON over HTTP, on its own
// listener (never the metadata port, so nothing on the instance can change its own options).
//   POST /modify-instance-metadata-options   {"instance-id": ..., "http-tokens": ..., ...} → 200 options | 400 error
//   GET  /instances/<instance-id>/metadata-options                                         → 200 options | 400 error
//   GET  /                                       the console form (HTML), which posts the same operation form-encoded
//   GET  /healthz                                                                            → 200 ok
// JSON bodies must say `Content-Type: application/json` (browsers cannot send that cross-site without a
// preflight we never answer); form posts must come from this endpoint's own origin. Both close the door on
// a web page changing the options through the operator's browser.
import express, { type Express, type Request, type Response } from 'express';
import type { Logger } from 'pino';
import type { InstanceRegistry } from './instance-registry.js';
import { ApiErrorCode, parseModifyRequest, type ApiError } from './modify-request.js';
import { renderConsoleForm } from './console-form.js';
import { MODIFY_PATH } from './manage-paths.js';

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

/** Creates the management app over the registry. */
export function createManageApp(deps: { registry: InstanceRegistry; logger: Logger }): Express {
  const { registry, logger } = deps;
  const app = express();
  app.disable('x-powered-by');
  app.use(express.json({ limit: '16kb', strict: false, type: 'application/json' }));
  app.use(express.urlencoded({ limit: '16kb', extended: false, type: 'application/x-www-form-urlencoded' }));

  app.get('/', (_req, res) => {
    res.type('text/html').send(renderConsoleForm(registry.ids()));
  });

  app.get('/healthz', (_req, res) => {
    res.type('text/plain').send('ok');
  });

  app.post(MODIFY_PATH, (req: Request, res: Response) => {
    let body: unknown = req.body;
    if (hasType(req, 'application/x-www-form-urlencoded')) {
      const origin = req.headers.origin;
      if (origin !== undefined && origin !== `http://${req.headers.host ?? ''}`) {
        const message = `form posts from another origin (${origin}) are refused`;
        return sendApiErrors(res, 403, [{ code: ApiErrorCode.InvalidRequest, message }]);
      }
      body = dropEmptyFormFields(body);
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
