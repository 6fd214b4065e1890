// One pass over a request body's bytes before JSON.parse, which costs far more per object, per array and per
// distinct key than per byte (a 3 MiB body of a million empty arrays takes V8 about a second). The pass bounds
// nesting, containers and keys, and picks up the two envelope fields an answer needs (the top-level apiVersion
// and request.uid) so a body over the bounds can still be answered with a proper denial.

/** Bounds on the structure of a body; a real AdmissionReview of any kind the webhook registers is far below. */
export interface JsonShapeLimits {
  /** Nesting of arrays and objects. */
  maxDepth: number;
  /** Arrays and objects in all. */
  maxContainers: number;
  /** Keys of one object. */
  maxKeysPerObject: number;
  /** Keys in all. */
  maxKeys: number;
  /** Array items and object members in all (each one after the first of its container is counted). */
  maxValues: number;
}

/** Bounds that keep JSON.parse of a 3 MiB body in the tens of milliseconds. */
export const DEFAULT_JSON_SHAPE_LIMITS: JsonShapeLimits = {
  maxDepth: 100,
  maxContainers: 50_000,
  maxKeysPerObject: 2_048,
  maxKeys: 50_000,
  maxValues: 100_000,
};

/** The outcome: within the bounds, or which bound was passed plus the envelope fields found so far. */
export type JsonShape = { ok: true } | { ok: false; reason: string; apiVersion?: string; uid?: string };

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;
const COMMA = 0x2c;

const OBJECT = 1;
const ARRAY = 2;

/** The text of a short JSON string token (quotes included), or undefined when it is long or not a string. */
function shortString(bytes: Buffer, start: number, end: number): string | undefined {
  if (end - start > 1024) return undefined;
  // The common token has no escape and no control byte: its text is its bytes (JSON.parse would agree).
  let plain = true;
  for (let i = start + 1; i < end; i++) {
    const b = bytes[i] ?? 0;
    if (b === 0x5c || b < 0x20) {
      plain = false;
      break;
    }
  }
  if (plain && bytes[start] === 0x22 && bytes[end] === 0x22 && end > start) {
    const text = bytes.toString('utf8', start + 1, end);
    // Bytes that are not UTF-8 decode to U+FFFD either way; JSON.parse of the same decoded text agrees.
    return text;
  }
  try {
    const v: unknown = JSON.parse(bytes.toString('utf8', start, end + 1));
    return typeof v === 'string' ? v : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Measures `bytes` against `limits`. Malformed JSON is not reported here (JSON.parse says it better); the pass
 * only stops early when a bound is passed.
 */
export function measureJsonShape(
  bytes: Buffer,
  limits: JsonShapeLimits = DEFAULT_JSON_SHAPE_LIMITS,
): JsonShape {
  const kinds = new Uint8Array(limits.maxDepth + 2);
  const keysAt = new Int32Array(limits.maxDepth + 2);
  let depth = 0;
  let containers = 0;
  let keys = 0;
  let commas = 0;
  let expectKey = false;
  // Envelope tracking: the key last read at depth 1 and 2, and whether the depth-2 object is `request`.
  let key1: string | undefined;
  let key2: string | undefined;
  let inRequest = false;
  let apiVersion: string | undefined;
  let uid: string | undefined;
  const over = (reason: string): JsonShape => ({
    ok: false,
    reason,
    ...(apiVersion === undefined ? {} : { apiVersion }),
    ...(uid === undefined ? {} : { uid }),
  });

  const n = bytes.length;
  for (let i = 0; i < n; i++) {
    const c = bytes[i];
    if (c === QUOTE) {
      // Find the closing quote: one not preceded by an odd number of backslashes.
      let end = bytes.indexOf(QUOTE, i + 1);
      while (end > 0) {
        let slashes = 0;
        while (bytes[end - 1 - slashes] === BACKSLASH) slashes++;
        if (slashes % 2 === 0) break;
        end = bytes.indexOf(QUOTE, end + 1);
      }
      if (end < 0) return { ok: true };
      if (expectKey) {
        keys += 1;
        const here = (keysAt[depth] ?? 0) + 1;
        keysAt[depth] = here;
        if (here > limits.maxKeysPerObject)
          return over(`an object has more than ${limits.maxKeysPerObject} keys`);
        if (keys > limits.maxKeys) return over(`the body has more than ${limits.maxKeys} keys`);
        if (depth === 1) key1 = shortString(bytes, i, end);
        else if (depth === 2) key2 = shortString(bytes, i, end);
        expectKey = false;
      } else if (depth === 1 && key1 === 'apiVersion') {
        apiVersion = shortString(bytes, i, end);
      } else if (depth === 2 && inRequest && key2 === 'uid') {
        uid = shortString(bytes, i, end);
      }
      i = end;
      continue;
    }
    if (c === OPEN_OBJECT || c === OPEN_ARRAY) {
      depth += 1;
      containers += 1;
      if (depth > limits.maxDepth) return over(`nesting is deeper than ${limits.maxDepth}`);
      if (containers > limits.maxContainers)
        return over(`the body has more than ${limits.maxContainers} objects and arrays`);
      kinds[depth] = c === OPEN_OBJECT ? OBJECT : ARRAY;
      keysAt[depth] = 0;
      expectKey = c === OPEN_OBJECT;
      if (depth === 2) {
        inRequest = c === OPEN_OBJECT && kinds[1] === OBJECT && key1 === 'request';
        key2 = undefined;
      }
    } else if (c === CLOSE_OBJECT || c === CLOSE_ARRAY) {
      if (depth === 2) inRequest = false;
      depth = Math.max(0, depth - 1);
      expectKey = false;
    } else if (c === COMMA) {
      commas += 1;
      if (commas > limits.maxValues) return over(`the body has more than ${limits.maxValues} values`);
      expectKey = kinds[depth] === OBJECT;
    }
  }
  return { ok: true };
}
