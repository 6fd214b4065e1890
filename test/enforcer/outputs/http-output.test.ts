// The webhook output against a real HTTP server on loopback: batches (by size and by flush time), NDJSON
// and JSON arrays, retries with exponential backoff after failures (503, 429, a dropped connection), no
// retry after a 400, counted failure after the last retry, and the bounded queue counting drops while the
// receiver hangs. Delays are checked as lower bounds set by the backoff (never as upper bounds on speed).
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { pino } from 'pino';
import type { AlertOutput } from '../../../enforcer/outputs/alert-output.js';
import { backoffDelay, createHttpOutput } from '../../../enforcer/outputs/http-output.js';
import { parseOutputSpec, type HttpOutputSpec } from '../../../enforcer/outputs/output-spec.js';
import { sampleAlert, waitFor } from './support.js';

const logger = pino({ level: 'silent' });

interface Received {
  at: number;
  contentType: string;
  body: string;
}

/** A webhook receiver answering each request with the next status of `plan` (then 200). */
async function startReceiver(
  plan: (number | 'reset' | 'hang')[],
): Promise<{ url: string; got: Received[]; server: Server; hanging: ServerResponse[] }> {
  const got: Received[] = [];
  const hanging: ServerResponse[] = [];
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (c: string) => (body += c));
    req.on('end', () => {
      got.push({ at: Date.now(), contentType: req.headers['content-type'] ?? '', body });
      const step = plan.shift() ?? 200;
      if (step === 'reset') req.socket.destroy();
      else if (step === 'hang') hanging.push(res);
      else res.writeHead(step).end();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as { port: number };
  return { url: `http://127.0.0.1:${port}/hook?token=abc`, got, server, hanging };
}

describe('HTTP webhook output (real HTTP server on loopback)', function () {
  this.timeout(30_000);
  const cleanups: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
  });

  async function setup(
    plan: (number | 'reset' | 'hang')[],
    options: string,
  ): Promise<{ output: AlertOutput; got: Received[]; spec: HttpOutputSpec; hanging: ServerResponse[] }> {
    const r = await startReceiver(plan);
    const spec = parseOutputSpec(`${r.url}&${options}`) as HttpOutputSpec;
    const output = createHttpOutput(spec, { logger, random: () => 1 });
    cleanups.push(async () => {
      for (const h of r.hanging) h.destroy();
      r.server.closeAllConnections();
      await new Promise((res) => r.server.close(res));
    });
    cleanups.push(() => output.close(500));
    return { output, got: r.got, spec, hanging: r.hanging };
  }

  const send = (o: AlertOutput, from: number, count: number): void => {
    for (let i = from; i < from + count; i++) {
      const a = sampleAlert(i);
      o.send(a, JSON.stringify(a));
    }
  };

  it('keeps its own options out of the URL and the receiver’s in it', () => {
    const spec = parseOutputSpec('https://h.example/x?token=abc&batchSize=5&minSeverity=3') as HttpOutputSpec;
    assert.equal(spec.url, 'https://h.example/x?token=abc');
    assert.equal(spec.batchSize, 5);
    assert.equal(spec.minSeverity, 3);
  });

  it('POSTs full batches of NDJSON, then the rest after flushMs', async () => {
    const { output, got } = await setup([], 'batchSize=4&flushMs=200');
    send(output, 1, 10);
    await waitFor(() => output.stats().sent === 10, 'all sent');
    assert.deepEqual(
      got.map((g) => g.body.trimEnd().split('\n').length),
      [4, 4, 2],
    );
    assert.ok(got.every((g) => g.contentType === 'application/x-ndjson'));
    const resources = got.flatMap((g) =>
      g.body
        .trimEnd()
        .split('\n')
        .map((l) => (JSON.parse(l) as { Resource: string }).Resource),
    );
    assert.deepEqual(
      resources,
      Array.from({ length: 10 }, (_, i) => `/bin/r${i + 1}`),
    );
    assert.deepEqual(
      { sent: 10, failed: 0, dropped: 0, retries: 0, queued: 0 },
      (({ sent, failed, dropped, retries, queued }) => ({ sent, failed, dropped, retries, queued }))(
        output.stats(),
      ),
    );
  });

  it('format json: each batch is one JSON array', async () => {
    const { output, got } = await setup([], 'batchSize=3&format=json');
    send(output, 1, 3);
    await waitFor(() => output.stats().sent === 3, 'sent');
    assert.equal(got.length, 1);
    assert.equal(got[0]?.contentType, 'application/json');
    const arr = JSON.parse(got[0]?.body ?? '') as { Resource: string }[];
    assert.deepEqual(
      arr.map((a) => a.Resource),
      ['/bin/r1', '/bin/r2', '/bin/r3'],
    );
  });

  it('retries 503, 429 and a reset connection with doubling backoff, then delivers once', async () => {
    const { output, got } = await setup(
      [503, 429, 'reset'],
      'batchSize=2&backoffMs=40&maxBackoffMs=1000&retries=5',
    );
    send(output, 1, 2);
    await waitFor(() => output.stats().sent === 2, 'delivered after retries');
    assert.equal(got.length, 4, 'three failures then one success');
    assert.equal(output.stats().retries, 3);
    assert.equal(output.stats().failed, 0);
    assert.ok(
      got.every((g) => g.body === got[0]?.body),
      'the same batch each time',
    );
    // With the jitter source at 1 the delays are exactly 40, 80, 160 ms: each gap is at least that.
    const gaps = got.slice(1).map((g, i) => g.at - (got[i]?.at ?? 0));
    [40, 80, 160].forEach((min, i) =>
      assert.ok((gaps[i] ?? 0) >= min - 2, `gap ${i + 1} ${gaps[i]} >= ${min}`),
    );
  });

  it('gives up after the last retry and counts the batch as failed', async () => {
    const { output, got } = await setup([500, 500, 500, 500], 'batchSize=3&backoffMs=10&retries=2');
    send(output, 1, 3);
    await waitFor(() => output.stats().failed === 3, 'failed counted');
    assert.equal(got.length, 3, 'first attempt and two retries');
    assert.equal(output.stats().sent, 0);
    assert.equal(output.stats().lastError, 'HTTP 500');
    // The next batch goes on (the receiver answers 500 once more, then 200).
    send(output, 4, 3);
    await waitFor(() => output.stats().sent === 3, 'next batch delivered');
  });

  it('does not retry a 400', async () => {
    const { output, got } = await setup([400], 'batchSize=1&backoffMs=10&retries=5');
    send(output, 1, 1);
    await waitFor(() => output.stats().failed === 1, 'failed');
    assert.equal(got.length, 1);
    assert.equal(output.stats().retries, 0);
  });

  it('bounds its queue while the receiver hangs: drops are counted, nothing is lost silently', async () => {
    const { output, got, hanging } = await setup(['hang'], 'batchSize=2&queueSize=5&timeoutMs=60000');
    send(output, 1, 2); // the first batch goes out and hangs
    await waitFor(() => got.length === 1, 'first request received');
    send(output, 3, 10); // 5 fit in the queue, 5 are dropped
    const s = output.stats();
    assert.equal(s.dropped, 5);
    assert.equal(s.queued, 2 + 5);
    hanging[0]?.writeHead(200).end();
    await waitFor(() => output.stats().sent === 7, 'the rest delivered');
    const total = output.stats();
    assert.equal(total.sent + total.dropped + total.failed, 12, 'every alert is in exactly one counter');
  });

  it('close delivers what is queued before returning', async () => {
    const { output, got } = await setup([], 'batchSize=100&flushMs=60000');
    send(output, 1, 3);
    await output.close(5000);
    assert.equal(got.length, 1);
    assert.equal(output.stats().sent, 3);
    send(output, 4, 1);
    assert.equal(output.stats().dropped, 1, 'after close an alert is counted as dropped');
  });

  const delays: [number, number, number, number][] = [
    // backoffMs, maxBackoffMs, attempt, delay with jitter source 1
    [500, 30000, 1, 500],
    [500, 30000, 2, 1000],
    [500, 30000, 7, 30000],
    [500, 30000, 40, 30000],
  ];
  for (const [backoffMs, maxBackoffMs, attempt, expected] of delays) {
    it(`backoff ${backoffMs}/${maxBackoffMs} attempt ${attempt} waits ${expected} ms (half that with jitter 0)`, () => {
      assert.equal(
        backoffDelay({ backoffMs, maxBackoffMs }, attempt, () => 1),
        expected,
      );
      assert.equal(
        backoffDelay({ backoffMs, maxBackoffMs }, attempt, () => 0),
        expected / 2,
      );
    });
  }
});
