// A certificate authority and a serving certificate for the webhook's service DNS names (node-forge; no
// network). Pure apart from key generation: returns PEM text, the CLI writes the files.
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import forge from 'node-forge';

/** What `rtctl webhook certs` writes. */
export interface WebhookCertificates {
  /** ca.crt: the CA certificate, the caBundle of the webhook configuration. */
  caCert: string;
  /** tls.crt: the serving certificate, signed by the CA. */
  tlsCert: string;
  /** tls.key: the serving key (PKCS#1 PEM). */
  tlsKey: string;
}

/** Inputs of the generation. */
export interface CertificateRequest {
  /** DNS names of the service (`rtctl-webhook.rtctl-system.svc`); the first is the common name. */
  dnsNames: readonly string[];
  /** IP addresses to add as subject alternative names (for loopback use). */
  ipAddresses?: readonly string[];
  /** Validity in days from `now`. */
  days?: number;
  now?: Date;
  /** RSA modulus length. */
  bits?: number;
}

function createKeyPair(bits: number): {
  privateKey: forge.pki.rsa.PrivateKey;
  publicKey: forge.pki.rsa.PublicKey;
  pem: string;
} {
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: bits });
  const pem = privateKey.export({ type: 'pkcs1', format: 'pem' }).toString();
  const key = forge.pki.privateKeyFromPem(pem);
  return { privateKey: key, publicKey: forge.pki.rsa.setPublicKey(key.n, key.e), pem };
}

function serialNumber(): string {
  // 16 random bytes with the top bit cleared: a positive serial.
  const bytes = randomBytes(16);
  bytes[0] = (bytes[0] ?? 0) & 0x7f;
  return bytes.toString('hex');
}

/** Generates a CA and a serving certificate for the names given. */
export function generateWebhookCertificates(request: CertificateRequest): WebhookCertificates {
  const [commonName] = request.dnsNames;
  if (commonName === undefined) throw new Error('at least one DNS name is required');
  const bits = request.bits ?? 2048;
  const now = request.now ?? new Date();
  const notBefore = new Date(now.getTime() - 5 * 60 * 1000);
  const notAfter = new Date(now.getTime() + (request.days ?? 365) * 24 * 3600 * 1000);

  const ca = createKeyPair(bits);
  const caCert = forge.pki.createCertificate();
  caCert.publicKey = ca.publicKey;
  caCert.serialNumber = serialNumber();
  caCert.validity.notBefore = notBefore;
  caCert.validity.notAfter = notAfter;
  const caSubject = [{ name: 'commonName', value: `rtctl webhook CA for ${commonName}` }];
  caCert.setSubject(caSubject);
  caCert.setIssuer(caSubject);
  caCert.setExtensions([
    { name: 'basicConstraints', cA: true, critical: true },
    { name: 'keyUsage', keyCertSign: true, cRLSign: true, critical: true },
    { name: 'subjectKeyIdentifier' },
  ]);
  caCert.sign(ca.privateKey, forge.md.sha256.create());

  const leaf = createKeyPair(bits);
  const cert = forge.pki.createCertificate();
  cert.publicKey = leaf.publicKey;
  cert.serialNumber = serialNumber();
  cert.validity.notBefore = notBefore;
  cert.validity.notAfter = notAfter;
  cert.setSubject([{ name: 'commonName', value: commonName }]);
  cert.setIssuer(caSubject);
  cert.setExtensions([
    { name: 'basicConstraints', cA: false },
    { name: 'keyUsage', digitalSignature: true, keyEncipherment: true, critical: true },
    { name: 'extKeyUsage', serverAuth: true },
    {
      name: 'subjectAltName',
      altNames: [
        ...request.dnsNames.map((value) => ({ type: 2, value })),
        ...(request.ipAddresses ?? []).map((ip) => ({ type: 7, ip })),
      ],
    },
    { name: 'authorityKeyIdentifier', keyIdentifier: caCert.generateSubjectKeyIdentifier().getBytes() },
  ]);
  cert.sign(ca.privateKey, forge.md.sha256.create());

  return {
    caCert: forge.pki.certificateToPem(caCert),
    tlsCert: forge.pki.certificateToPem(cert),
    tlsKey: leaf.pem,
  };
}
