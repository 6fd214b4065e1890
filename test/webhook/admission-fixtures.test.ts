// Table-driven over the AdmissionReview fixtures in test/fixtures/webhook/admission: every case is sent as
// CREATE, UPDATE and dryRun CREATE to the real webhook over HTTPS on loopback, with real certificates.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseAllDocuments } from 'yaml';
import {
  createReview,
  createTestClient,
  startTestWebhook,
  type TestClient,
  type TestWebhook,
} from './support/harness.js';

const FIXTURES = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../fixtures/webhook/admission');

interface Expected {
  code: string;
  path: string;
}

interface FixtureCase {
  file: string;
  name: string;
  object: Record<string, unknown>;
  expect: { allowed: boolean; errors?: Expected[]; warnings?: Expected[] };
}

function loadCases(): FixtureCase[] {
  const out: FixtureCase[] = [];
  for (const file of readdirSync(FIXTURES)
    .filter((f) => f.endsWith('.yaml'))
    .sort()) {
    for (const doc of parseAllDocuments(readFileSync(path.join(FIXTURES, file), 'utf8'))) {
      if (doc.errors.length > 0) throw new Error(`${file}: ${doc.errors[0]?.message ?? 'YAML error'}`);
      out.push({ file, ...(doc.toJS() as Omit<FixtureCase, 'file'>) });
    }
  }
  return out;
}

/** `RTnnnn <path>: <message>` → `RTnnnn <path>`, the part expectations name. */
function headsOf(lines: readonly string[]): string[] {
  return lines
    .map((line) => {
      const m = /^(RT\d{4}) (.+?): \S/.exec(line);
      assert.ok(m !== null, `line is not "RTnnnn <path>: <message>": ${line}`);
      return `${m[1] ?? ''} ${m[2] ?? ''}`;
    })
    .sort();
}

function expectedHeads(items: Expected[] | undefined): string[] {
  return (items ?? []).map((e) => `${e.code} ${e.path}`).sort();
}

interface ReviewBody {
  response: { uid: string; allowed: boolean; status: { code: number; message: string }; warnings?: string[] };
}

const cases = loadCases();

describe('webhook admission fixtures (real HTTPS on loopback)', function () {
  let server: TestWebhook;
  let client: TestClient;
  before(async () => {
    server = await startTestWebhook();
    client = createTestClient(server.port, server.certs.caCert);
  });
  after(async () => {
    client.close();
    await server.stop();
  });

  it('has cases for every kind and posture annotation', () => {
    const kinds = new Set(cases.map((c) => `${String(c.object['apiVersion'])} ${String(c.object['kind'])}`));
    assert.ok(kinds.size >= 19, [...kinds].join(', '));
  });

  const variants = [
    { label: 'CREATE', operation: 'CREATE', dryRun: false },
    { label: 'UPDATE', operation: 'UPDATE', dryRun: false },
    { label: 'CREATE dryRun', operation: 'CREATE', dryRun: true },
  ] as const;

  for (const c of cases) {
    for (const v of variants) {
      const errs = expectedHeads(c.expect.errors);
      const warns = expectedHeads(c.expect.warnings);
      const title = `${c.file}: ${c.name} [${v.label}] → allowed=${String(c.expect.allowed)}${errs.length ? ` errors ${errs.join(', ')}` : ''}${warns.length ? ` warnings ${warns.join(', ')}` : ''}`;
      it(title, async () => {
        const oldObject =
          v.operation === 'UPDATE' ? { ...c.object, metadata: { name: 'previous' } } : undefined;
        const review = createReview(c.object, {
          operation: v.operation,
          dryRun: v.dryRun,
          ...(oldObject === undefined ? {} : { oldObject }),
        });
        const uid = (review['request'] as { uid: string }).uid;
        const res = await client.post('/validate', review);
        assert.equal(res.status, 200, res.text);
        const body = res.json as ReviewBody;
        assert.equal((res.json as { apiVersion: string }).apiVersion, 'admission.k8s.io/v1');
        assert.equal(body.response.uid, uid);
        assert.equal(body.response.allowed, c.expect.allowed, res.text);
        assert.equal(body.response.status.code, c.expect.allowed ? 200 : 403);
        const errorLines = c.expect.allowed ? [] : body.response.status.message.split('\n');
        assert.deepEqual(headsOf(errorLines), errs, body.response.status.message);
        assert.deepEqual(headsOf(body.response.warnings ?? []), warns);
        // The API server may cut warnings longer than 256 characters.
        for (const w of body.response.warnings ?? [])
          assert.ok(w.length <= 256, `${w.length} characters: ${w}`);
      });
    }
  }
});
