// The webhook's express application: POST /validate (AdmissionReview v1), /healthz, /readyz, /metrics.
// Bad bodies answer 400 (413 when over the bound, 415 when not JSON) with a reason; a body whose structure is
// past the bounds JSON.parse can handle quickly (json-shape.ts) is denied without being parsed; a throwing rule
// answers 500 with the uid logged; nothing a request sends can stop the process or hold it for long.
import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
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

function failureStatus(code: number, reason: string, message: string): string {
  return JSON.stringify({ apiVersion: 'v1', kind: 'Status', status: 'Failure', code, reason, message });
}

/**
 * Writes a JSON answer in one piece: head and body go out in one write (one TLS record) rather than express's
 * header write followed by a Buffer body. Same headers as express's res.json (no ETag, which is disabled).
 */
function sendJson(res: ServerResponse, status: number, body: string): void {
  res.writeHead(status, {
    'Content-Type': 'application/json; charset=utf-8',
    'Content-Length': Buffer.byteLength(body),
  });
  res.end(body);
}

/** The answer to an allowed review without warnings, as text (JSON.stringify of the same object gives it). */
export function allowedReviewText(uid: string): string {
  return `{"apiVersion":"${ADMISSION_API_VERSION}","kind":"AdmissionReview","response":{"uid":${JSON.stringify(uid)},"allowed":true,"status":{"code":200,"message":"allowed"}}}`;
}

/** The POST /validate path, without a trailing slash; any query (the API server sends `?timeout=…`). */
function isValidatePath(url: string | undefined): boolean {
  return url !== undefined && url.startsWith('/validate') && (url.length === 9 || url.charCodeAt(9) === 0x3f);
}

/** The application and the handler of POST /validate, which share every step but the dispatch. */
interface WebhookParts {
  app: express.Express;
  /** Answers POST /validate on a plain request (no express on the way). */
  validate: (req: IncomingMessage, res: ServerResponse) => void;
}

