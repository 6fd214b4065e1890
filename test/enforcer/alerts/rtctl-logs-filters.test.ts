// `rtctl logs` filters, output forms and --since: the label selector, since parser and filter as tables; then
// the real CLI against a real alert server on a unix socket (filters, -o json|pretty|text, usage errors), and
// --since answered from the hub and, before what the hub holds, from a real alert log read from its end.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { get } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { matchesAlertFilter, type AlertFilter } from '../../../enforcer/alerts/alert-filter.js';
import { createAlertHub, type AlertHub } from '../../../enforcer/alerts/alert-hub.js';
import type { AlertRecord } from '../../../enforcer/alerts/alert-record.js';
import { startAlertServer, type AlertServer } from '../../../enforcer/alerts/alert-server.js';
import { followAlerts } from '../../../enforcer/alerts/follow-alerts.js';
import { formatAlertPretty } from '../../../enforcer/alerts/format-alert.js';
import {
  matchesLabelSelector,
  parseAlertLabels,
  parseLabelSelector,
} from '../../../enforcer/alerts/label-selector.js';
import { parseSince } from '../../../enforcer/alerts/parse-since.js';
import { readAlertLogTail } from '../../../enforcer/io/alert-log-tail.js';
import { readAlertLogSince } from '../../../enforcer/io/alert-log-since.js';
import { REPO_ROOT, rtctlArgs } from '../support/enforcer-process.js';
import { readLogsFlags } from '../../../enforcer/cli.js';
import { ConfigError } from '../../../enforcer/config.js';
import { sampleAlert, waitFor } from '../outputs/support.js';

const logger = pino({ level: 'silent' });

describe('rtctl logs: label selectors', () => {
  const labels = parseAlertLabels('app=web,tier=front,team.example.com/owner=sec');
  const cases: [string, boolean][] = [
    ['app=web', true],
    ['app==web', true],
    ['app=db', false],
    ['app!=db', true],
    ['app=web,tier!=front', false],
    ['app=web, tier!=db', true],
    ['missing!=x', true],
    ['tier in (front,back)', true],
    ['tier notin (front)', false],
    ['missing notin (a)', true],
    ['app', true],
    ['!app', false],
    ['!canary', true],
    ['team.example.com/owner=sec', true],
    ['', true],
  ];
  for (const [selector, expected] of cases) {
    it(`"${selector}" ${expected ? 'matches' : 'does not match'} app=web,tier=front`, () => {
      const parsed = parseLabelSelector(selector);
      assert.ok(parsed.ok, JSON.stringify(parsed));
      assert.equal(matchesLabelSelector(labels, parsed.value), expected);
    });
  }
  const bad: [string, number, RegExp][] = [
    ['app=web,', 9, /empty requirement/],
    ['app in (a,b', 12, /missing "\)"/],
    ['app in ()', 1, /needs at least one value/],
    ['a b c', 1, /is not a requirement/],
    ['app=we b', 1, /is not a requirement/],
    ['app=web,=x', 9, /is not a requirement/],
    ['app=' + 'v'.repeat(64), 1, /is not a label value/],
    ['app)', 4, /unbalanced/],
  ];
  for (const [selector, column, message] of bad) {
    it(`refuses "${selector.slice(0, 30)}" at column ${column}`, () => {
      const parsed = parseLabelSelector(selector);
      assert.equal(parsed.ok, false);
      if (parsed.ok) return;
      assert.equal(parsed.column, column);
      assert.match(parsed.error, message);
    });
  }
});

