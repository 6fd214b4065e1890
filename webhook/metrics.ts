// Prometheus metrics of the webhook, on a registry of its own (no global state): requests by kind and
// result, and a latency histogram.
import { Counter, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/** Outcome labels of the request counter. */
export const RequestResult = {
  Allowed: 'allowed',
  Denied: 'denied',
  BadRequest: 'bad_request',
  Error: 'error',
} as const;
export type RequestResult = (typeof RequestResult)[keyof typeof RequestResult];

/** The webhook's metrics. */
export interface WebhookMetrics {
  registry: Registry;
  requests: Counter<'kind' | 'result'>;
  latency: Histogram<'kind'>;
}

/** Creates the metrics; `withDefaults` adds the process metrics (for the real server, not for tests). */
export function createWebhookMetrics(withDefaults = false): WebhookMetrics {
  const registry = new Registry();
  if (withDefaults) collectDefaultMetrics({ register: registry });
  const requests = new Counter({
    name: 'rtctl_webhook_requests_total',
    help: 'Admission requests answered, by kind of the object and result',
    labelNames: ['kind', 'result'] as const,
    registers: [registry],
  });
  const latency = new Histogram({
    name: 'rtctl_webhook_request_duration_seconds',
    help: 'Time to answer an admission request',
    labelNames: ['kind'] as const,
    buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1],
    registers: [registry],
  });
  return { registry, requests, latency };
}