function createWebhookParts(options: WebhookAppOptions): WebhookParts {
  const { rules, logger, metrics, knownKinds, isReady } = options;
  const isDraining = options.isDraining ?? ((): boolean => false);
  const parseReview = createReviewParser();
  const bodyLimit = options.bodyLimitBytes ?? MAX_BODY_BYTES;
  const shapeLimits = options.shapeLimits ?? DEFAULT_JSON_SHAPE_LIMITS;
  // Raw bytes (gzip and deflate inflated within the same bound): the structure is measured before parsing.
  const readBody = express.raw({ limit: bodyLimit, type: () => true });

  const badRequest = (res: ServerResponse, reason: string): void => {
    metrics.requests.inc({ kind: 'unknown', result: RequestResult.BadRequest });
    sendJson(res, 400, failureStatus(400, 'BadRequest', `${AdmissionCode.MalformedReview} ${reason}`));
  };
  // The API server sends application/json; anything else is not a review (and is not read).
  const isJson = (req: IncomingMessage, res: ServerResponse): boolean => {
    const type = req.headers['content-type'];
    if (typeof type === 'string' && /^application\/json\s*(;|$)/i.test(type)) return true;
    metrics.requests.inc({ kind: 'unknown', result: RequestResult.BadRequest });
    sendJson(
      res,
      415,
      failureStatus(
        415,
        'UnsupportedMediaType',
        `${AdmissionCode.UnsupportedMediaType} content type ${JSON.stringify((type ?? '').slice(0, 100))} is not supported; send application/json`,
      ),
    );
    return false;
  };

  /** Answers a review body (the bytes read). */
  const review = (res: ServerResponse, bytes: unknown): void => {
    const started = process.hrtime.bigint();
    if (!Buffer.isBuffer(bytes) || bytes.length === 0) {
      badRequest(res, 'body: expected an AdmissionReview object');
      return;
    }
    const shape = measureJsonShape(bytes, shapeLimits);
    if (!shape.ok) {
      if (shape.apiVersion === ADMISSION_API_VERSION && shape.uid !== undefined && shape.uid !== '') {
        // A review of an object nobody writes: denied without parsing it.
        metrics.requests.inc({ kind: 'other', result: RequestResult.Denied });
        sendJson(
          res,
          200,
          JSON.stringify(
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
      sendJson(
        res,
        200,
        decision.allowed && decision.warnings.length === 0
          ? allowedReviewText(request.uid)
          : JSON.stringify(createReviewResponse(renderDecision(request.uid, decision))),
      );
    } catch (err) {
      logger.error({ uid: request.uid, kind: request.kind.kind, err: toError(err) }, 'admission failed');
      result = RequestResult.Error;
      sendJson(
        res,
        500,
        failureStatus(500, 'InternalError', `internal error evaluating request ${request.uid}`),
      );
    }
    metrics.requests.inc({ kind, result });
    metrics.latency.observe({ kind }, Number(process.hrtime.bigint() - started) / 1e9);
  };

  /** Errors of the body parser (size, syntax, encoding) and anything unexpected. */
  const fail = (err: unknown, path: string, res: ServerResponse): void => {
    const e = (typeof err === 'object' && err !== null ? err : {}) as HttpError;
    const status = typeof e.status === 'number' && e.status >= 400 && e.status < 500 ? e.status : 500;
    if (status === 500) {
      logger.error({ path, err: toError(err) }, 'request failed');
    }
    metrics.requests.inc({
      kind: 'unknown',
      result: status === 500 ? RequestResult.Error : RequestResult.BadRequest,
    });
    if (res.headersSent) return;
    // Fixed texts only: a parser's or zlib's own message is not echoed.
    const [reason, why] =
      e.type === 'entity.too.large'
        ? ['RequestEntityTooLarge', `body larger than ${bodyLimit} bytes`]
        : e.type === 'encoding.unsupported'
          ? ['UnsupportedMediaType', 'content encoding not supported; send identity, gzip or deflate']
          : status === 500
            ? ['InternalError', 'internal error']
            : ['BadRequest', 'the body could not be read (truncated, or not valid gzip or deflate)'];
    const prefix = status === 500 ? '' : `${AdmissionCode.MalformedReview} `;
    sendJson(res, status, failureStatus(status, reason, `${prefix}${why}`));
  };

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

  app.post(
    '/validate',
    (req: Request, res: Response, next: NextFunction) => {
      if (isJson(req, res)) next();
    },
    readBody,
    (req: Request, res: Response) => {
      review(res, req.body);
    },
  );

  app.use((_req: Request, res: Response) => {
    sendJson(res, 404, failureStatus(404, 'NotFound', 'not found'));
  });
  app.use((err: unknown, req: Request, res: Response, _next: NextFunction) => {
    fail(err, req.path, res);
  });

  const validate = (req: IncomingMessage, res: ServerResponse): void => {
    try {
      if (isDraining()) res.setHeader('Connection', 'close');
      if (!isJson(req, res)) return;
      readBody(req, res, (err?: unknown) => {
        try {
          if (err === undefined || err === null) review(res, (req as Request).body);
          else fail(err, '/validate', res);
        } catch (thrown) {
          fail(thrown, '/validate', res);
        }
      });
    } catch (thrown) {
      fail(thrown, '/validate', res);
    }
  };
  return { app, validate };
}

/** Creates the express application (every path, POST /validate included). */
export function createWebhookApp(options: WebhookAppOptions): express.Express {
  return createWebhookParts(options).app;
}

/**
 * The request handler the server runs: POST /validate (the API server's only call, and nearly every request)
 * is answered without express's routing, by the same steps as the application's route; every other request
 * goes to the application.
 */
export function createWebhookHandler(options: WebhookAppOptions): RequestListener {
  const { app, validate } = createWebhookParts(options);
  return (req, res) => {
    if (req.method === 'POST' && isValidatePath(req.url)) validate(req, res);
    else app(req, res);
  };
}
