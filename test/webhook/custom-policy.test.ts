// Custom OPA rules: the loader and the rule, with OPA-ABI test modules of our own written in WAT and
// assembled at test time with wabt (Rego cannot be compiled here), through the real HTTPS webhook.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadCustomPolicies, loadCustomPolicy } from '../../webhook/opa/load-custom-policies.js';
import { readDenyMessages } from '../../webhook/rules/opa-rule.js';
import { assembleOpaTestModule } from './support/assemble-wat.js';
import {
  createReview,
  createTestClient,
  startTestWebhook,
  writeInto,
  type TestClient,
  type TestWebhook,
} from './support/harness.js';

const SAFE_NODECLASS = {
  apiVersion: 'karpenter.k8s.aws/v1',
  kind: 'EC2NodeClass',
  metadata: { name: 'default', labels: { team: 'a' } },
  spec: { role: 'KarpenterNodeRole' },
};

interface ReviewBody {
  response: { allowed: boolean; status: { message: string } };
}

describe('custom OPA policies: OPA-ABI test modules in WAT (ours, not Rego) assembled with wabt', function () {
  let dir: string;
  before(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'rtctl-opa-'));
    writeInto(dir, '10-deny-forbidden-label.wasm', await assembleOpaTestModule('deny-forbidden-label'));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('the loader finds the rtctl/deny entrypoint and evaluates the request', async () => {
    const [policy] = await loadCustomPolicies(dir);
    assert.ok(policy !== undefined);
    assert.equal(policy.name, '10-deny-forbidden-label.wasm');
    assert.deepEqual(policy.evaluateDeny({ operation: 'CREATE' }), [{ result: [] }]);
    assert.deepEqual(
      readDenyMessages(
        policy.name,
        policy.evaluateDeny({ object: { metadata: { labels: { x: 'forbidden-by-wasm' } } } }),
      ),
      [{ code: 'RT5020', path: '.', message: 'label forbidden-by-wasm is not allowed by the test policy' }],
    );
  });

  it('a module without a deny entrypoint is refused with its entrypoints named', async () => {
    await assert.rejects(
      loadCustomPolicy('allow-only.wasm', await assembleOpaTestModule('no-deny-entrypoint')),
      /allow-only\.wasm: no deny entrypoint \(found: rtctl\/allow\)/,
    );
  });

  it('a file that is not wasm is refused', async () => {
    await assert.rejects(
      loadCustomPolicy('junk.wasm', new TextEncoder().encode('not wasm')),
      /junk\.wasm: not an OPA wasm module/,
    );
  });

  it('deny messages: strings, {msg, path} objects, a bare true', () => {
    assert.deepEqual(readDenyMessages('p', [{ result: ['a', { msg: 'b', path: 'spec.x' }, 3] }]), [
      { code: 'RT5020', path: '.', message: 'a' },
      { code: 'RT5020', path: 'spec.x', message: 'b' },
      { code: 'RT5020', path: '.', message: '3' },
    ]);
    assert.deepEqual(readDenyMessages('p', [{ result: true }]), [
      { code: 'RT5020', path: '.', message: 'denied by p' },
    ]);
    assert.deepEqual(readDenyMessages('p', 'garbage'), []);
  });

  describe('through the webhook', () => {
    let server: TestWebhook;
    let client: TestClient;
    let abortDir: string;
    let abortServer: TestWebhook;
    let abortClient: TestClient;
    before(async () => {
      server = await startTestWebhook({ policyDir: dir });
      client = createTestClient(server.port, server.certs.caCert);
      abortDir = mkdtempSync(path.join(os.tmpdir(), 'rtctl-opa-abort-'));
      writeInto(abortDir, 'abort.wasm', await assembleOpaTestModule('abort'));
      abortServer = await startTestWebhook({ policyDir: abortDir });
      abortClient = createTestClient(abortServer.port, abortServer.certs.caCert);
    });
    after(async () => {
      client.close();
      abortClient.close();
      await server.stop();
      await abortServer.stop();
      rmSync(abortDir, { recursive: true, force: true });
    });

    it('allows a request the policy does not deny', async () => {
      const res = await client.post('/validate', createReview(SAFE_NODECLASS));
      assert.equal((res.json as ReviewBody).response.allowed, true, res.text);
    });

    it('denies with RT5020 and the policy message when the policy denies', async () => {
      const object = {
        ...SAFE_NODECLASS,
        metadata: { name: 'default', labels: { team: 'forbidden-by-wasm' } },
      };
      for (const dryRun of [false, true]) {
        const res = await client.post('/validate', createReview(object, { dryRun }));
        const body = res.json as ReviewBody;
        assert.equal(body.response.allowed, false);
        assert.equal(
          body.response.status.message,
          'RT5020 .: label forbidden-by-wasm is not allowed by the test policy',
        );
      }
    });

    it('keeps the checkers: an unsafe object is denied by both', async () => {
      const object = {
        apiVersion: 'karpenter.k8s.aws/v1',
        kind: 'EC2NodeClass',
        metadata: { name: 'forbidden-by-wasm' },
        spec: { metadataOptions: { httpTokens: 'optional' } },
      };
      const body = (await client.post('/validate', createReview(object))).json as ReviewBody;
      assert.deepEqual(
        body.response.status.message.split('\n').map((l) => l.split(':')[0]),
        ['RT5001 spec.metadataOptions.httpTokens', 'RT5020 .'],
      );
    });

    it('a policy that aborts denies with RT5021 (fail closed), is logged, and the server keeps serving', async () => {
      for (let i = 0; i < 3; i++) {
        const res = await abortClient.post('/validate', createReview(SAFE_NODECLASS));
        assert.equal(res.status, 200);
        const body = res.json as ReviewBody;
        assert.equal(body.response.allowed, false);
        assert.match(
          body.response.status.message,
          /^RT5021 \.: custom policy abort\.wasm failed to evaluate/,
        );
      }
      assert.ok(abortServer.logLines.some((l) => l.includes('policy aborted on purpose')));
      assert.equal((await abortClient.request('GET', '/healthz')).status, 200);
    });
  });
});
