// `--alert-output` specs: what each accepted form means, and a clear message for each refused one; the CLI
// refuses a bad spec before anything starts (exit 2, the message on stderr); the fan-out applies each
// output's minimum severity and counts what it filtered; the stdout output bounds what it buffers.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { Writable } from 'node:stream';
import { createAlertHub } from '../../../enforcer/alerts/alert-hub.js';
import type { AlertOutput } from '../../../enforcer/outputs/alert-output.js';
import { createAlertOutputs, passesMinSeverity } from '../../../enforcer/outputs/alert-outputs.js';
import {
  OutputSpecError,
  parseOutputSpec,
  parseOutputSpecs,
  type StdoutOutputSpec,
} from '../../../enforcer/outputs/output-spec.js';
import { createStdoutOutput } from '../../../enforcer/outputs/stdout-output.js';
import { REPO_ROOT, rtctlArgs } from '../support/enforcer-process.js';
import { sampleAlert } from './support.js';

const accepted: [string, Record<string, unknown>][] = [
  ['stdout', { kind: 'stdout', name: 'stdout-1', minSeverity: 0 }],
  ['stdout?minSeverity=5&name=collector', { kind: 'stdout', name: 'collector', minSeverity: 5 }],
  [
    'syslog+udp://127.0.0.1:514?minSeverity=5',
    {
      kind: 'syslog',
      transport: 'udp',
      host: '127.0.0.1',
      port: 514,
      facility: 16,
      appName: 'rtctl',
      format: 'json',
    },
  ],
  [
    'syslog+tcp://[::1]:6514?facility=auth&appName=node-7&format=sd',
    {
      kind: 'syslog',
      transport: 'tcp',
      host: '::1',
      port: 6514,
      facility: 4,
      appName: 'node-7',
      format: 'sd',
    },
  ],
  ['syslog+tcp://logs.example:601?facility=23', { host: 'logs.example', facility: 23 }],
  [
    'syslog+unix:///run/syslog.sock',
    { kind: 'syslog', transport: 'unix', path: '/run/syslog.sock', name: 'syslog-1' },
  ],
  [
    'http://127.0.0.1:8080/hook?batchSize=50&retries=3&format=json&x=1',
    {
      kind: 'http',
      url: 'http://127.0.0.1:8080/hook?x=1',
      batchSize: 50,
      retries: 3,
      format: 'json',
      name: 'http-1',
    },
  ],
  ['https://user:secret@hooks.example/in', { kind: 'http', display: 'https://***@hooks.example/in' }],
];

const refused: [string, RegExp][] = [
  ['', /unknown output: expected stdout, syslog\+udp/],
  ['syslog://127.0.0.1:514', /unknown output/],
  ['kafka://broker:9092', /unknown output/],
  ['stdout?minSeverity=11', /minSeverity: "11" is not an integer from 0 to 10/],
  ['stdout?minSeverity=-1', /minSeverity: "-1" is not an integer/],
  ['stdout?level=5', /unknown option "level" for stdout \(known: minSeverity, name, maxBufferBytes\)/],
  ['stdout?name=a&name=b', /option "name" given twice/],
  ['stdout?name=bad name', /name: "bad name" must be/],
  ['syslog+udp://127.0.0.1', /needs HOST:PORT/],
  ['syslog+udp://127.0.0.1:0', /port 0 is not from 1 to 65535/],
  ['syslog+udp://127.0.0.1:70000', /port 70000 is not from 1 to 65535/],
  ['syslog+tcp://127.0.0.1:514?facility=local9', /facility: "local9" is neither 0–23 nor a name/],
  ['syslog+tcp://127.0.0.1:514?facility=24', /facility: "24"/],
  ['syslog+tcp://127.0.0.1:514?appName=a b', /appName: "a b" must be 1–48 printable ASCII/],
  ['syslog+tcp://127.0.0.1:514?format=xml', /format: "xml" is neither json nor sd/],
  ['syslog+tcp://127.0.0.1:514?batchSize=3', /unknown option "batchSize" for syslog\+tcp/],
  ['syslog+unix://relative.sock', /absolute socket path/],
  [`syslog+unix:///${'x'.repeat(120)}`, /at most 107 bytes/],
  ['http://h/x?batchSize=0', /batchSize: "0" is not an integer from 1 to 10000/],
  ['http://h/x?batchSize=10&queueSize=5', /queueSize \(5\) is below batchSize \(10\)/],
  ['http://h/x?backoffMs=100&maxBackoffMs=50', /maxBackoffMs \(50\) is below backoffMs \(100\)/],
  ['http://h/x?format=xml', /format: "xml" is neither ndjson nor json/],
  ['http://user:pw@h/x?retries=many', /^--alert-output "http:\/\/\*\*\*@h\/x\?retries=many": retries/],
];

