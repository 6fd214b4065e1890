// Benchmark of the admission webhook: throughput, server CPU per review and p50/p99 latency of POST /validate
// with a realistic policy (the RuntimePolicy of system-files-policy.yaml and a Karpenter EC2NodeClass,
// alternating), against a bare express HTTPS handler answering allowed: true, measured in the same run. Both
// servers run as child processes; the webhook runs as it ships (compiled by tsc into build/bench-webhook: the
// tsx loader keeps function names with a call per closure created, a cost the shipped code does not have);
// `--source` runs it through tsx instead.
//
// Only reviews count: a 2xx whose body is an AdmissionReview answering the uid that was sent (every request
// has its own uid). Anything else (non-2xx, a body that is not such a review, a socket error, a timeout) is
// counted under its name and makes the run invalid (`valid: false`, `problems` says why, and the figures are
// null), since a refusal is cheaper than a review and would flatter the figures. Both servers get the same
// client: autocannon with 10 connections, each closed and reopened after the webhook's documented 1 000
// requests per connection (DEFAULT_CONNECTION_LIMITS.maxRequestsPerSocket; the bare server gets the same
// limit), and a paced 1 000 requests/s over a keep-alive pool of at most 64 connections. A second baseline,
// the bare handler answering in one write as the webhook does, is measured at the maximum rate too. Prints one
// JSON object on stdout.
//   node --import tsx bench/webhook/run.ts [--duration <seconds per measurement>] [--rounds <n>] [--source]
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import https from 'node:https';
import { performance } from 'node:perf_hooks';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { parse } from 'yaml';
import { generateWebhookCertificates } from '../../webhook/certs.js';
import { DEFAULT_CONNECTION_LIMITS } from '../../webhook/connection-guard.js';

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const BENCH_POLICY = path.join(REPO, 'bench', 'webhook', 'system-files-policy.yaml');
const BUILD_DIR = path.join(REPO, 'build', 'bench-webhook');
const argOf = (name: string): string | undefined => {
  const i = process.argv.indexOf(name);
  return i > 0 ? process.argv[i + 1] : undefined;
};
const DURATION = Number(argOf('--duration') ?? 3);
const ROUNDS = Number(argOf('--rounds') ?? 5);
const FROM_SOURCE = process.argv.includes('--source');
const CONNECTIONS = 10;
const PACED_SOCKETS = 64;
const PER_CONNECTION = DEFAULT_CONNECTION_LIMITS.maxRequestsPerSocket;
const UID_MARK = 'BENCH-UID-MARK';

/** A review body split around its uid, so every request carries a uid of its own. */
interface BodyTemplate {
  head: string;
  tail: string;
}

function review(object: Record<string, unknown>): BodyTemplate {
  const [group, version] = String(object['apiVersion']).includes('/')
    ? String(object['apiVersion']).split('/')
    : ['', String(object['apiVersion'])];
  const text = JSON.stringify({
    apiVersion: 'admission.k8s.io/v1',
    kind: 'AdmissionReview',
    request: {
      uid: UID_MARK,
      kind: { group, version, kind: object['kind'] },
      resource: { group, version, resource: `${String(object['kind']).toLowerCase()}s` },
      operation: 'CREATE',
      userInfo: { username: 'kubernetes-admin', groups: ['system:masters'] },
      object,
      oldObject: null,
      dryRun: false,
    },
  });
  const at = text.indexOf(UID_MARK);
  return { head: text.slice(0, at), tail: text.slice(at + UID_MARK.length) };
}

/** What the answers to one measurement were. */
interface Tally {
  /** 2xx with an AdmissionReview answering the uid sent. */
  reviews: number;
  allowed: number;
  denied: number;
  /** Answers by status, other than 2xx. */
  non2xx: number;
  statuses: Record<string, number>;
  /** 2xx whose body is not an AdmissionReview for the uid sent. */
  invalid: number;
  errors: number;
  timeouts: number;
}

function newTally(): Tally {
  return { reviews: 0, allowed: 0, denied: 0, non2xx: 0, statuses: {}, invalid: 0, errors: 0, timeouts: 0 };
}

