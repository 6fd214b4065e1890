// A bounded copy of a document for the exhaustive schema pass, which reports every error and so costs in
// proportion to the document: arrays, strings and mappings longer than any schema bound allows are cut just
// past that bound (the bound's own error is still reported), nesting is cut below any depth the schema
// describes, and arrays keep at most `maxNodes` items in all. A 3 MiB document of a million bad values then
// costs the exhaustive pass as much as one of a few thousand; the schema has no minimum that a cut could break.

/** Bounds of the copy; each is above the largest matching bound of the schema. */
export interface ClipLimits {
  /** Items kept per array. */
  maxItems: number;
  /** Characters kept per string (keys included). */
  maxLength: number;
  /** Keys kept per mapping. */
  maxProperties: number;
  /** Nesting kept; deeper arrays and mappings become empty ones. */
  maxDepth: number;
  /** Array items kept in all, across the document. */
  maxNodes: number;
}

/** The bounds used for reports: above every maxItems, maxLength and maxProperties of the policy schema. */
export const REPORT_CLIP_LIMITS: ClipLimits = {
  maxItems: 1025,
  maxLength: 262_145,
  maxProperties: 257,
  maxDepth: 24,
  maxNodes: 20_000,
};

/** The copy, and whether anything was cut. */
export interface Clipped {
  value: unknown;
  clipped: boolean;
}

interface Task {
  from: unknown;
  depth: number;
  put: (v: unknown) => void;
}

/** Copies `value` within `limits` without recursion (nesting depth costs no stack). */
export function clipForReport(value: unknown, limits: ClipLimits = REPORT_CLIP_LIMITS): Clipped {
  let items = 0;
  let clipped = false;
  const clipString = (s: string): string => {
    if (s.length <= limits.maxLength) return s;
    clipped = true;
    return s.slice(0, limits.maxLength);
  };
  let root: unknown;
  const stack: Task[] = [{ from: value, depth: 0, put: (v) => (root = v) }];
  for (let task = stack.pop(); task !== undefined; task = stack.pop()) {
    const { from, depth, put } = task;
    if (typeof from === 'string') {
      put(clipString(from));
      continue;
    }
    if (typeof from !== 'object' || from === null) {
      put(from);
      continue;
    }
    const tooDeep = depth >= limits.maxDepth;
    if (Array.isArray(from)) {
      const source = from as unknown[];
      const keep = tooDeep
        ? 0
        : Math.min(source.length, limits.maxItems, Math.max(0, limits.maxNodes - items));
      items += keep;
      if (keep < source.length) clipped = true;
      const out: unknown[] = new Array<unknown>(keep);
      put(out);
      for (let i = keep - 1; i >= 0; i--)
        stack.push({ from: source[i], depth: depth + 1, put: (v) => (out[i] = v) });
      continue;
    }
    const out: Record<string, unknown> = {};
    put(out);
    const entries: Array<[string, unknown]> = [];
    for (const key in from) {
      if (!Object.prototype.hasOwnProperty.call(from, key)) continue;
      if (tooDeep || entries.length === limits.maxProperties) {
        clipped = true;
        break;
      }
      entries.push([clipString(key), (from as Record<string, unknown>)[key]]);
    }
    for (let i = entries.length - 1; i >= 0; i--) {
      const entry = entries[i];
      if (entry === undefined) continue;
      const [key, v] = entry;
      // defineProperty for "__proto__": it stays a plain property, as JSON.parse made it.
      const put =
        key === '__proto__'
          ? (x: unknown): void => {
              Object.defineProperty(out, key, {
                value: x,
                enumerable: true,
                writable: true,
                configurable: true,
              });
            }
          : (x: unknown): void => {
              out[key] = x;
            };
      stack.push({ from: v, depth: depth + 1, put });
    }
  }
  return { value: root, clipped };
}
