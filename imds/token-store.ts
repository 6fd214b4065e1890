// Session tokens of the v2 access model: issued by PUT /latest/api/token with a TTL, valid until then.
// Bounded in count: expired tokens are purged and, past the bound, the oldest are evicted.
import { randomBytes } from 'node:crypto';
import type { Clock } from './clock.js';

/** Issues and validates session tokens of one instance. */
export interface TokenStore {
  /** Issues a token valid for `ttlSeconds` from now. */
  issue(ttlSeconds: number): string;
  /** True when `token` was issued here and has not expired. */
  isValid(token: string): boolean;
  /** Seconds left on a valid token, else 0. */
  remainingSeconds(token: string): number;
  /** Number of tokens held (expired ones may still be counted until the next purge). */
  size(): number;
}

/** Creates a token store. */
export function createTokenStore(options: {
  clock: Clock;
  maxTokens: number;
  random?: (bytes: number) => Buffer;
}): TokenStore {
  const { clock, maxTokens } = options;
  const random = options.random ?? randomBytes;
  const expiries = new Map<string, number>();

  function purgeExpired(now: number): void {
    for (const [token, expiresAt] of expiries) if (expiresAt <= now) expiries.delete(token);
  }

  return {
    issue(ttlSeconds) {
      const now = clock.now();
      if (expiries.size >= maxTokens) purgeExpired(now);
      while (expiries.size >= maxTokens) {
        const oldest = expiries.keys().next();
        if (oldest.done === true) break;
        expiries.delete(oldest.value);
      }
      const token = random(42).toString('base64url');
      expiries.set(token, now + ttlSeconds * 1000);
      return token;
    },
    isValid(token) {
      const expiresAt = expiries.get(token);
      if (expiresAt === undefined) return false;
      if (expiresAt <= clock.now()) {
        expiries.delete(token);
        return false;
      }
      return true;
    },
    remainingSeconds(token) {
      const expiresAt = expiries.get(token);
      if (expiresAt === undefined) return 0;
      return Math.max(0, Math.ceil((expiresAt - clock.now()) / 1000));
    },
    size: () => expiries.size,
  };
}