/** Counts one answer into `t`. */
function countAnswer(t: Tally, status: number, body: string, uid: string | undefined): void {
  if (status < 200 || status > 299) {
    t.non2xx += 1;
    t.statuses[String(status)] = (t.statuses[String(status)] ?? 0) + 1;
    return;
  }
  let answer: unknown;
  try {
    answer = JSON.parse(body);
  } catch {
    t.invalid += 1;
    return;
  }
  const a = answer as {
    apiVersion?: unknown;
    kind?: unknown;
    response?: { uid?: unknown; allowed?: unknown };
  };
  if (
    a.apiVersion !== 'admission.k8s.io/v1' ||
    a.kind !== 'AdmissionReview' ||
    uid === undefined ||
    a.response?.uid !== uid ||
    typeof a.response.allowed !== 'boolean'
  ) {
    t.invalid += 1;
    return;
  }
  t.reviews += 1;
  if (a.response.allowed) t.allowed += 1;
  else t.denied += 1;
}

function addTallies(ts: readonly Tally[]): Tally {
  const sum = newTally();
  for (const t of ts) {
    sum.reviews += t.reviews;
    sum.allowed += t.allowed;
    sum.denied += t.denied;
    sum.non2xx += t.non2xx;
    sum.invalid += t.invalid;
    sum.errors += t.errors;
    sum.timeouts += t.timeouts;
    for (const [s, n] of Object.entries(t.statuses)) sum.statuses[s] = (sum.statuses[s] ?? 0) + n;
  }
  return sum;
}

function failures(t: Tally): number {
  return t.non2xx + t.invalid + t.errors + t.timeouts;
}

function startChild(argv: string[], ready: RegExp): Promise<{ child: ChildProcess; port: number }> {
  const child = spawn(process.execPath, argv, { cwd: REPO, stdio: ['ignore', 'pipe', 'inherit'] });
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${argv.join(' ')} did not start`)), 60_000);
    child.once('exit', (code) => reject(new Error(`${argv.join(' ')} exited with ${String(code)}`)));
    if (child.stdout === null) return reject(new Error('no stdout'));
    createInterface({ input: child.stdout }).on('line', (line) => {
      const m = ready.test(line) ? /"port":(\d+)/.exec(line) : null;
      if (m !== null) {
        clearTimeout(timer);
        child.removeAllListeners('exit');
        resolve({ child, port: Number(m[1]) });
      }
    });
  });
}

/** The webhook as it ships: tsc output of the build configuration (what `npm run build` puts in dist/). */
function buildWebhook(): string {
  rmSync(BUILD_DIR, { recursive: true, force: true });
  execFileSync(
    process.execPath,
    [
      path.join(REPO, 'node_modules', 'typescript', 'bin', 'tsc'),
      '-p',
      'tsconfig.build.json',
      '--outDir',
      BUILD_DIR,
    ],
    { cwd: REPO, stdio: ['ignore', 'inherit', 'inherit'] },
  );
  return path.join(BUILD_DIR, 'bin', 'rtctl.js');
}

/**
 * On-CPU time of a process, all its threads (main, libuv pool, GC helpers), in nanoseconds, from
 * /proc/<pid>/task/<tid>/schedstat. Finer than the 10 ms ticks of /proc/<pid>/stat.
 */
function readCpuNanos(pid: number | undefined): number {
  if (pid === undefined) return Number.NaN;
  let sum = 0;
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      sum += Number(readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').split(' ')[0]);
    } catch {
      // The thread ended between the listing and the read: its time is in no figure, before or after.
    }
  }
  return sum;
}

interface Measure {
  /** Reviews (see Tally) per second of the measurement. */
  requestsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  tally: Tally;
  /** Server CPU (all threads) per review, µs. */
  cpuMicrosecondsPerReview: number;
}

/** Throughput at CONNECTIONS closed-loop connections, each reopened after PER_CONNECTION requests. */
async function measureMax(
  port: number,
  pid: number | undefined,
  bodies: readonly BodyTemplate[],
  duration: number,
): Promise<Measure> {
  let n = 0;
  const tally = newTally();
  const cpuBefore = readCpuNanos(pid);
  const result = await autocannon({
    url: `https://127.0.0.1:${port}`,
    connections: CONNECTIONS,
    duration,
    // autocannon does not honour `Connection: close`; it reopens itself at the server's limit. The response
    // on which it reopens is not passed to onResponse: it is not counted as a review.
    reconnectRate: PER_CONNECTION,
    requests: [
      {
        method: 'POST',
        path: '/validate',
        headers: { 'content-type': 'application/json' },
        setupRequest: (req, context) => {
          const i = n++;
          const uid = `bench-${i}`;
          (context as { uid?: string }).uid = uid;
          const t = bodies[i % bodies.length] ?? { head: '', tail: '' };
          return { ...req, body: `${t.head}${uid}${t.tail}` };
        },
        onResponse: (status, body, context) => {
          countAnswer(tally, status, body, (context as { uid?: string }).uid);
        },
      },
    ],
  });
  const cpuNanos = readCpuNanos(pid) - cpuBefore;
  tally.errors += result.errors;
  tally.timeouts += result.timeouts;
  const seconds = (result.finish.getTime() - result.start.getTime()) / 1000;
  return {
    requestsPerSecond: Number((tally.reviews / seconds).toFixed(1)),
    p50Ms: result.latency.p50,
    p99Ms: result.latency.p99,
    tally,
    cpuMicrosecondsPerReview: Number((cpuNanos / 1000 / tally.reviews).toFixed(1)),
  };
}

