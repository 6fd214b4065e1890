// Temporary credentials of the instance role (and of the instance identity), with exactly the seed's fields.
// A set is valid for `lifetimeSeconds`; a new set replaces it `rotateBeforeSeconds` before it expires, so a
// client never receives credentials with less than that left.
import { randomBytes } from 'node:crypto';
import { formatIsoSeconds, type Clock } from './clock.js';

/** The temporary credentials document (field order as in the seed). */
export interface TemporaryCredentials {
  Code: string;
  LastUpdated: string;
  Type: string;
  AccessKeyId: string;
  SecretAccessKey: string;
  Token: string;
  Expiration: string;
}

/** Settings of an issuer. */
export interface CredentialSettings {
  lifetimeSeconds: number;
  rotateBeforeSeconds: number;
  /** Label of the signing scheme (the `Type` field). */
  type: string;
}

/** Hands out the current credentials, rotating them before they expire. */
export interface CredentialIssuer {
  current(): TemporaryCredentials;
}

const KEY_ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';

function createAccessKeyId(random: (n: number) => Buffer): string {
  const bytes = random(16);
  let id = 'ASIA';
  for (const b of bytes) id += KEY_ALPHABET[b % KEY_ALPHABET.length] ?? 'A';
  return id;
}

/** Creates an issuer; `random` is injectable for deterministic tests. */
export function createCredentialIssuer(options: {
  clock: Clock;
  settings: CredentialSettings;
  random?: (bytes: number) => Buffer;
}): CredentialIssuer {
  const { clock, settings } = options;
  const random = options.random ?? randomBytes;
  let held: { credentials: TemporaryCredentials; rotateAt: number } | undefined;

  function issue(now: number): { credentials: TemporaryCredentials; rotateAt: number } {
    const expiresAt = now + settings.lifetimeSeconds * 1000;
    return {
      credentials: {
        Code: 'Success',
        LastUpdated: formatIsoSeconds(now),
        Type: settings.type,
        AccessKeyId: createAccessKeyId(random),
        SecretAccessKey: random(30).toString('base64'),
        Token: random(300).toString('base64'),
        Expiration: formatIsoSeconds(expiresAt),
      },
      rotateAt: expiresAt - settings.rotateBeforeSeconds * 1000,
    };
  }

  return {
    current() {
      const now = clock.now();
      if (held === undefined || now >= held.rotateAt) held = issue(now);
      return held.credentials;
    },
  };
}
