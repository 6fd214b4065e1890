// Worst-case admission time: hostile AdmissionReview bodies, each within the 3 MiB bound (huge arrays, deep
// nesting, many keys, long strings, many rules), sent one at a time to the real webhook application over
// loopback HTTP. Prints one JSON object: per shape the body size, wall and CPU time of the request, the response
// size, and the resident set size afterwards.
// Each shape is sent --repeat times (default 3); the medians are printed. Client and server share the process:
// CPU time covers both (bodies are encoded before the clock starts).
//   node --expose-gc --import tsx bench/webhook/worst-case.ts [--repeat 3] [--only <shape>] [--skip <shape>,...]
import http from 'node:http';
import os from 'node:os';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';
import { pino } from 'pino';
import { checkAdmissionObject } from '../../compiler/lint.js';
import { createWebhookApp, MAX_BODY_BYTES } from '../../webhook/app.js';
import { createWebhookMetrics } from '../../webhook/metrics.js';
import { createCheckerRule } from '../../webhook/rules/checker-rule.js';
import { KNOWN_KINDS } from '../../webhook/serve.js';
import { HOSTILE_SHAPES } from '../../test/webhook/support/hostile-shapes.js';

const onlyArg = process.argv.indexOf('--only');
const only = onlyArg > 0 ? process.argv[onlyArg + 1] : undefined;
const skipArg = process.argv.indexOf('--skip');
const repeatArg = process.argv.indexOf('--repeat');
const REPEAT = repeatArg > 0 ? Math.max(1, Number(process.argv[repeatArg + 1])) : 3;
const skip = new Set(skipArg > 0 ? (process.argv[skipArg + 1] ?? '').split(',') : []);

async function main(): Promise<void> {
  const app = createWebhookApp({
    rules: [createCheckerRule(checkAdmissionObject)],
    logger: pino({ level: 'silent' }),
    metrics: createWebhookMetrics(false),
    knownKinds: KNOWN_KINDS,
    isReady: () => true,
  });
  const server = http.createServer(app);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const post = (body: string | Buffer): Promise<{ status: number; bytes: number }> =>
    new Promise((resolve, reject) => {
      const req = http.request(
        {
          host: '127.0.0.1',
          port,
          path: '/validate',
          method: 'POST',
          agent,
          headers: { 'content-type': 'application/json' },
        },
        (res) => {
          let bytes = 0;
          res.on('data', (c: Buffer) => (bytes += c.length));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, bytes }));
        },
      );
      req.on('error', reject);
      req.end(body);
    });
  const gc = (globalThis as { gc?: () => void }).gc;
  // Warm-up: the schema validators compile on first use (the server does this before it listens).
  await post(
    JSON.stringify({
      apiVersion: 'admission.k8s.io/v1',
      kind: 'AdmissionReview',
      request: {
        uid: 'warm-up',
        kind: { group: 'security.runtime.com', version: 'v1', kind: 'RuntimePolicy' },
        operation: 'CREATE',
        object: {
          apiVersion: 'security.runtime.com/v1',
          kind: 'RuntimePolicy',
          metadata: { name: 'w' },
          spec: {},
        },
      },
    }),
  );
  const results: Record<string, unknown>[] = [];
  for (const shape of HOSTILE_SHAPES) {
    if ((only !== undefined && shape.name !== only) || skip.has(shape.name)) continue;
    // Encoded before the clock starts: the client's share of the CPU time is kept small.
    const body = Buffer.from(shape.body());
    const size = body.length;
    if (size > MAX_BODY_BYTES) throw new Error(`${shape.name}: ${size} bytes is over the bound`);
    const walls: number[] = [];
    const cpus: number[] = [];
    let res = { status: 0, bytes: 0 };
    for (let r = 0; r < REPEAT; r++) {
      gc?.();
      const cpu = process.cpuUsage();
      const t0 = performance.now();
      res = await post(body);
      walls.push(performance.now() - t0);
      const used = process.cpuUsage(cpu);
      cpus.push((used.user + used.system) / 1000);
    }
    gc?.();
    const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;
    results.push({
      shape: shape.name,
      bodyBytes: size,
      status: res.status,
      wallMs: Math.round(median(walls)),
      cpuMs: Math.round(median(cpus)),
      responseBytes: res.bytes,
      rssMiB: Math.round(process.memoryUsage().rss / 2 ** 20),
    });
    process.stderr.write(`${JSON.stringify(results[results.length - 1])}\n`);
  }
  agent.destroy();
  server.close();
  const worst = (key: string): number => results.reduce((m, r) => Math.max(m, Number(r[key])), 0);
  process.stdout.write(
    `${JSON.stringify({ repeat: REPEAT, worstCpuMs: worst('cpuMs'), worstWallMs: worst('wallMs'), loadAverage: os.loadavg(), results }, null, 2)}\n`,
  );
}

await main();
