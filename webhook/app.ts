// The webhook's express application: POST /validate (AdmissionReview v1), /healthz, /readyz, /metrics.
// Bad bodies answer 400 (413 when over the bound, 415 when not JSON) with a reason; a body whose structure is
// past the bounds JSON.parse can handle quickly (json-shape.ts) is denied without being parsed; a throwing rule
// answers 500 with the uid logged; nothing a request sends can stop the process or hold it for long.
import express, { type NextFunction, type Request, type Response } from 'express';
import type { Logger } from 'pino';
import { AdmissionCode } from '../compiler/diagnostics/codes/admission.js';
import { ADMISSION_API_VERSION, createReviewParser, createReviewResponse } from './admission-review.js';
import { combineDecisions, renderDecision } from './decision.js';
import { toError } from './error-value.js';
import { DEFAULT_JSON_SHAPE_LIMITS, measureJsonShape, type JsonShapeLimits } from './json-shape.js';
import { RequestResult, type WebhookMetrics } from './metrics.js';
import type { AdmissionRule } from './rules/rule.js';

/** The API server's own bound on request bodies: 3 MiB. */
export const MAX_BODY_BYTES = 3 * 1024 * 1024;

/** What the application needs; everything is passed in. */
export interface WebhookAppOptions {
  rules: readonly AdmissionRule[];
  logger: Logger;
  metrics: WebhookMetrics;
  /** Kinds reported by name in metrics; any other kind is counted as `other` (bounded label values). */
  knownKinds: ReadonlySet<string>;
  /** False while starting or draining: /readyz answers 503. */
  isReady: () => boolean;
  /** True while draining: responses ask the client to close its connection. */
  isDraining?: () => boolean;
  bodyLimitBytes?: number;
  /** Structure bounds checked before parsing; DEFAULT_JSON_SHAPE_LIMITS when absent. */
  shapeLimits?: JsonShapeLimits;
}

interface HttpError {
  status?: unknown;
  type?: unknown;
  message?: unknown;
}

function failureStatus(code: number, reason: string, message: string): Record<string, unknown> {
  return { apiVersion: 'v1', kind: 'Status', status: 'Failure', code, reason, message };
}