describe('rtctl logs: --since and the filter', () => {
  const now = Date.parse('2026-11-22T12:00:00Z');
  const since: [string, number | RegExp][] = [
    ['10m', now - 600_000],
    ['2h', now - 7_200_000],
    ['1h30m', now - 5_400_000],
    ['1d', now - 86_400_000],
    ['500ms', now - 500],
    ['2026-11-22T07:38:50Z', Date.parse('2026-11-22T07:38:50Z')],
    ['2026-11-22T07:38:50+02:00', Date.parse('2026-11-22T05:38:50Z')],
    ['10', /neither a duration/],
    ['-5m', /neither a duration/],
    ['10y', /neither a duration/],
    ['2026-11-22T07:38:50', /RFC 3339 time with a zone/],
    ['99999999d', /more than ten years/],
  ];
  for (const [text, expected] of since) {
    it(`--since ${text}`, () => {
      const r = parseSince(text, now);
      if (typeof expected === 'number') assert.deepEqual(r, { ok: true, ms: expected });
      else assert.ok(!r.ok && expected.test(r.error), JSON.stringify(r));
    });
  }

  const a = sampleAlert(1, {
    Resource: '/etc/shadow',
    Source: '/usr/bin/cat',
    Operation: 'File',
    Severity: '7',
    Action: 'Audit',
    PolicyName: 'audit-secrets',
  });
  const filters: [string, AlertFilter, boolean][] = [
    ['resource exact', { resources: ['/etc/shadow'] }, true],
    ['resource glob', { resources: ['/etc/*'] }, true],
    ['resource glob ?', { resources: ['/etc/shado?'] }, true],
    ['resource other', { resources: ['/etc/passwd'] }, false],
    ['resource regex characters are literal', { resources: ['/etc/shad.w'] }, false],
    ['source glob', { sources: ['*/cat'] }, true],
    ['source other', { sources: ['/bin/sh'] }, false],
    ['policy', { policies: ['audit-secrets'] }, true],
    ['policy other', { policies: ['block-sleep'] }, false],
    ['action case-insensitive', { actions: ['audit'] }, true],
    ['action other', { actions: ['Block'] }, false],
    ['severity at the minimum', { minSeverity: 7 }, true],
    ['severity below the minimum', { minSeverity: 8 }, false],
    ['operation', { operations: ['file'] }, true],
    ['labels', { labels: [{ key: 'tier', op: 'in', values: ['front'] }] }, true],
    ['labels not', { labels: [{ key: 'tier', op: 'notin', values: ['front'] }] }, false],
    ['since before', { sinceMs: Date.parse(a.UpdatedTime) }, true],
    ['since after', { sinceMs: Date.parse(a.UpdatedTime) + 1 }, false],
    [
      'all together',
      { resources: ['/etc/*'], actions: ['Audit'], minSeverity: 5, policies: ['audit-secrets'] },
      true,
    ],
  ];
  for (const [name, filter, expected] of filters) {
    it(`filter: ${name}`, () => assert.equal(matchesAlertFilter(a, filter), expected));
  }

  it('-o pretty is indented JSON with nothing a terminal interprets', () => {
    const hostile = sampleAlert(2, { Resource: '/tmp/\u202eevil\u007f\u0085\u2028', Message: 'a\nb' });
    const text = formatAlertPretty(hostile);
    assert.deepEqual(JSON.parse(text), hostile);
    assert.ok(!/[\u007f\u0085\u2028\u202e]/.test(text));
    assert.match(text, /^\{\n {2}"Timestamp": /);
  });
});

describe('rtctl logs: flags', () => {
  const base = {
    selector: [],
    resource: [],
    source: [],
    policy: [],
    action: [],
    operation: [],
    pod: [],
    container: [],
    server: [],
    follow: false,
  };
  const usage: [Record<string, unknown>, RegExp][] = [
    [{ output: 'yaml' }, /-o: "yaml" is not one of text, json, pretty/],
    [{ json: true, output: 'pretty' }, /--json is -o json; it cannot be given with -o pretty/],
    [{ selector: ['app in (a'] }, /-l "app in \(a": column 10: missing "\)"/],
    [{ since: 'yesterday' }, /--since: "yesterday" is neither a duration/],
    [{ severity: '11' }, /--severity: a minimum severity from 0 to 10/],
    [{ action: ['Deny'] }, /--action: "Deny" is neither Block nor Audit/],
  ];
  for (const [flags, message] of usage) {
    it(`refuses ${JSON.stringify(flags)}`, () => {
      assert.throws(
        () => readLogsFlags({ ...base, ...flags }, 0),
        (e: unknown) => e instanceof ConfigError && message.test(e.message),
      );
    });
  }
  it('--json is -o json; selectors given twice must both hold; text is the default', () => {
    assert.equal(readLogsFlags({ ...base, json: true }, 0).format, 'json');
    assert.equal(readLogsFlags({ ...base, json: true, output: 'json' }, 0).format, 'json');
    assert.equal(readLogsFlags(base, 0).format, 'text');
    const r = readLogsFlags(
      { ...base, selector: ['app=web', 'tier!=db'], since: '10m', severity: '4' },
      1_000_000,
    );
    assert.deepEqual(r.filter.labels, [
      { key: 'app', op: 'in', values: ['web'] },
      { key: 'tier', op: 'notin', values: ['db'] },
    ]);
    assert.equal(r.sinceMs, 400_000);
    assert.equal(r.filter.minSeverity, 4);
  });
});

/** GET with headers. */
function fetch(url: {
  socketPath: string;
  path: string;
}): Promise<{ status: number; headers: Record<string, string>; body: string }> {
  return new Promise((resolve, reject) => {
    get(url, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () =>
        resolve({ status: res.statusCode ?? 0, headers: res.headers as Record<string, string>, body }),
      );
    }).on('error', reject);
  });
}

