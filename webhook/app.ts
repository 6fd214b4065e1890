// The webhook's express application: POST /validate (AdmissionReview v1), /healthz, /readyz, /metrics.
// Bad bodies answer 400 (413 when over the bound) with a reason; a throwing rule answers 500 with the uid
// logged; nothing a request sends can stop the process.
import express, { type NextFunction, type Request, type Response } from 'express';
import type { Logger } from 'pino';
import { AdmissionCode } from '../compiler/diagnostics/codes/admission.js';
import { createReviewParser, createReviewResponse } from './admission-review.js';
import { combineDecisions, renderDecision } from './decision.js';
import { toError } from './error-value.js';
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

  const parseJson = express.json({
    limit: options.bodyLimitBytes ?? MAX_BODY_BYTES,
    type: () => true,
    strict: true,
  });

  app.post('/validate', parseJson, (req: Request, res: Response) => {
    const started = process.hrtime.bigint();
    const body: unknown = req.body;
    const parsed = parseReview(body);
    if (!parsed.ok) {
      metrics.requests.inc({ kind: 'unknown', result: RequestResult.BadRequest });
      res
        .status(400)
        .json(failureStatus(400, 'BadRequest', `${AdmissionCode.MalformedReview} ${parsed.reason}`));
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
    const reason =
      e.type === 'entity.too.large'
        ? `body larger than ${options.bodyLimitBytes ?? MAX_BODY_BYTES} bytes`
        : e.type === 'entity.parse.failed'
          ? 'body is not valid JSON'
          : status === 500
            ? 'internal error'
            : typeof e.message === 'string'
              ? e.message
              : 'bad request';
    const prefix = status === 500 ? '' : `${AdmissionCode.MalformedReview} `;
    res
      .status(status)
      .json(failureStatus(status, status === 500 ? 'InternalError' : 'BadRequest', `${prefix}${reason}`));
  });
  return app;
}
