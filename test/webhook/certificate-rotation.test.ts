// Certificate rotation: the serving certificate and key are replaced on disk (a new CA, a half-written pair on
// the way); new connections get the new certificate, open keep-alive connections keep working, and a client
// trusting both CAs sees zero failed requests throughout.
import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { copyFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import tls from 'node:tls';
import { generateWebhookCertificates } from '../../webhook/certs.js';
import {
  TEST_DNS,
  createReview,
  createTestCertificates,
  createTestClient,
  startTestWebhook,
  type TestCertificates,
  type TestWebhook,
} from './support/harness.js';

const NAMESPACE = {
  apiVersion: 'v1',
  kind: 'Namespace',
  metadata: { name: 'a', annotations: { 'runtime-file-posture': 'block' } },
};

/** The SHA-256 fingerprint of the certificate a fresh TLS connection is served. */
function servedFingerprint(port: number, ca: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = tls.connect({ host: '127.0.0.1', port, servername: TEST_DNS, ca }, () => {
      const fp = socket.getPeerCertificate().fingerprint256;
      socket.end();
      resolve(fp);
    });
    socket.on('error', reject);
  });
}

function fingerprintOf(pem: string): string {
  return new X509Certificate(pem).fingerprint256;
}

describe('webhook certificate rotation', function () {
  this.timeout(30_000);
  let certs: TestCertificates;
  let server: TestWebhook;
  before(async () => {
    certs = createTestCertificates();
    server = await startTestWebhook({ certs, reloadIntervalMs: 100 });
  });
  after(async () => {
    await server.stop();
    certs.cleanup();
  });

  it('reloads the pair from disk without dropping a request or an open connection', async () => {
    const next = generateWebhookCertificates({ dnsNames: [TEST_DNS] });
    const both = [certs.caCert, next.caCert];
    const oldFingerprint = fingerprintOf(certs.tlsCert);
    const newFingerprint = fingerprintOf(next.tlsCert);
    assert.equal(await servedFingerprint(server.port, both), oldFingerprint);

    // An open keep-alive connection made with the old certificate.
    const pinned = createTestClient(server.port, certs.caCert, { maxSockets: 1 });
    const first = await pinned.post('/validate', createReview(NAMESPACE));
    assert.equal(first.status, 200);

    // Load: fresh connections (no keep-alive) trusting both CAs, all through the rotation.
    let failures = 0;
    let completed = 0;
    let stop = false;
    const load = (async () => {
      while (!stop) {
        const c = createTestClient(server.port, both, { maxSockets: 1 });
        try {
          const res = await c.post('/validate', createReview(NAMESPACE));
          if (res.status === 200) completed += 1;
          else failures += 1;
        } catch {
          failures += 1;
        } finally {
          c.close();
        }
      }
    })();

    // Rotate as a careless writer would: the key first (a mismatched pair for a while), then the certificate.
    await new Promise((r) => setTimeout(r, 300));
    writeFileSync(path.join(certs.dir, 'tls.key.new'), next.tlsKey);
    copyFileSync(path.join(certs.dir, 'tls.key.new'), certs.keyFile);
    // Wait until the server has seen the mismatched pair (and refused it), however slow the machine is.
    const seenBy = Date.now() + 10_000;
    while (!server.logLines.some((l) => l.includes('do not form a pair yet'))) {
      assert.ok(Date.now() < seenBy, 'the key change was not noticed within 10 s');
      await new Promise((r) => setTimeout(r, 20));
    }
    assert.equal(
      await servedFingerprint(server.port, both),
      oldFingerprint,
      'a mismatched pair must not be used',
    );
    writeFileSync(certs.certFile, next.tlsCert);

    const deadline = Date.now() + 10_000;
    while ((await servedFingerprint(server.port, both)) !== newFingerprint) {
      assert.ok(Date.now() < deadline, 'the new certificate was not served within 10 s');
      await new Promise((r) => setTimeout(r, 50));
    }
    await new Promise((r) => setTimeout(r, 300));
    stop = true;
    await load;

    // The connection opened before the rotation still works, on the same socket.
    const again = await pinned.post('/validate', createReview(NAMESPACE));
    assert.equal(again.status, 200);
    assert.equal(again.localPort, first.localPort, 'the keep-alive connection was dropped');
    pinned.close();

    // A client that trusts only the new CA now connects.
    const fresh = createTestClient(server.port, next.caCert);
    assert.equal((await fresh.request('GET', '/healthz')).status, 200);
    fresh.close();

    assert.equal(failures, 0);
    assert.ok(completed > 5, `${completed} requests during the rotation`);
    assert.ok(server.logLines.some((l) => l.includes('do not form a pair yet')));
    assert.ok(server.logLines.some((l) => l.includes('certificate reloaded')));
  });
});