describe('rtctl logs against a real alert server on a unix socket', function () {
  this.timeout(120_000);
  let dir = '';
  let socket = '';
  let server: AlertServer | undefined;
  let hub: AlertHub;
  const now = Date.now();
  const at = (agoMs: number): string => new Date(now - agoMs).toISOString().replace('Z', '123Z');
  // The alert log: four alerts spread over three hours; the hub holds only the newest two (as after a
  // restart with a small hub), so older ones must come from the log.
  const logged: AlertRecord[] = [
    sampleAlert(1, { UpdatedTime: at(3 * 3600_000), PolicyName: 'old' }),
    sampleAlert(2, { UpdatedTime: at(2 * 3600_000), PolicyName: 'older-than-hub' }),
    sampleAlert(3, { UpdatedTime: at(30 * 60_000), Labels: 'app=web,tier=db', Severity: '3' }),
    sampleAlert(4, {
      UpdatedTime: at(5 * 60_000),
      Labels: 'app=api',
      Action: 'Audit',
      Resource: '/etc/shadow',
    }),
  ];

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'rtctl-logs-'));
    socket = join(dir, 'alerts.sock');
    const logPath = join(dir, 'alerts.log');
    writeFileSync(logPath, logged.map((a) => `${JSON.stringify(a)}\n`).join(''));
    hub = createAlertHub(2, readAlertLogTail(logPath, 2));
    server = await startAlertServer({
      hub,
      listen: { kind: 'unix', path: socket },
      logger,
      history: (sinceMs, boundary) => readAlertLogSince(logPath, sinceMs, boundary),
    });
  });
  after(async () => {
    await server?.close();
    if (dir !== '') rmSync(dir, { recursive: true, force: true });
  });

  // Asynchronous: the server answering runs in this process.
  const logs = (args: string[]): Promise<{ status: number | null; stdout: string; stderr: string }> =>
    new Promise((resolve) => {
      execFile(
        process.execPath,
        rtctlArgs(['logs', '--no-follow', '--server', `unix:${socket}`, ...args]),
        { cwd: REPO_ROOT, encoding: 'utf8', timeout: 90_000 },
        (err, stdout, stderr) => {
          const code = err && typeof err.code === 'number' ? err.code : err ? null : 0;
          resolve({ status: code, stdout, stderr });
        },
      );
    });
  const resources = (stdout: string): string[] =>
    stdout
      .split('\n')
      .filter((l) => l !== '')
      .map((l) => (JSON.parse(l) as AlertRecord).Resource);

  it('--since 1h: the hub alone answers (no log lines)', async () => {
    const r = await fetch({ socketPath: socket, path: `/alerts?since=${now - 3600_000}&follow=0` });
    assert.equal(r.headers['x-alert-log-lines'], '0');
    const cli = await logs(['--since', '1h', '-o', 'json']);
    assert.equal(cli.status, 0, `stderr: ${cli.stderr} stdout: ${cli.stdout}`);
    assert.deepEqual(resources(cli.stdout), ['/bin/r3', '/etc/shadow']);
  });

  it('--since 150m: the alert before the hub comes from the alert log, in order, nothing twice', async () => {
    const r = await fetch({ socketPath: socket, path: `/alerts?since=${now - 150 * 60_000}&follow=0` });
    assert.equal(r.headers['x-alert-log-lines'], '1');
    assert.equal(r.headers['x-alert-first-seq'], '1');
    const cli = await logs(['--since', '150m', '--json']);
    assert.equal(cli.status, 0, `stderr: ${cli.stderr} stdout: ${cli.stdout}`);
    assert.deepEqual(resources(cli.stdout), ['/bin/r2', '/bin/r3', '/etc/shadow']);
  });

  it('--since 4h with filters: labels, action, resource glob, severity', async () => {
    const all = await logs(['--since', '4h', '-o', 'json']);
    assert.deepEqual(resources(all.stdout), ['/bin/r1', '/bin/r2', '/bin/r3', '/etc/shadow']);
    const cases: [string[], string[]][] = [
      [
        ['-l', 'app=web,tier!=db', '--policy', 'old', '--policy', 'older-than-hub'],
        ['/bin/r1', '/bin/r2'],
      ],
      [['-l', 'app in (api)', '--action', 'Audit'], ['/etc/shadow']],
      [['--resource', '/bin/r*', '--severity', '5', '--source', '/bin/s?', '--limit', '1'], ['/bin/r1']],
    ];
    for (const [args, expected] of cases) {
      const r = await logs(['--since', '4h', '-o', 'json', ...args]);
      assert.equal(r.status, 0, r.stderr);
      assert.deepEqual(resources(r.stdout), expected, args.join(' '));
    }
  });

  it('-o pretty and -o text print the same alerts in their forms', async () => {
    const pretty = await logs(['--since', '10m', '-o', 'pretty']);
    assert.equal(pretty.status, 0, pretty.stderr);
    assert.match(pretty.stdout, /^\{\n {2}"Timestamp": \d+,\n/);
    assert.equal((JSON.parse(pretty.stdout) as AlertRecord).Resource, '/etc/shadow');
    const text = await logs(['--since', '10m']);
    assert.match(text.stdout, /^== Alert .* ==\n[\s\S]*Resource: \/etc\/shadow\n/);
  });

  it('refuses a bad flag with exit 2 and the message', async () => {
    const r = await logs(['-l', 'app in (a']);
    assert.equal(r.status, 2, r.stderr);
    assert.match(r.stderr, /rtctl: -l "app in \(a": column 10: missing "\)"/);
  });

  it('the server refuses since with after, and a since that is not a number', async () => {
    for (const path of ['/alerts?since=1&after=2', '/alerts?since=abc', '/alerts?since=-1']) {
      const r = await fetch({ socketPath: socket, path });
      assert.equal(r.status, 400, path);
    }
  });

  it('a follower started --since resumes live after the history, by sequence', async () => {
    const got: string[] = [];
    const abort = new AbortController();
    const done = followAlerts({
      servers: [`unix:${socket}`],
      follow: true,
      sinceMs: now - 150 * 60_000,
      signal: abort.signal,
      onAlert: (x) => got.push(x.Resource),
    });
    await waitFor(() => got.length === 3, 'history');
    hub.publish(sampleAlert(5, { UpdatedTime: new Date().toISOString() }));
    await waitFor(() => got.length === 4, 'live alert');
    abort.abort();
    await done;
    assert.deepEqual(got, ['/bin/r2', '/bin/r3', '/etc/shadow', '/bin/r5']);
  });
});

