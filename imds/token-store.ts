// Session tokens of the v2 access model: issued by PUT /latest/api/token with a TTL, valid until then.
// Bounded twice, and never at another client's expense: each client (remote address) holds at most
// `maxTokensPerClient` live tokens, past which its own oldest token is evicted; the instance holds at most
// `maxTokens`, past which (expired ones purged first) a new token is refused (429) rather than evicting a
// live token of someone else.
import { randomBytes } from 'node:crypto';
import type { Clock } from './clock.js';

/** Outcome of a token request. */
export type IssueResult = { ok: true; token: string } | { ok: false; reason: 'instance-full' };

/** Issues and validates session tokens of one instance. */
export interface TokenStore {
  /** Issues a token valid for `ttlSeconds` from now to `client` (its address). */
  issue(ttlSeconds: number, client?: string): IssueResult;
  /** True when `token` was issued here and has not expired. */
  isValid(token: string): boolean;
  /** Seconds left on a valid token, else 0. */
  remainingSeconds(token: string): number;
  /** Number of tokens held (expired ones may still be counted until the next purge). */
  size(): number;
  /** Number of tokens held for one client. */
  sizeOf(client: string): number;
}

/** Creates a token store. */
export function createTokenStore(options: {
  clock: Clock;
  maxTokens: number;
  maxTokensPerClient?: number;
  random?: (bytes: number) => Buffer;
}): TokenStore {
  const { clock, maxTokens } = options;
  const perClient = Math.min(options.maxTokensPerClient ?? maxTokens, maxTokens);
  const random = options.random ?? randomBytes;
  const tokens = new Map<string, { expiresAt: number; client: string }>();
  /** Tokens of each client in the order issued (a Set keeps insertion order). */
  const byClient = new Map<string, Set<string>>();

  function remove(token: string): void {
    const entry = tokens.get(token);
    if (entry === undefined) return;
    tokens.delete(token);
    const own = byClient.get(entry.client);
    own?.delete(token);
    if (own?.size === 0) byClient.delete(entry.client);
  }

  function purgeExpired(now: number): void {
    for (const token of tokens.keys()) {
      const entry = tokens.get(token);
      if (entry !== undefined && entry.expiresAt <= now) remove(token);
    }
  }

  return {
    issue(ttlSeconds, client = '') {
      const now = clock.now();
      const own = byClient.get(client);
      if (own !== undefined && own.size >= perClient) {
        // The client's oldest tokens go first (expired or not): O(1) per request, whatever the bound.
        while (own.size >= perClient) {
          const oldest = own.values().next();
          if (oldest.done === true) break;
          remove(oldest.value);
        }
      }
      if (tokens.size >= maxTokens) purgeExpired(now);
      if (tokens.size >= maxTokens) return { ok: false, reason: 'instance-full' };
      const token = random(42).toString('base64url');
      tokens.set(token, { expiresAt: now + ttlSeconds * 1000, client });
      const set = byClient.get(client) ?? new Set<string>();
      set.add(token);
      byClient.set(client, set);
      return { ok: true, token };
    },
    isValid(token) {
      const entry = tokens.get(token);
      if (entry === undefined) return false;
      if (entry.expiresAt <= clock.now()) {
        remove(token);
        return false;
      }
      return true;
    },
    remainingSeconds(token) {
      const entry = tokens.get(token);
      if (entry === undefined) return 0;
      return Math.max(0, Math.ceil((entry.expiresAt - clock.now()) / 1000));
    },
    size: () => tokens.size,
    sizeOf: (client) => byClient.get(client)?.size ?? 0,
  };
}
