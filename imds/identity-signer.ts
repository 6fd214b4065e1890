// The key that signs instance identity documents, and its self-signed certificate (the one a client verifies
// the documents against; `rtctl imds identity-certificate` prints it). One RSA-2048 key per service, made
// when first needed. Signatures are made for real:
//   signature  base64 of an RSA PKCS#1 v1.5 SHA-256 signature over the document's bytes
//              (openssl dgst -sha256 -verify <public key> -signature <decoded> document)
//   pkcs7      base64 DER of a detached PKCS#7 SignedData over the document, SHA-256, 64-character lines,
//              without PEM armour and without the certificate (as on the real service: the client brings it)
//              (openssl smime -verify -inform PEM -in <armoured> -content document -certfile cert -noverify)
import { createPrivateKey, generateKeyPairSync, randomBytes, sign, type KeyObject } from 'node:crypto';
import forge from 'node-forge';
import type { Clock } from './clock.js';

/** Signs documents and shows its certificate. */
export interface IdentitySigner {
  /** PEM of the certificate whose public key verifies the signatures. */
  certificatePem(): string;
  /** Base64 RSA-SHA256 signature of `text` (UTF-8). */
  signature(text: string): string;
  /** Base64 DER of a detached PKCS#7 SignedData over `text`, wrapped at 64 characters. */
  pkcs7(text: string): string;
}

interface KeyMaterial {
  key: KeyObject;
  forgeKey: forge.pki.rsa.PrivateKey;
  cert: forge.pki.Certificate;
  pem: string;
}

function wrap64(text: string): string {
  return (text.match(/.{1,64}/g) ?? []).join('\n');
}

/** Creates a signer; the key and certificate are generated on first use (or taken from `privateKeyPem`). */
export function createIdentitySigner(options: {
  clock: Clock;
  /** Common name of the certificate. */
  commonName?: string;
  /** An RSA private key in PEM, to keep the same certificate across restarts. */
  privateKeyPem?: string;
}): IdentitySigner {
  let material: KeyMaterial | undefined;

  function load(): KeyMaterial {
    if (material !== undefined) return material;
    const key =
      options.privateKeyPem === undefined
        ? generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey
        : createPrivateKey(options.privateKeyPem);
    const pkcs1 = key.export({ type: 'pkcs1', format: 'pem' }).toString();
    const forgeKey = forge.pki.privateKeyFromPem(pkcs1);
    const cert = forge.pki.createCertificate();
    cert.publicKey = forge.pki.rsa.setPublicKey(forgeKey.n, forgeKey.e);
    const serial = randomBytes(16);
    serial[0] = (serial[0] ?? 0) & 0x7f;
    cert.serialNumber = serial.toString('hex');
    const now = options.clock.now();
    cert.validity.notBefore = new Date(now - 86400 * 1000);
    cert.validity.notAfter = new Date(now + 10 * 365 * 86400 * 1000);
    const subject = [
      { name: 'commonName', value: options.commonName ?? 'rtctl imds instance identity' },
      { name: 'organizationName', value: 'rtctl' },
    ];
    cert.setSubject(subject);
    cert.setIssuer(subject);
    cert.setExtensions([
      { name: 'basicConstraints', cA: false },
      { name: 'keyUsage', digitalSignature: true, critical: true },
      { name: 'subjectKeyIdentifier' },
    ]);
    cert.sign(forgeKey, forge.md.sha256.create());
    material = { key, forgeKey, cert, pem: forge.pki.certificateToPem(cert).replace(/\r\n/g, '\n') };
    return material;
  }

  return {
    certificatePem: () => load().pem,
    signature: (text) => sign('sha256', Buffer.from(text, 'utf8'), load().key).toString('base64'),
    pkcs7(text) {
      const m = load();
      const p7 = forge.pkcs7.createSignedData();
      p7.content = forge.util.createBuffer(Buffer.from(text, 'utf8').toString('binary'));
      p7.addSigner({
        key: m.forgeKey,
        certificate: m.cert,
        digestAlgorithm: forge.pki.oids['sha256'] ?? '2.16.840.1.101.3.4.2.1',
        authenticatedAttributes: [
          { type: forge.pki.oids['contentType'] ?? '1.2.840.113549.1.9.3', value: forge.pki.oids['data'] },
          { type: forge.pki.oids['messageDigest'] ?? '1.2.840.113549.1.9.4' },
          { type: forge.pki.oids['signingTime'] ?? '1.2.840.113549.1.9.5' },
        ],
      });
      p7.sign({ detached: true });
      // addSigner put the certificate in; the real service leaves it out (clients verify with their copy).
      p7.certificates = [];
      const der = forge.asn1.toDer(p7.toAsn1()).getBytes();
      return wrap64(Buffer.from(der, 'binary').toString('base64'));
    },
  };
}
