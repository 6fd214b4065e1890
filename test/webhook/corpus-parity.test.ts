// `rtctl lint` and the webhook give the same codes at the same paths: every admission fixture object, every
// conformance fixture and, when present, every document of the external corpus (61 real-world policies; see
// test/support/corpus.ts) is linted as a file and sent as an AdmissionReview to the real webhook over HTTPS.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseAllDocuments, stringify } from 'yaml';
import { pointerToPath } from '../../compiler/diagnostics/diagnostic.js';
import { lintTexts } from '../../compiler/lint.js';
import { CORPUS_DIR, hasCorpus, itOnCorpus } from '../support/corpus.js';
import { CONFORMANCE_FIXTURES } from '../support/paths.js';
import {
  createReview,
  createTestClient,
  startTestWebhook,
  type TestClient,
  type TestWebhook,
} from './support/harness.js';

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const FIXTURES = path.join(REPO, 'test/fixtures/webhook/admission');

interface Sample {
  label: string;
  object: Record<string, unknown>;
}

/** Every document of every YAML file of `dir`, labelled `<label> <file>#<index>`. */
function loadDocuments(dir: string, label: string): Sample[] {
  return readdirSync(dir)
    .filter((f) => f.endsWith('.yaml'))
    .sort()
    .flatMap((f) =>
      parseAllDocuments(readFileSync(path.join(dir, f), 'utf8'))
        .map((d, i) => ({ label: `${label} ${f}#${i}`, object: d.toJS() as Record<string, unknown> }))
        .filter((s) => typeof s.object === 'object' && s.object !== null),
    );
}

function loadSamples(): Sample[] {
  const corpus = hasCorpus() ? loadDocuments(CORPUS_DIR, 'corpus') : [];
  const conformance = loadDocuments(CONFORMANCE_FIXTURES, 'conformance');
  const fixtures = readdirSync(FIXTURES)
    .filter((f) => f.endsWith('.yaml'))
    .sort()
    .flatMap((f) =>
      parseAllDocuments(readFileSync(path.join(FIXTURES, f), 'utf8')).map((d) => {
        const c = d.toJS() as { name: string; object: Record<string, unknown> };
        return { label: `fixture ${f}: ${c.name}`, object: c.object };
      }),
    );
  return [...corpus, ...conformance, ...fixtures];
}

describe('lint and webhook parity (same codes, same paths)', function () {
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

  const samples = loadSamples();
  it('has the admission and conformance fixtures', () => {
    const own = samples.filter((s) => !s.label.startsWith('corpus '));
    assert.ok(own.length >= 40 + 10, `${own.length} samples`);
  });
  itOnCorpus('has the corpus', () => {
    const corpus = samples.filter((s) => s.label.startsWith('corpus '));
    assert.ok(corpus.length >= 61, `${corpus.length} corpus samples`);
  });

  for (const s of samples) {
    it(s.label, async () => {
      const lint = lintTexts([{ file: 'sample.yaml', text: stringify(s.object) }]);
      const fromLint = lint.diagnostics
        .filter((d) => d.document === 0)
        .map((d) => `${d.severity === 'error' ? 'E' : 'W'} ${d.code} ${pointerToPath(d.pointer)}`)
        .sort();
      const res = await client.post('/validate', createReview(s.object));
      assert.equal(res.status, 200, res.text);
      const response = (
        res.json as { response: { allowed: boolean; status: { message: string }; warnings?: string[] } }
      ).response;
      const heads = (lines: string[], tag: string): string[] =>
        lines.map((l) => `${tag} ${/^(RT\d{4} .+?): /.exec(l)?.[1] ?? l}`);
      const fromWebhook = [
        ...heads(response.allowed ? [] : response.status.message.split('\n'), 'E'),
        ...heads(response.warnings ?? [], 'W'),
      ].sort();
      assert.deepEqual(fromWebhook, fromLint);
      assert.equal(response.allowed, !fromLint.some((l) => l.startsWith('E ')));
    });
  }
});
