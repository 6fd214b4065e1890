// The baseline of the webhook benchmark: a bare express HTTPS handler that parses the body like the webhook
// and answers allowed: true with express's res.json. With `one-write`, it answers as the webhook does, head and
// body in one write (the second baseline: what the webhook costs over a handler that writes as cheaply). Serves
// at most <requests per connection> requests on one connection, like the webhook (0: no limit). Prints
// {"port": n} once listening; exits on SIGTERM.
//   bare-server.ts <cert> <key> [<requests per connection>] [one-write]
import { readFileSync } from 'node:fs';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import express, { type Request, type Response } from 'express';

const [certFile, keyFile, perConnection, mode] = process.argv.slice(2);
if (certFile === undefined || keyFile === undefined) {
  process.stderr.write('usage: bare-server.ts <cert> <key> [<requests per connection>] [one-write]\n');
  process.exit(2);
}
const app = express();
app.post(
  '/validate',
  express.json({ limit: 3 * 1024 * 1024, type: () => true }),
  (req: Request, res: Response) => {
    const uid = (req.body as { request?: { uid?: unknown } }).request?.uid;
    const answer = {
      apiVersion: 'admission.k8s.io/v1',
      kind: 'AdmissionReview',
      response: { uid, allowed: true },
    };
    if (mode !== 'one-write') {
      res.json(answer);
      return;
    }
    const text = JSON.stringify(answer);
    res.writeHead(200, {
      'Content-Type': 'application/json; charset=utf-8',
      'Content-Length': Buffer.byteLength(text),
    });
    res.end(text);
  },
);
const server = https.createServer({ cert: readFileSync(certFile), key: readFileSync(keyFile) }, app);
server.keepAliveTimeout = 30_000;
server.maxRequestsPerSocket = Number(perConnection ?? 0);
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`${JSON.stringify({ port: (server.address() as AddressInfo).port })}\n`);
});
process.once('SIGTERM', () => {
  server.close();
  server.closeAllConnections();
});
