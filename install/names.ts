// Object names, labels and ports shared by every generated object, so selectors, Services and probes agree.

/** A component of the installation. */
export const Component = {
  Enforcer: 'enforcer',
  Relay: 'relay',
  Webhook: 'webhook',
  Controller: 'controller',
} as const;
export type Component = (typeof Component)[keyof typeof Component];

/** The name of a component's workload, ServiceAccount, Service and RBAC objects. */
export function nameOf(component: Component): string {
  return `rtctl-${component}`;
}

/** Labels that select a component's pods (never change: a Deployment's selector is immutable). */
export function selectorLabels(component: Component): Record<string, string> {
  return { 'app.kubernetes.io/name': 'rtctl', 'app.kubernetes.io/component': component };
}

/** Labels on every object of a component. */
export function objectLabels(component: Component): Record<string, string> {
  return { ...selectorLabels(component), 'app.kubernetes.io/part-of': 'rtctl' };
}

/** Container ports. */
export const Ports = {
  /** Enforcer alert stream, /healthz and /status (`rtctl enforcer run --listen`). */
  enforcerAlerts: 4280,
  /** Relay alert stream (`rtctl enforcer relay --listen`). */
  relayAlerts: 4281,
  /** Webhook HTTPS (`rtctl webhook serve --listen`). */
  webhookHttps: 8443,
  /** Controller health. */
  controllerHealth: 8081,
} as const;

/** The Secret holding the webhook's serving certificate (tls.crt, tls.key, ca.crt). */
export const WEBHOOK_TLS_SECRET = 'rtctl-webhook-tls';