describe('alert output specs', () => {
  for (const [text, expected] of accepted) {
    it(`accepts ${text}`, () => {
      const spec = parseOutputSpec(text) as unknown as Record<string, unknown>;
      for (const [k, v] of Object.entries(expected)) assert.deepEqual(spec[k], v, `${k} of ${text}`);
    });
  }
  for (const [text, message] of refused) {
    it(`refuses ${JSON.stringify(text.slice(0, 60))}`, () => {
      assert.throws(
        () => parseOutputSpec(text),
        (err: unknown) =>
          err instanceof OutputSpecError && err.code === 'RT_OUTPUT_SPEC' && message.test(err.message),
      );
    });
  }

  it('names default to kind and position, and must be unique', () => {
    assert.deepEqual(
      parseOutputSpecs(['stdout', 'syslog+udp://127.0.0.1:514', 'http://h/']).map((s) => s.name),
      ['stdout-1', 'syslog-2', 'http-3'],
    );
    assert.throws(() => parseOutputSpecs(['stdout?name=x', 'http://h/?name=x']), /name "x" is used twice/);
  });

  it('rtctl enforcer run refuses a bad spec before starting anything (exit 2)', function () {
    this.timeout(60_000);
    const r = spawnSync(
      process.execPath,
      rtctlArgs([
        'enforcer',
        'run',
        '--policy-dir',
        REPO_ROOT,
        '--alert-output',
        'stdout',
        '--alert-output',
        'syslog+udp://127.0.0.1:514?facility=local9',
      ]),
      { cwd: REPO_ROOT, encoding: 'utf8', timeout: 50_000 },
    );
    assert.equal(r.status, 2, r.stderr);
    assert.match(
      r.stderr,
      /rtctl: --alert-output "syslog\+udp:\/\/127\.0\.0\.1:514\?facility=local9": facility/,
    );
  });
});

describe('alert output fan-out and the stdout output', () => {
  const severities: [string, number, boolean][] = [
    ['5', 5, true],
    ['4', 5, false],
    ['0', 0, true],
    ['0', 1, false],
    ['10', 10, true],
    ['high', 5, true], // not a number: sent (a filter never hides what it cannot judge)
  ];
  for (const [severity, min, passes] of severities) {
    it(`Severity ${severity} ${passes ? 'passes' : 'is filtered by'} minSeverity ${min}`, () => {
      assert.equal(passesMinSeverity({ Severity: severity }, min), passes);
    });
  }

  it('feeds each output from the hub through its own filter, counting what it filtered', async () => {
    const hub = createAlertHub(100, [sampleAlert(0)]); // replayed history is not sent again
    const lines: Record<string, string[]> = { all: [], high: [] };
    const fake = (name: string): AlertOutput => ({
      name,
      send: (_a, line) => void lines[name]?.push(line),
      stats: () => ({
        name,
        kind: 'test',
        target: name,
        minSeverity: 0,
        sent: lines[name]?.length ?? 0,
        failed: 0,
        dropped: 0,
        filtered: 0,
        queued: 0,
        retries: 0,
      }),
      close: () => Promise.resolve(),
    });
    const outputs = createAlertOutputs(
      [
        { spec: parseOutputSpec('stdout?name=all'), output: fake('all') },
        { spec: parseOutputSpec('stdout?name=high&minSeverity=7'), output: fake('high') },
      ],
      hub,
    );
    for (const sev of ['1', '7', '9', '3']) hub.publish(sampleAlert(Number(sev), { Severity: sev }));
    assert.equal(lines['all']?.length, 4);
    assert.deepEqual(
      lines['high']?.map((l) => (JSON.parse(l) as { Severity: string }).Severity),
      ['7', '9'],
    );
    assert.deepEqual(
      outputs.stats().map((s) => [s.name, s.sent, s.filtered]),
      [
        ['all', 4, 0],
        ['high', 2, 2],
      ],
    );
    await outputs.close();
    hub.publish(sampleAlert(20));
    assert.equal(lines['all']?.length, 4, 'closed outputs are unsubscribed');
  });

  it('stdout: one JSON line per alert; drops (counted) while its reader does not read', async () => {
    // A writer that holds every write until released: what it holds is what the output buffered.
    const written: string[] = [];
    const pending: (() => void)[] = [];
    const stream = new Writable({
      write(chunk: Buffer, _enc, cb) {
        written.push(chunk.toString());
        pending.push(cb);
      },
    });
    const spec = parseOutputSpec('stdout?maxBufferBytes=2048') as StdoutOutputSpec;
    const out = createStdoutOutput(spec, stream);
    const line = JSON.stringify(sampleAlert(1));
    for (let i = 0; i < 20; i++) out.send(sampleAlert(1), line);
    // Taken while at most 2048 bytes wait: floor(2048 / (line + newline)) + 1 lines.
    const held = Math.floor(2048 / (line.length + 1)) + 1;
    assert.ok(held < 20);
    assert.equal(out.stats().dropped, 20 - held, 'beyond the bound, alerts are dropped and counted');
    assert.equal(out.stats().queued, held);
    const release = (): void => {
      for (const cb of pending.splice(0)) cb();
    };
    const timer = setInterval(release, 5);
    await out.close();
    clearInterval(timer);
    release();
    assert.equal(written.filter((w) => w !== '').length, held);
    assert.ok(written.filter((w) => w !== '').every((w) => w === `${line}\n`));
    assert.equal(out.stats().sent, held);
  });
});