/** Creates the express application. */
export function createWebhookApp(options: WebhookAppOptions): express.Express {
  const { rules, logger, metrics, knownKinds, isReady } = options;
  const isDraining = options.isDraining ?? ((): boolean => false);
  const parseReview = createReviewParser();
  const app = express();
  app.disable('x-powered-by');
  app.disable('etag');
  app.set('query parser', false);

  app.use((_req: Request, res: Response, next: NextFunction) => {
    if (isDraining()) res.setHeader('Connection', 'close');
    next();
  });

  app.get('/healthz', (_req: Request, res: Response) => {
    res.type('text/plain').send('ok');
  });
  app.get('/readyz', (_req: Request, res: Response) => {
    const ready = isReady() && !isDraining();
    res
      .status(ready ? 200 : 503)
      .type('text/plain')
      .send(ready ? 'ok' : 'not ready');
  });
  app.get('/metrics', async (_req: Request, res: Response) => {
    res.type(metrics.registry.contentType).send(await metrics.registry.metrics());
  });

  const shapeLimits = options.shapeLimits ?? DEFAULT_JSON_SHAPE_LIMITS;
  // Raw bytes (gzip and deflate inflated within the same bound): the structure is measured before parsing.
  const readBody = express.raw({ limit: options.bodyLimitBytes ?? MAX_BODY_BYTES, type: () => true });
  const badRequest = (res: Response, reason: string): void => {
    metrics.requests.inc({ kind: 'unknown', result: RequestResult.BadRequest });
    res.status(400).json(failureStatus(400, 'BadRequest', `${AdmissionCode.MalformedReview} ${reason}`));
  };
  // The API server sends application/json; anything else is not a review (and is not read).
  const requireJson = (req: Request, res: Response, next: NextFunction): void => {
    const type = req.headers['content-type'];
    if (typeof type === 'string' && /^application\/json\s*(;|$)/i.test(type)) {
      next();
      return;
    }
    metrics.requests.inc({ kind: 'unknown', result: RequestResult.BadRequest });
    res
      .status(415)
      .json(
        failureStatus(
          415,
          'UnsupportedMediaType',
          `${AdmissionCode.UnsupportedMediaType} content type ${JSON.stringify((type ?? '').slice(0, 100))} is not supported; send application/json`,
        ),
      );
  };

  app.post('/validate', requireJson, readBody, (req: Request, res: Response) => {
    const started = process.hrtime.bigint();
    const bytes: unknown = req.body;
    if (!Buffer.isBuffer(bytes) || bytes.length === 0) {
      badRequest(res, 'body: expected an AdmissionReview object');
      return;
    }
    const shape = measureJsonShape(bytes, shapeLimits);
    if (!shape.ok) {
      if (shape.apiVersion === ADMISSION_API_VERSION && shape.uid !== undefined && shape.uid !== '') {
        // A review of an object nobody writes: denied without parsing it.
        metrics.requests.inc({ kind: 'other', result: RequestResult.Denied });
        res.json(
          createReviewResponse(
            renderDecision(shape.uid.slice(0, 256), {
              allowed: false,
              errors: [
                {
                  code: AdmissionCode.ObjectTooComplex,
                  path: '.',
                  message: `${shape.reason}; the webhook decides on objects within these bounds only`,
                },
              ],
              warnings: [],
            }),
          ),
        );
        return;
      }
      badRequest(res, `body: ${shape.reason}`);
      return;
    }
    let body: unknown;
    try {
      body = JSON.parse(bytes.toString('utf8'));
    } catch {
      badRequest(res, 'body is not valid JSON');
      return;
    }
    const parsed = parseReview(body);
    if (!parsed.ok) {
      badRequest(res, parsed.reason);
      return;
    }
    const { request } = parsed;
    const kind = knownKinds.has(request.kind.kind) ? request.kind.kind : 'other';
    let result: RequestResult;
    try {
      const decision = combineDecisions(rules.map((rule) => rule.decide(request)));
      result = decision.allowed ? RequestResult.Allowed : RequestResult.Denied;
      res.json(createReviewResponse(renderDecision(request.uid, decision)));
    } catch (err) {
      logger.error({ uid: request.uid, kind: request.kind.kind, err: toError(err) }, 'admission failed');
      result = RequestResult.Error;
      res
        .status(500)
        .json(failureStatus(500, 'InternalError', `internal error evaluating request ${request.uid}`));
    }
    metrics.requests.inc({ kind, result });
    metrics.latency.observe({ kind }, Number(process.hrtime.bigint() - started) / 1e9);
  });

  app.use((_req: Request, res: Response) => {
    res.status(404).json(failureStatus(404, 'NotFound', 'not found'));
  });

  // Errors of the body parser (size, syntax, encoding) and anything unexpected.
  app.use((err: unknown, req: Request, res: Response, _next: NextFunction) => {
    const e = (typeof err === 'object' && err !== null ? err : {}) as HttpError;
    const status = typeof e.status === 'number' && e.status >= 400 && e.status < 500 ? e.status : 500;
    if (status === 500) {
      logger.error({ path: req.path, err: toError(err) }, 'request failed');
    }
    metrics.requests.inc({
      kind: 'unknown',
      result: status === 500 ? RequestResult.Error : RequestResult.BadRequest,
    });
    if (res.headersSent) return;
    // Fixed texts only: a parser's or zlib's own message is not echoed.
    const [reason, why] =
      e.type === 'entity.too.large'
        ? ['RequestEntityTooLarge', `body larger than ${options.bodyLimitBytes ?? MAX_BODY_BYTES} bytes`]
        : e.type === 'encoding.unsupported'
          ? ['UnsupportedMediaType', 'content encoding not supported; send identity, gzip or deflate']
          : status === 500
            ? ['InternalError', 'internal error']
            : ['BadRequest', 'the body could not be read (truncated, or not valid gzip or deflate)'];
    const prefix = status === 500 ? '' : `${AdmissionCode.MalformedReview} `;
    res.status(status).json(failureStatus(status, reason, `${prefix}${why}`));
  });
  return app;
}
