// SIGTERM under load: the webhook runs as a child process (`rtctl webhook serve`), 16 keep-alive clients keep
// requests in flight, and SIGTERM arrives. The server keeps answering with /readyz failing, tells clients to
// close (Connection: close), drains, and exits 0; no request fails. A request still uploading when the
// listener closes is answered too.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import https from 'node:https';
import {
  TEST_DNS,
  createReview,
  createTestCertificates,
  createTestClient,
  type TestCertificates,
} from './support/harness.js';

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

const NODECLASS = {
  apiVersion: 'karpenter.k8s.aws/v1',
  kind: 'EC2NodeClass',
  metadata: { name: 'default' },
  spec: { metadataOptions: { httpTokens: 'required', httpPutResponseHopLimit: 1 } },
};

function startChild(
  certs: TestCertificates,
  shutdownDelayMs = 400,
): Promise<{ child: ChildProcess; port: number; lines: string[] }> {
  const child = spawn(
    process.execPath,
    [
      '--import',
      'tsx',
      'bin/rtctl.ts',
      'webhook',
      'serve',
      '--cert',
      certs.certFile,
      '--key',
      certs.keyFile,
      '--listen',
      '127.0.0.1:0',
      '--shutdown-delay',
      String(shutdownDelayMs),
      '--drain-timeout',
      '5000',
    ],
    { cwd: REPO, stdio: ['ignore', 'pipe', 'inherit'] },
  );
  const lines: string[] = [];
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`webhook did not start: ${lines.join('')}`)), 30_000);
    child.once('exit', (code) =>
      reject(new Error(`webhook exited early with ${String(code)}: ${lines.join('')}`)),
    );
    if (child.stdout === null) return reject(new Error('no stdout'));
    createInterface({ input: child.stdout }).on('line', (line) => {
      lines.push(line);
      const m = /"msg":"webhook listening"/.test(line) ? /"port":(\d+)/.exec(line) : null;
      if (m !== null) {
        clearTimeout(timer);
        child.removeAllListeners('exit');
        resolve({ child, port: Number(m[1]), lines });
      }
    });
  });
}

describe('webhook SIGTERM under load (child process)', function () {
  this.timeout(60_000);
  let certs: TestCertificates;
  before(() => {
    certs = createTestCertificates();
  });
  after(() => certs.cleanup());

  it('drains in-flight requests with zero failures and exits 0', async () => {
    const { child, port, lines } = await startChild(certs);
    const exited = new Promise<{ code: number | null; signal: string | null }>((resolve) =>
      child.once('exit', (code, signal) => resolve({ code, signal })),
    );
    let sigtermAt = 0;
    let completed = 0;
    let completedAfterSigterm = 0;
    let sawNotReady = false;
    const failures: string[] = [];
    const body = createReview(NODECLASS);

    const worker = async (): Promise<void> => {
      const client = createTestClient(port, certs.caCert, { maxSockets: 1 });
      try {
        for (;;) {
          const res = await client.post('/validate', body);
          if (
            res.status !== 200 ||
            (res.json as { response?: { allowed?: boolean } }).response?.allowed !== true
          ) {
            failures.push(`status ${res.status}: ${res.text.slice(0, 200)}`);
          }
          completed += 1;
          if (sigtermAt > 0) completedAfterSigterm += 1;
          // The server asks for the connection to close once it drains: like the API server, go elsewhere.
          if (res.headers['connection'] === 'close') return;
        }
      } catch (err) {
        failures.push(err instanceof Error ? err.message : String(err));
      } finally {
        client.close();
      }
    };
    const readiness = async (): Promise<void> => {
      const client = createTestClient(port, certs.caCert, { maxSockets: 1 });
      try {
        while (!sawNotReady) {
          const res = await client.request('GET', '/readyz');
          if (sigtermAt > 0 && res.status === 503) sawNotReady = true;
          await new Promise((r) => setTimeout(r, 20));
        }
      } catch (err) {
        failures.push(`readyz: ${err instanceof Error ? err.message : String(err)}`);
      } finally {
        client.close();
      }
    };

    const workers = Array.from({ length: 16 }, () => worker());
    const ready = readiness();
    await new Promise((r) => setTimeout(r, 700));
    const before = completed;
    sigtermAt = Date.now();
    child.kill('SIGTERM');
    await Promise.all([...workers, ready]);
    const exit = await exited;

    assert.deepEqual(failures, []);
    assert.ok(before >= 16, `${before} requests before SIGTERM`);
    assert.ok(completedAfterSigterm >= 16, `${completedAfterSigterm} requests answered after SIGTERM`);
    assert.ok(sawNotReady, '/readyz did not report 503 while draining');
    assert.deepEqual(exit, { code: 0, signal: null });
    assert.ok(
      lines.some((l) => l.includes('"msg":"stopped"')),
      lines.join('\n'),
    );
  });

  it('a request still uploading when the listener closes is answered before exit', async () => {
    const { child, port } = await startChild(certs, 0);
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    const body = Buffer.from(
      JSON.stringify(
        createReview({ ...NODECLASS, metadata: { name: 'slow', annotations: { pad: 'x'.repeat(200_000) } } }),
      ),
    );
    const answer = new Promise<{ status: number; text: string }>((resolve, reject) => {
      const req = https.request(
        {
          host: '127.0.0.1',
          port,
          method: 'POST',
          path: '/validate',
          ca: certs.caCert,
          servername: TEST_DNS,
          headers: { 'content-type': 'application/json', 'content-length': body.length },
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () =>
            resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString() }),
          );
        },
      );
      req.on('error', reject);
      // Half the body now, SIGTERM, the rest after the listener has closed.
      req.write(body.subarray(0, body.length / 2), () => {
        child.kill('SIGTERM');
        setTimeout(() => req.end(body.subarray(body.length / 2)), 300);
      });
    });
    const res = await answer;
    assert.equal(res.status, 200, res.text);
    assert.equal((JSON.parse(res.text) as { response: { allowed: boolean } }).response.allowed, true);
    assert.equal(await exited, 0);
  });
});
