// The webhook's serving certificate when rtctl issues it (no cert-manager): the DNS names the Service answers
// to, whether a certificate already in the cluster can be kept, and the Secret that carries it. Generation is
// the webhook's own (`rtctl webhook certs`, webhook/certs.ts).
import { createPrivateKey, X509Certificate } from 'node:crypto';
import { generateWebhookCertificates } from '../../webhook/certs.js';
import { nameOf, Component, WEBHOOK_TLS_SECRET } from '../names.js';
import type { KubeObject } from '../io/kube-client.js';

/** The PEM texts of the Secret. */
export interface TlsMaterial {
  caCert: string;
  tlsCert: string;
  tlsKey: string;
}

/** Days a generated certificate is valid. */
export const CERT_VALIDITY_DAYS = 365;
/** A kept certificate must stay valid at least this long; `rtctl install` renews it otherwise. */
export const CERT_RENEW_BEFORE_DAYS = 30;

/** The names the webhook Service answers to (the same as the cert-manager Certificate's). */
export function webhookDnsNames(namespace: string): string[] {
  const service = `${nameOf(Component.Webhook)}.${namespace}.svc`;
  return [service, `${service}.cluster.local`];
}

/** Why this material cannot be kept, or undefined when it can. */
export function certificateProblem(
  m: TlsMaterial,
  dnsNames: readonly string[],
  now: Date,
): string | undefined {
  try {
    const ca = new X509Certificate(m.caCert);
    const leaf = new X509Certificate(m.tlsCert);
    if (!ca.ca) return 'ca.crt is not a CA certificate';
    if (!leaf.verify(ca.publicKey)) return 'tls.crt is not signed by ca.crt';
    if (!leaf.checkPrivateKey(createPrivateKey(m.tlsKey))) return 'tls.key does not match tls.crt';
    for (const name of dnsNames)
      if (leaf.checkHost(name, { wildcards: false }) === undefined) return `tls.crt does not name ${name}`;
    const renewBy = now.getTime() + CERT_RENEW_BEFORE_DAYS * 24 * 3600 * 1000;
    for (const [file, c] of [
      ['ca.crt', ca],
      ['tls.crt', leaf],
    ] as const) {
      if (new Date(c.validFrom).getTime() > now.getTime()) return `${file} is not valid yet`;
      if (new Date(c.validTo).getTime() < renewBy)
        return `${file} expires ${new Date(c.validTo).toISOString()} (renewed ${CERT_RENEW_BEFORE_DAYS} days before)`;
    }
    return undefined;
  } catch (err) {
    return `unreadable: ${err instanceof Error ? err.message : String(err)}`;
  }
}

/** The material in an existing Secret, or undefined when a key is missing. */
export function materialOf(secret: Record<string, unknown> | undefined): TlsMaterial | undefined {
  const data = secret?.['data'] as Record<string, unknown> | undefined;
  const text = (k: string): string | undefined =>
    typeof data?.[k] === 'string' ? Buffer.from(data[k], 'base64').toString('utf8') : undefined;
  const caCert = text('ca.crt');
  const tlsCert = text('tls.crt');
  const tlsKey = text('tls.key');
  return caCert !== undefined && tlsCert !== undefined && tlsKey !== undefined
    ? { caCert, tlsCert, tlsKey }
    : undefined;
}

/** New CA and serving certificate for the namespace's webhook Service. */
export function issueCertificate(namespace: string, now: Date): TlsMaterial {
  return generateWebhookCertificates({ dnsNames: webhookDnsNames(namespace), days: CERT_VALIDITY_DAYS, now });
}

/** The Secret the webhook Deployment mounts. */
export function tlsSecret(namespace: string, m: TlsMaterial, labels: Record<string, string>): KubeObject {
  const b64 = (s: string): string => Buffer.from(s, 'utf8').toString('base64');
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: WEBHOOK_TLS_SECRET, namespace, labels },
    type: 'kubernetes.io/tls',
    data: { 'ca.crt': b64(m.caCert), 'tls.crt': b64(m.tlsCert), 'tls.key': b64(m.tlsKey) },
  };
}
