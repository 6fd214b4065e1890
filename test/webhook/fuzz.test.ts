// Fuzzing the webhook with fast-check over a keep-alive HTTPS connection on loopback (10 000+ cases per run):
// random and truncated bodies, wrong types at every field of real reviews, huge strings. Every answer must be a
// 400/413 with a reason or a proper decision; never a 500, never a hang; the server answers afterwards.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import fc from 'fast-check';
import '../support/property-seed.js';
import { parseAllDocuments } from 'yaml';
import {
  createReview,
  createTestClient,
  startTestWebhook,
  type TestClient,
  type TestResponse,
  type TestWebhook,
} from './support/harness.js';

const FIXTURES = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../fixtures/webhook/admission');
const REQUEST_TIMEOUT_MS = 5000;

function loadObjects(): unknown[] {
  return readdirSync(FIXTURES)
    .filter((f) => f.endsWith('.yaml'))
    .sort()
    .flatMap((f) =>
      parseAllDocuments(readFileSync(path.join(FIXTURES, f), 'utf8')).map(
        (d) => (d.toJS() as { object: unknown }).object,
      ),
    );
}

type Path = (string | number)[];

/** Every path to a value inside `v` (the root excluded). */
function pathsOf(v: unknown, prefix: Path = [], out: Path[] = []): Path[] {
  if (Array.isArray(v)) v.forEach((x, i) => (out.push([...prefix, i]), pathsOf(x, [...prefix, i], out)));
  else if (typeof v === 'object' && v !== null)
    for (const [k, x] of Object.entries(v)) {
      out.push([...prefix, k]);
      pathsOf(x, [...prefix, k], out);
    }
  return out;
}

/** A deep copy of `root` with the value at `at` replaced. */
function replaceAt(root: unknown, at: Path, value: unknown): unknown {
  const copy = structuredClone(root) as Record<string | number, unknown>;
  let node: Record<string | number, unknown> = copy;
  at.slice(0, -1).forEach((seg) => {
    node = node[seg] as Record<string | number, unknown>;
  });
  const last = at[at.length - 1];
  if (last !== undefined) node[last] = value;
  return copy;
}

/** The invariant every answer must satisfy. */
function assertProperAnswer(res: TestResponse, sentUid: unknown): void {
  assert.notEqual(res.status, 500, res.text.slice(0, 500));
  if (res.status === 400 || res.status === 413) {
    const body = res.json as { kind?: string; message?: string };
    assert.equal(body.kind, 'Status');
    assert.match(body.message ?? '', /^RT5030 \S/);
    return;
  }
  assert.equal(res.status, 200, res.text.slice(0, 500));
  const body = res.json as {
    apiVersion: string;
    response: {
      uid: unknown;
      allowed: unknown;
      status: { code: number; message: string };
      warnings?: string[];
    };
  };
  assert.equal(body.apiVersion, 'admission.k8s.io/v1');
  assert.equal(body.response.uid, sentUid);
  assert.equal(typeof body.response.allowed, 'boolean');
  if (body.response.allowed === false) {
    assert.equal(body.response.status.code, 403);
    for (const line of body.response.status.message.split('\n')) assert.match(line, /^RT\d{4} \S.*: \S/);
  }
  for (const w of body.response.warnings ?? []) assert.match(w, /^RT\d{4} \S.*: \S/);
}

function uidOf(review: unknown): unknown {
  if (typeof review !== 'object' || review === null) return undefined;
  const request = (review as { request?: unknown }).request;
  return typeof request === 'object' && request !== null ? (request as { uid?: unknown }).uid : undefined;
}

