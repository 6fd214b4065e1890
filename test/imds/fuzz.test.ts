// Fuzzed paths, methods and headers (fast-check) against the real server on loopback: every answer is one of
// the statuses the service defines, never a 500, and the server keeps serving. Raw garbage on the socket too.
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import fc from 'fast-check';
import '../support/property-seed.js';
import { after, before, describe, it } from 'mocha';
import { sendRequest, startHarness, type Harness } from './support/harness.js';

const ALLOWED = new Set([200, 400, 401, 403, 404, 405]);
const SEGMENTS = [
  'latest',
  'meta-data',
  'user-data',
  'api',
  'token',
  'iam',
  'info',
  'security-credentials',
  'rtctl-node-role',
  'placement',
  'tags',
  'instance',
  'public-keys',
  '0',
  '..',
  '.',
  '',
  '%2e%2e',
  '%00',
  '%',
  '%ZZ',
  'identity-credentials',
  'compute',
  'compute-instance',
];

const segment = fc.oneof(
  fc.constantFrom(...SEGMENTS),
  fc.stringMatching(/^[A-Za-z0-9._~%:@!$&'()*+,;=-]{0,12}$/),
);
const pathArb = fc.array(segment, { maxLength: 7 }).map((parts) => `/${parts.join('/')}`);
const headerValue = fc.stringMatching(/^[\x21-\x7e]{0,40}$/);
const headersArb = fc.record(
  {
    'X-cloud-metadata-token': headerValue,
    'X-cloud-metadata-token-ttl-seconds': fc.oneof(
      headerValue,
      fc.integer({ min: -10, max: 30000 }).map(String),
    ),
    'X-Forwarded-For': headerValue,
    'Content-Type': headerValue,
  },
  { requiredKeys: [] },
);
const methodArb = fc.constantFrom('GET', 'HEAD', 'PUT', 'POST', 'DELETE', 'OPTIONS', 'PATCH');

describe('imds fuzz: paths, methods and headers (fast-check)', function () {
  this.timeout(60000);
  for (const options of [
    { httpTokens: 'optional' },
    { httpTokens: 'required', instanceMetadataTags: 'enabled' },
    { httpEndpoint: 'disabled' },
  ]) {
    describe(JSON.stringify(options), () => {
      let h: Harness;
      before(async () => {
        h = await startHarness({}, { metadataOptions: options });
      });
      after(async () => h.close());

      it('answers only defined statuses, never 500, and keeps serving', async () => {
        await fc.assert(
          fc.asyncProperty(methodArb, pathArb, headersArb, async (method, path, headers) => {
            const res = await sendRequest(h.metadataUrl, method, path, headers);
            assert.ok(
              ALLOWED.has(res.status),
              `${method} ${path} ${JSON.stringify(headers)} → ${res.status}`,
            );
            if (res.status >= 400 && method !== 'HEAD')
              assert.match(res.body, /<title>\d{3} - [^<]+<\/title>/);
          }),
          { numRuns: 150 },
        );
        const alive = await sendRequest(h.metadataUrl, 'PUT', '/latest/api/token', {
          'X-cloud-metadata-token-ttl-seconds': '60',
        });
        assert.equal(alive.status, options.httpEndpoint === 'disabled' ? 403 : 200);
      });
    });
  }

  describe('raw bytes on the socket', () => {
    let h: Harness;
    before(async () => {
      h = await startHarness();
    });
    after(async () => h.close());
    it('malformed requests get 400 or a closed connection; the next good request is served', async () => {
      const url = new URL(h.metadataUrl);
      await fc.assert(
        fc.asyncProperty(fc.uint8Array({ minLength: 1, maxLength: 300 }), async (bytes) => {
          const reply = await new Promise<string>((resolve) => {
            const s = connect(Number(url.port), url.hostname);
            let data = '';
            s.on('data', (d: Buffer) => (data += d.toString('latin1')));
            s.on('error', () => resolve(data));
            s.on('close', () => resolve(data));
            s.setTimeout(300, () => s.destroy());
            s.end(Buffer.concat([Buffer.from(bytes), Buffer.from('\r\n\r\n')]));
          });
          assert.ok(
            !/^HTTP\/1\.[01] 5\d\d/.test(reply),
            `5xx for ${Buffer.from(bytes).toString('hex')}: ${reply.slice(0, 80)}`,
          );
        }),
        { numRuns: 100 },
      );
      const res = await sendRequest(h.metadataUrl, 'GET', '/latest/meta-data/instance-id');
      assert.equal(res.status, 200);
    });
  });

  describe('management endpoint', () => {
    let h: Harness;
    before(async () => {
      h = await startHarness();
    });
    after(async () => h.close());
    it('any JSON body to modify answers 200 or 400, never 500', async () => {
      const value = fc.oneof(
        fc.string({ maxLength: 12 }),
        fc.integer(),
        fc.double(),
        fc.boolean(),
        fc.constant(null),
        fc.constantFrom('enabled', 'disabled', 'optional', 'required', 'i-0123456789abcdef0'),
      );
      const key = fc.oneof(
        fc.constantFrom(
          'instance-id',
          'http-endpoint',
          'http-tokens',
          'http-put-response-hop-limit',
          'instance-metadata-tags',
        ),
        fc.string({ maxLength: 8 }),
      );
      const body = fc.oneof(fc.dictionary(key, value, { maxKeys: 5 }), fc.jsonValue({ maxDepth: 2 }));
      await fc.assert(
        fc.asyncProperty(body, async (b) => {
          const res = await h.modify(b);
          assert.ok(
            res.status === 200 || res.status === 400,
            `${JSON.stringify(b)} → ${res.status} ${res.body}`,
          );
          const parsed = JSON.parse(res.body) as Record<string, unknown>;
          assert.ok(res.status === 200 ? 'InstanceMetadataOptions' in parsed : 'Error' in parsed);
        }),
        { numRuns: 200 },
      );
    });
  });
});
