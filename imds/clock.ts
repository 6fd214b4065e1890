// Time as an injected dependency: the service reads the current time only through a Clock, so tests can
// move time forward (token expiry, credential rotation) without sleeping.

/** A source of the current time in milliseconds since the epoch. */
export interface Clock {
  now(): number;
}

/** The real clock. */
export const systemClock: Clock = { now: () => Date.now() };

/** A clock that only moves when told to (for tests and simulations). */
export interface ManualClock extends Clock {
  advance(ms: number): void;
  set(ms: number): void;
}

/** Creates a manual clock starting at `startMs`. */
export function createManualClock(startMs: number): ManualClock {
  let current = startMs;
  return {
    now: () => current,
    advance: (ms) => {
      current += ms;
    },
    set: (ms) => {
      current = ms;
    },
  };
}

/** Formats a time as ISO 8601 UTC without fractional seconds (`2026-11-22T07:29:03Z`). */
export function formatIsoSeconds(ms: number): string {
  return new Date(Math.floor(ms / 1000) * 1000).toISOString().replace('.000Z', 'Z');
}
