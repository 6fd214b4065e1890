// The webhook server's HTTP behaviour over real HTTPS on loopback: health, readiness, metrics, bad bodies,
// the body bound, internal errors (500 with the uid logged, still serving) and HTTPS only.
import assert from 'node:assert/strict';
import http from 'node:http';
import { MAX_BODY_BYTES } from '../../webhook/app.js';
import type { ObjectCheck } from '../../webhook/rules/checker-rule.js';
import { checkAdmissionObject } from '../../compiler/lint.js';
import {
  createReview,
  createTestClient,
  startTestWebhook,
  type TestClient,
  type TestWebhook,
} from './support/harness.js';

const UNSAFE = {
  apiVersion: 'infrastructure.cluster.x-k8s.io/v1beta2',
  kind: 'AWSMachineTemplate',
  metadata: { name: 'w' },
  spec: { template: { spec: {} } },
};

/** A stand-in checker that throws (a bug) for objects named `explode`, the real checks otherwise. */
const throwingCheck: ObjectCheck = (object, context) => {
  const name = (object as { metadata?: { name?: unknown } }).metadata?.name;
  if (name === 'explode') throw new Error('stand-in checker bug');
  return checkAdmissionObject(object, context);
};

describe('webhook server over HTTPS', function () {
  let server: TestWebhook;
  let client: TestClient;
  before(async () => {
    server = await startTestWebhook({ check: throwingCheck });
    client = createTestClient(server.port, server.certs.caCert);
  });
  after(async () => {
    client.close();
    await server.stop();
  });

  it('answers /healthz and /readyz', async () => {
    assert.equal((await client.request('GET', '/healthz')).status, 200);
    const ready = await client.request('GET', '/readyz');
    assert.equal(ready.status, 200);
    assert.equal(ready.text, 'ok');
  });

  it('counts requests by kind and result and records latency in /metrics', async () => {
    await client.post('/validate', createReview(UNSAFE));
    await client.post(
      '/validate',
      createReview({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'a' } }),
    );
    await client.post('/validate', '{');
    const text = (await client.request('GET', '/metrics')).text;
    assert.match(text, /rtctl_webhook_requests_total\{kind="AWSMachineTemplate",result="denied"\} [1-9]/);
    assert.match(text, /rtctl_webhook_requests_total\{kind="Namespace",result="allowed"\} [1-9]/);
    assert.match(text, /rtctl_webhook_requests_total\{kind="unknown",result="bad_request"\} [1-9]/);
    assert.match(
      text,
      /rtctl_webhook_request_duration_seconds_bucket\{le="\+Inf",kind="AWSMachineTemplate"\} [1-9]/,
    );
    assert.match(
      text,
      /rtctl_webhook_request_duration_seconds_bucket\{le="0.0005",kind="AWSMachineTemplate"\} \d/,
    );
    assert.match(text, /process_cpu_user_seconds_total/);
  });

  it('labels unknown kinds as "other" (bounded metric labels)', async () => {
    await client.post(
      '/validate',
      createReview({ apiVersion: 'x.example/v1', kind: `Random${Date.now()}`, metadata: { name: 'r' } }),
    );
    const text = (await client.request('GET', '/metrics')).text;
    assert.match(text, /kind="other",result="allowed"/);
    assert.doesNotMatch(text, /kind="Random/);
  });

  const badBodies: { name: string; body: string; reason: RegExp }[] = [
    { name: 'not JSON', body: '{"apiVersion":', reason: /^RT5030 body is not valid JSON$/ },
    { name: 'a JSON string', body: '"AdmissionReview"', reason: /^RT5030 / },
    { name: 'a JSON array', body: '[]', reason: /^RT5030 body: expected an AdmissionReview object$/ },
    { name: 'empty', body: '', reason: /^RT5030 / },
    {
      name: 'v1beta1 review',
      body: JSON.stringify({ ...createReview(UNSAFE), apiVersion: 'admission.k8s.io/v1beta1' }),
      reason: /apiVersion: "admission.k8s.io\/v1beta1"; only admission.k8s.io\/v1 is supported/,
    },
    {
      name: 'wrong kind',
      body: JSON.stringify({ ...createReview(UNSAFE), kind: 'Review' }),
      reason: /kind: must be "AdmissionReview"/,
    },
    {
      name: 'no request',
      body: JSON.stringify({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview' }),
      reason: /body: missing request/,
    },
    {
      name: 'uid not a string',
      body: JSON.stringify({
        ...createReview(UNSAFE),
        request: { ...(createReview(UNSAFE)['request'] as object), uid: 5 },
      }),
      reason: /request\.uid: must be string/,
    },
    {
      name: 'CREATE without an object',
      body: JSON.stringify({
        ...createReview(UNSAFE),
        request: { ...(createReview(UNSAFE)['request'] as object), object: null },
      }),
      reason: /request\.object: must be object/,
    },
    {
      name: 'unknown operation',
      body: JSON.stringify({
        ...createReview(UNSAFE),
        request: { ...(createReview(UNSAFE)['request'] as object), operation: 'PATCH' },
      }),
      reason: /request\.operation/,
    },
  ];
  for (const c of badBodies) {
    it(`400 with a reason for a bad body: ${c.name}`, async () => {
      const res = await client.post('/validate', c.body);
      assert.equal(res.status, 400, res.text);
      const body = res.json as { kind: string; code: number; message: string };
      assert.equal(body.kind, 'Status');
      assert.equal(body.code, 400);
      assert.match(body.message, c.reason);
    });
  }

  it('413 for a body over 3 MiB, then keeps serving', async () => {
    const review = createReview({
      ...UNSAFE,
      metadata: { name: 'w', annotations: { big: 'x'.repeat(MAX_BODY_BYTES) } },
    });
    const res = await client.post('/validate', review);
    assert.equal(res.status, 413);
    assert.match((res.json as { message: string }).message, /larger than 3145728 bytes/);
    assert.equal((await client.request('GET', '/healthz')).status, 200);
  });

  it('a body just under 3 MiB is decided', async () => {
    const review = createReview({
      ...UNSAFE,
      metadata: { name: 'w', annotations: { big: 'x'.repeat(MAX_BODY_BYTES - 4096) } },
    });
    const res = await client.post('/validate', review);
    assert.equal(res.status, 200);
    assert.equal((res.json as { response: { allowed: boolean } }).response.allowed, false);
  });

  it('DELETE is allowed without checks', async () => {
    const res = await client.post(
      '/validate',
      createReview(UNSAFE, { operation: 'DELETE', oldObject: UNSAFE }),
    );
    assert.equal((res.json as { response: { allowed: boolean } }).response.allowed, true);
  });

  it('an internal error answers 500 with a generic message, logs the uid and stack, and the server keeps serving', async () => {
    const review = createReview(
      { ...UNSAFE, metadata: { name: 'explode' } },
      { uid: 'uid-of-the-failing-request' },
    );
    const res = await client.post('/validate', review);
    assert.equal(res.status, 500);
    assert.equal(
      (res.json as { message: string }).message,
      'internal error evaluating request uid-of-the-failing-request',
    );
    assert.doesNotMatch(res.text, /stand-in checker bug/);
    const line = server.logLines.find((l) => l.includes('uid-of-the-failing-request'));
    assert.ok(line !== undefined);
    assert.match(line, /stand-in checker bug/);
    assert.match(line, /"stack"/);
    const after = await client.post('/validate', createReview(UNSAFE));
    assert.equal(after.status, 200);
  });

  it('unknown paths answer 404; GET /validate is not accepted', async () => {
    assert.equal((await client.request('GET', '/nope')).status, 404);
    assert.equal((await client.request('GET', '/validate')).status, 404);
  });

  it('speaks HTTPS only: plain HTTP gets no HTTP answer', async () => {
    const outcome = await new Promise<string>((resolve) => {
      const req = http.request(
        { host: '127.0.0.1', port: server.port, path: '/healthz', timeout: 2000 },
        (res) => resolve(`status ${String(res.statusCode)}`),
      );
      req.on('error', (e) => resolve(`error ${e.message}`));
      req.on('timeout', () => req.destroy(new Error('timeout')));
      req.end();
    });
    assert.match(outcome, /^error /);
  });
});