describe('webhook fuzzing (fast-check, keep-alive HTTPS on loopback)', function () {
  this.timeout(240_000);
  let server: TestWebhook;
  let client: TestClient;
  let total = 0;
  const reviews = loadObjects().flatMap((o) => [
    createReview(o),
    createReview(o, { operation: 'UPDATE', oldObject: o }),
    createReview(o, { dryRun: true }),
  ]);
  const reviewArb = fc.constantFrom(...reviews);
  const send = async (body: string): Promise<TestResponse> => {
    total += 1;
    return client.request('POST', '/validate', body, REQUEST_TIMEOUT_MS);
  };

  before(async () => {
    server = await startTestWebhook();
    client = createTestClient(server.port, server.certs.caCert, { maxSockets: 1 });
  });
  after(async () => {
    client.close();
    await server.stop();
  });
  afterEach(async () => {
    // The server still answers after every property.
    assert.equal((await client.request('GET', '/healthz', undefined, REQUEST_TIMEOUT_MS)).status, 200);
    const ok = await client.post('/validate', reviews[0]);
    assert.equal(ok.status, 200);
  });

  it('random bodies: 400 with a reason', async () => {
    const body = fc.oneof(
      fc.string({ maxLength: 200 }),
      fc.string({ unit: 'binary', maxLength: 200 }),
      fc.json({ maxDepth: 4 }),
      fc.uint8Array({ maxLength: 200 }).map((b) => Buffer.from(b).toString('latin1')),
    );
    await fc.assert(
      fc.asyncProperty(body, async (b) => {
        const res = await send(b);
        assertProperAnswer(
          res,
          uidOf(
            (() => {
              try {
                return JSON.parse(b) as unknown;
              } catch {
                return undefined;
              }
            })(),
          ),
        );
      }),
      { numRuns: 2500 },
    );
  });

  it('truncated reviews: 400 with a reason', async () => {
    await fc.assert(
      fc.asyncProperty(reviewArb, fc.double({ min: 0, max: 1, noNaN: true }), async (review, cut) => {
        const text = JSON.stringify(review);
        const res = await send(text.slice(0, Math.floor(cut * (text.length - 1))));
        assert.equal(res.status, 400, res.text);
        assertProperAnswer(res, undefined);
      }),
      { numRuns: 2500 },
    );
  });

  it('wrong types at every field: a proper decision or 400, never 500', async () => {
    const mutated = reviewArb.chain((review) => {
      const paths = pathsOf(review);
      return fc.tuple(fc.constant(review), fc.constantFrom(...paths), fc.jsonValue({ maxDepth: 2 }));
    });
    await fc.assert(
      fc.asyncProperty(mutated, async ([review, at, value]) => {
        const changed = replaceAt(review, at, value);
        const res = await send(JSON.stringify(changed));
        assertProperAnswer(res, uidOf(changed));
      }),
      { numRuns: 4000 },
    );
  });

  it('huge strings at any field: decided, 400 or 413, never 500', async () => {
    const huge = reviewArb.chain((review) =>
      fc.tuple(
        fc.constant(review),
        fc.constantFrom(...pathsOf(review)),
        fc.oneof(
          { weight: 40, arbitrary: fc.integer({ min: 1_000, max: 100_000 }) },
          { weight: 1, arbitrary: fc.integer({ min: 3_000_000, max: 3_300_000 }) },
        ),
        fc.constantFrom('x', 'é', '"', '\\', '\n', '\u0000', '😀'),
      ),
    );
    await fc.assert(
      fc.asyncProperty(huge, async ([review, at, length, ch]) => {
        const changed = replaceAt(review, at, ch.repeat(Math.ceil(length / ch.length)));
        const text = JSON.stringify(changed);
        const res = await send(text);
        if (Buffer.byteLength(text) > 3 * 1024 * 1024) assert.equal(res.status, 413);
        assertProperAnswer(res, uidOf(changed));
      }),
      { numRuns: 1000 },
    );
  });

  it('nested and huge shapes at any field: decided or refused within a CPU and memory bound per request', async () => {
    // Values built to cost the most per byte, placed anywhere in a real review, up to the 3 MiB bound.
    const hugeValue = fc.oneof(
      fc.tuple(fc.integer({ min: 1, max: 200_000 }), fc.constantFrom('[', '{"a":')).map(([depth, open]) => ({
        raw: `${open.repeat(depth)}1${(open === '[' ? ']' : '}').repeat(depth)}`,
      })),
      fc
        .tuple(fc.integer({ min: 1, max: 1_000_000 }), fc.constantFrom('1', '"s"', '{}', '[]', 'null'))
        .map(([n, item]) => ({ raw: `[${Array.from({ length: n }, () => item).join(',')}]` })),
      fc
        .integer({ min: 1, max: 150_000 })
        .map((n) => ({ raw: `{${Array.from({ length: n }, (_, i) => `"k${i}":${i}`).join(',')}}` })),
      fc.tuple(fc.integer({ min: 1, max: 20_000 }), fc.integer({ min: 1, max: 5_000 })).map(([n, len]) => ({
        raw: `[${Array.from({ length: n }, (_, i) => `{"path":"${String(i).padStart(len, '/')}"}`).join(',')}]`,
      })),
    );
    const shapes = reviewArb.chain((review) =>
      fc.tuple(fc.constant(review), fc.constantFrom(...pathsOf(review)), hugeValue),
    );
    const CPU_BOUND_MS = 3000;
    const HEAP_BOUND_BYTES = 512 * 1024 * 1024;
    await fc.assert(
      fc.asyncProperty(shapes, async ([review, at, value]) => {
        const marker = '"__rtctl_fuzz_marker__"';
        const text = JSON.stringify(replaceAt(review, at, '__rtctl_fuzz_marker__')).replace(
          marker,
          value.raw,
        );
        const heapBefore = process.memoryUsage().heapUsed;
        const cpu = process.cpuUsage();
        const res = await send(text);
        const used = process.cpuUsage(cpu);
        const cpuMs = (used.user + used.system) / 1000;
        // Client and server share this process: the bounds cover both.
        assert.ok(cpuMs < CPU_BOUND_MS, `${cpuMs.toFixed(0)} ms of CPU for ${text.length} bytes`);
        assert.ok(
          process.memoryUsage().heapUsed - heapBefore < HEAP_BOUND_BYTES,
          `heap grew by ${process.memoryUsage().heapUsed - heapBefore} bytes`,
        );
        if (Buffer.byteLength(text) > 3 * 1024 * 1024) assert.equal(res.status, 413);
        else assert.ok(res.text.length < 64 * 1024, `answer of ${res.text.length} bytes`);
        assertProperAnswer(res, uidOf(review));
      }),
      { numRuns: 60, seed: 1212 },
    );
  });

  it('ran at least 10 000 cases', () => {
    assert.ok(total >= 10_000, `${total} cases`);
  });
});