/**
 * Latency at a fixed rate, paced by this process (autocannon's rate limit sends each second's quota in a burst,
 * which measures queueing, not latency at a rate). Requests are due every 1/rate s over a keep-alive pool;
 * latency counts from when a request was due, so a stalled server is not hidden (no coordinated omission).
 * Node's agent honours `Connection: close`. Only reviews give latency samples.
 */
async function measurePaced(
  port: number,
  pid: number | undefined,
  bodies: readonly BodyTemplate[],
  rate: number,
  seconds: number,
): Promise<Measure> {
  const agent = new https.Agent({ keepAlive: true, maxSockets: PACED_SOCKETS, rejectUnauthorized: false });
  const latencies: number[] = [];
  const tally = newTally();
  const total = rate * seconds;
  const cpuBefore = readCpuNanos(pid);
  const start = performance.now();
  const send = (i: number, due: number): Promise<void> =>
    new Promise((resolve) => {
      const t = bodies[i % bodies.length] ?? { head: '', tail: '' };
      const uid = `paced-${i}`;
      const body = `${t.head}${uid}${t.tail}`;
      const req = https.request(
        {
          host: '127.0.0.1',
          port,
          method: 'POST',
          path: '/validate',
          agent,
          headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => {
            const before = tally.reviews;
            countAnswer(tally, res.statusCode ?? 0, Buffer.concat(chunks).toString('utf8'), uid);
            if (tally.reviews > before) latencies.push(performance.now() - due);
            resolve();
          });
        },
      );
      req.on('error', () => {
        tally.errors += 1;
        resolve();
      });
      req.end(body);
    });
  const inflight: Promise<void>[] = [];
  let next = 0;
  while (next < total) {
    const now = performance.now();
    while (next < total && start + (next * 1000) / rate <= now) {
      inflight.push(send(next, start + (next * 1000) / rate));
      next += 1;
    }
    await new Promise((r) => setImmediate(r));
  }
  await Promise.all(inflight);
  const elapsed = (performance.now() - start) / 1000;
  const cpuNanos = readCpuNanos(pid) - cpuBefore;
  agent.destroy();
  const sorted = latencies.sort((a, b) => a - b);
  const at = (q: number): number =>
    Number((sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN).toFixed(3));
  return {
    requestsPerSecond: Number((tally.reviews / elapsed).toFixed(1)),
    p50Ms: at(0.5),
    p99Ms: at(0.99),
    tally,
    cpuMicrosecondsPerReview: Number((cpuNanos / 1000 / tally.reviews).toFixed(1)),
  };
}

const median = (v: readonly number[]): number =>
  [...v].sort((a, b) => a - b)[Math.floor(v.length / 2)] ?? Number.NaN;
const range = (v: readonly number[]): [number, number] => [Math.min(...v), Math.max(...v)];

