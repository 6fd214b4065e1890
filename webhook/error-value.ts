// Thrown values as the webhook reports them: an Error for the logger (pino serialises message and stack under
// `err`), or just its message for the command line. OPA wasm throws plain strings, hence both paths.

/** The thrown value as an Error. */
export function toError(thrown: unknown): Error {
  return thrown instanceof Error ? thrown : new Error(typeof thrown === 'string' ? thrown : String(thrown));
}

/** The message of a thrown value. */
export function messageOf(thrown: unknown): string {
  return toError(thrown).message;
}