describe('alert log read since a time (bounds)', () => {
  let dir = '';
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'rtctl-since-'));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('stops at the first older alert, skips what the hub holds (same millisecond too), and says when a bound cut', () => {
    const base = Date.parse('2026-11-22T10:00:00Z');
    const t = (s: number, us = '000'): string =>
      new Date(base + s * 1000).toISOString().replace('Z', `${us}Z`);
    const alerts = [
      sampleAlert(1, { UpdatedTime: t(0) }),
      sampleAlert(2, { UpdatedTime: t(10) }),
      sampleAlert(3, { UpdatedTime: t(20, '111') }),
      sampleAlert(4, { UpdatedTime: t(20, '222') }), // same ms as the hub's oldest, but not held
      sampleAlert(5, { UpdatedTime: t(20, '333') }), // the hub's oldest
      sampleAlert(6, { UpdatedTime: t(30) }),
    ];
    const path = join(dir, 'a.log');
    writeFileSync(path, alerts.map((a) => `${JSON.stringify(a)}\n`).join('') + 'not json\n');
    const boundary = { timeMs: base + 20_000, lines: new Set([JSON.stringify(alerts[4])]) };
    const r = readAlertLogSince(path, base + 5000, boundary);
    assert.deepEqual(
      r.alerts.map((a) => a.Resource),
      ['/bin/r2', '/bin/r3', '/bin/r4'],
    );
    assert.equal(r.truncated, false);
    const cut = readAlertLogSince(path, base - 1, boundary, { maxAlerts: 2 });
    assert.deepEqual(
      cut.alerts.map((a) => a.Resource),
      ['/bin/r3', '/bin/r4'],
    );
    assert.equal(cut.truncated, true);
  });
});