/** Medians over the rounds, the range of each, and the tallies summed. */
function summarize(ms: readonly Measure[]): Record<string, unknown> & {
  requestsPerSecond: number;
  p99Ms: number;
  cpuMicrosecondsPerReview: number;
  tally: Tally;
} {
  const of = (f: (m: Measure) => number): number[] => ms.map(f);
  const tally = addTallies(ms.map((m) => m.tally));
  return {
    requestsPerSecond: median(of((m) => m.requestsPerSecond)),
    p50Ms: median(of((m) => m.p50Ms)),
    p99Ms: median(of((m) => m.p99Ms)),
    cpuMicrosecondsPerReview: median(of((m) => m.cpuMicrosecondsPerReview)),
    ranges: {
      requestsPerSecond: range(of((m) => m.requestsPerSecond)),
      p99Ms: range(of((m) => m.p99Ms)),
      cpuMicrosecondsPerReview: range(of((m) => m.cpuMicrosecondsPerReview)),
    },
    // Kept under their old names for the tools that read them (sums over the rounds).
    non2xx: tally.non2xx,
    errors: tally.errors,
    timeouts: tally.timeouts,
    tally,
  };
}

async function main(): Promise<void> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'rtctl-bench-webhook-'));
  const children: ChildProcess[] = [];
  try {
    const certs = generateWebhookCertificates({ dnsNames: ['localhost'], ipAddresses: ['127.0.0.1'] });
    const certFile = path.join(dir, 'tls.crt');
    const keyFile = path.join(dir, 'tls.key');
    writeFileSync(certFile, certs.tlsCert);
    writeFileSync(keyFile, certs.tlsKey);

    const policy = parse(readFileSync(BENCH_POLICY, 'utf8')) as Record<string, unknown>;
    const nodeClass = {
      apiVersion: 'karpenter.k8s.aws/v1',
      kind: 'EC2NodeClass',
      metadata: { name: 'default' },
      spec: {
        role: 'KarpenterNodeRole',
        metadataOptions: { httpTokens: 'required', httpPutResponseHopLimit: 1 },
      },
    };
    const bodies = [review(policy), review(nodeClass)];

    const webhookEntry = FROM_SOURCE ? ['--import', 'tsx', 'bin/rtctl.ts'] : [buildWebhook()];
    const webhook = await startChild(
      [
        ...webhookEntry,
        'webhook',
        'serve',
        '--cert',
        certFile,
        '--key',
        keyFile,
        '--listen',
        '127.0.0.1:0',
        '--log-level',
        'info',
        '--shutdown-delay',
        '0',
      ],
      /webhook listening/,
    );
    children.push(webhook.child);
    const bare = await startChild(
      ['--import', 'tsx', 'bench/webhook/bare-server.ts', certFile, keyFile, String(PER_CONNECTION)],
      /"port"/,
    );
    children.push(bare.child);
    const lean = await startChild(
      [
        '--import',
        'tsx',
        'bench/webhook/bare-server.ts',
        certFile,
        keyFile,
        String(PER_CONNECTION),
        'one-write',
      ],
      /"port"/,
    );
    children.push(lean.child);

    // Warm up both (JIT), then measure in alternating rounds so both see the same machine state; medians.
    await measureMax(webhook.port, webhook.child.pid, bodies, 2);
    await measureMax(bare.port, bare.child.pid, bodies, 2);
    await measureMax(lean.port, lean.child.pid, bodies, 2);
    const rounds = {
      webhookMax: [] as Measure[],
      bareMax: [] as Measure[],
      webhook1000: [] as Measure[],
      bare1000: [] as Measure[],
      leanMax: [] as Measure[],
    };
    for (let round = 0; round < ROUNDS; round++) {
      const order = round % 2 === 0 ? (['webhook', 'bare'] as const) : (['bare', 'webhook'] as const);
      for (const which of order) {
        const server = which === 'webhook' ? webhook : bare;
        (which === 'webhook' ? rounds.webhookMax : rounds.bareMax).push(
          await measureMax(server.port, server.child.pid, bodies, DURATION),
        );
        (which === 'webhook' ? rounds.webhook1000 : rounds.bare1000).push(
          await measurePaced(server.port, server.child.pid, bodies, 1000, DURATION),
        );
      }
      rounds.leanMax.push(await measureMax(lean.port, lean.child.pid, bodies, DURATION));
    }
    const webhookMax = summarize(rounds.webhookMax);
    const bareMax = summarize(rounds.bareMax);
    const webhookAt1000 = summarize(rounds.webhook1000);
    const bareAt1000 = summarize(rounds.bare1000);
    const leanMax = summarize(rounds.leanMax);
    const problems: string[] = [];
    for (const [name, m] of [
      ['webhook.max', webhookMax],
      ['bare.max', bareMax],
      ['webhook.at1000', webhookAt1000],
      ['bare.at1000', bareAt1000],
      ['bareOneWrite.max', leanMax],
    ] as const) {
      if (failures(m.tally) > 0)
        problems.push(
          `${name}: ${failures(m.tally)} answers were not reviews (non2xx ${m.tally.non2xx} ${JSON.stringify(m.tally.statuses)}, invalid ${m.tally.invalid}, errors ${m.tally.errors}, timeouts ${m.tally.timeouts})`,
        );
    }
    const valid = problems.length === 0;
    const ratio = webhookMax.requestsPerSecond / bareMax.requestsPerSecond;
    // Per review at the maximum rate (the server is busy the whole time, so idle wake-ups do not count).
    const cpuWebhook = webhookMax.cpuMicrosecondsPerReview;
    const cpuBare = bareMax.cpuMicrosecondsPerReview;
    const p99Ratio = webhookAt1000.p99Ms / bareAt1000.p99Ms;
    const figure = (x: number, digits: number): number | null => (valid ? Number(x.toFixed(digits)) : null);
    process.stdout.write(
      `${JSON.stringify(
        {
          bench: 'webhook',
          webhookRuntime: FROM_SOURCE ? 'tsx (source)' : 'compiled by tsc (as shipped)',
          durationSeconds: DURATION,
          rounds: ROUNDS,
          statistic:
            'median over rounds (ranges: min and max over rounds; tallies summed); only reviews answering the uid sent count',
          load: {
            connections: CONNECTIONS,
            requestsPerConnection: PER_CONNECTION,
            pacedRate: 1000,
            pacedSockets: PACED_SOCKETS,
          },
          valid,
          problems,
          loadAverage: os.loadavg().map((l) => Number(l.toFixed(2))),
          cpus: os.cpus().length,
          bodyBytes: bodies.map((b) => Buffer.byteLength(`${b.head}bench-0${b.tail}`)),
          webhook: { max: webhookMax, at1000: webhookAt1000 },
          bare: { max: bareMax, at1000: bareAt1000 },
          // An invalid run reports no figures (null): its raw measures above say what went wrong.
          throughputRatio: figure(ratio, 3),
          serverCpuMicrosecondsPerRequest: {
            webhook: figure(cpuWebhook, 1),
            bare: figure(cpuBare, 1),
          },
          cpuEfficiencyRatio: figure(cpuBare / cpuWebhook, 3),
          p99RatioAt1000: figure(p99Ratio, 3),
          serverCpuOverBareMicroseconds: figure(cpuWebhook - cpuBare, 1),
          // The second baseline: the bare handler answering in one write, as the webhook does (express's res.json
          // writes head and body apart, which costs the bare server more than the webhook's checks).
          bareOneWrite: { max: leanMax },
          serverCpuOverBareOneWriteMicroseconds: figure(cpuWebhook - leanMax.cpuMicrosecondsPerReview, 1),
          throughputRatioOverBareOneWrite: figure(
            webhookMax.requestsPerSecond / leanMax.requestsPerSecond,
            3,
          ),
          // issue 13: throughput >= 0.90 of bare, <= 25 µs server CPU over bare, p99 at 1000/s <= 1.1 x bare.
          targets: { throughputRatio: 0.9, serverCpuOverBareMicroseconds: 25, p99RatioAt1000: 1.1 },
          meetsTargets: valid && ratio >= 0.9 && cpuWebhook - cpuBare <= 25 && p99Ratio <= 1.1,
        },
        null,
        2,
      )}\n`,
    );
    // The JSON is printed either way (bench/run-all.ts keeps it); the warning is for whoever reads the terminal.
    if (!valid) process.stderr.write(`webhook bench: INVALID run, no figures: ${problems.join('; ')}\n`);
  } finally {
    for (const c of children) c.kill('SIGTERM');
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
