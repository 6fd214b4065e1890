// /metrics of the enforcer's alert server and of the relay, over real HTTP on loopback: alerts counted by
// policy, operation and action from the hub; followers counted from real /alerts streams; the data plane's
// counters mirrored at each scrape (here from a stats function standing in for a kernel plane; the fanotify
// e2e test reads them from the real helper); apply latency from an instrumented plane; label values bounded;
// the relay (`rtctl enforcer relay`, a real child process) serving its own. The Grafana dashboard in docs/ only
// queries metric names (and labels) that exist in the registry.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer, get } from 'node:http';
import { join } from 'node:path';
import { pino } from 'pino';
import { createAlertHub } from '../../../enforcer/alerts/alert-hub.js';
import { startAlertServer, type AlertServer } from '../../../enforcer/alerts/alert-server.js';
import { followAlerts } from '../../../enforcer/alerts/follow-alerts.js';
import type { DataPlane, DataPlaneStats } from '../../../enforcer/data-plane.js';
import { createEnforcerMetrics, OTHER_POLICY } from '../../../enforcer/metrics/enforcer-metrics.js';
import { instrumentDataPlane } from '../../../enforcer/metrics/instrument-plane.js';
import { REPO_ROOT, rtctlArgs } from '../support/enforcer-process.js';
import { sampleAlert, waitFor } from '../outputs/support.js';

const logger = pino({ level: 'silent' });

function fetchText(url: string): Promise<{ status: number; type: string; body: string }> {
  return new Promise((resolve, reject) => {
    get(url, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () =>
        resolve({ status: res.statusCode ?? 0, type: res.headers['content-type'] ?? '', body }),
      );
    }).on('error', reject);
  });
}

/** The value of one sample (`name{a="b",…}`, labels in any order), or undefined. */
function sample(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  for (const line of text.split('\n')) {
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (m === null || m[1] !== name) continue;
    const got = new Map(
      [...(m[2] ?? '').matchAll(/([a-zA-Z_]\w*)="((?:[^"\\]|\\.)*)"/g)].map((x) => [x[1], x[2]]),
    );
    if (Object.entries(labels).every(([k, v]) => got.get(k) === v) && got.size === Object.keys(labels).length)
      return Number(m[3]);
  }
  return undefined;
}

describe('enforcer metrics (/metrics over real HTTP on loopback)', function () {
  this.timeout(60_000);
  const servers: AlertServer[] = [];
  after(async () => {
    for (const s of servers) await s.close();
  });

  it('counts alerts by policy, operation and action, followers, and the plane counters (stand-in stats function)', async () => {
    const hub = createAlertHub(100);
    const held: { server?: AlertServer } = {};
    let stats: DataPlaneStats = { decisions: 10, cacheHits: 4, reported: 3, dropped: 0, workloads: 2 };
    const metrics = createEnforcerMetrics({
      hub,
      role: 'enforcer',
      planeName: 'fanotify',
      planeStats: () => Promise.resolve(stats),
      serverStats: () => held.server?.stats(),
      outputStats: () => [
        {
          name: 'siem',
          kind: 'http',
          target: 'http://x/',
          minSeverity: 5,
          sent: 7,
          failed: 1,
          dropped: 2,
          filtered: 3,
          queued: 4,
          retries: 5,
        },
      ],
    });
    const server = await startAlertServer({
      hub,
      listen: { kind: 'tcp', host: '127.0.0.1', port: 0 },
      logger,
      metrics: () => metrics.render(),
    });
    held.server = server;
    servers.push(server);
    hub.publish(sampleAlert(1));
    hub.publish(sampleAlert(2));
    hub.publish(sampleAlert(3, { Action: 'Audit', Operation: 'File' }));
    hub.publish(sampleAlert(4, { PolicyName: 'other-policy' }));
    const abort = new AbortController();
    const following = followAlerts({
      servers: [server.url],
      follow: true,
      signal: abort.signal,
      onAlert: () => undefined,
    });
    await waitFor(() => server.stats().streams === 1, 'one follower');
    const m = await fetchText(`${server.url}/metrics`);
    assert.equal(m.status, 200);
    assert.match(m.type, /^text\/plain/);
    const checks: [string, Record<string, string>, number][] = [
      ['rtctl_alerts_total', { policy: 'block-sleep', operation: 'Process', action: 'Block' }, 2],
      ['rtctl_alerts_total', { policy: 'block-sleep', operation: 'File', action: 'Audit' }, 1],
      ['rtctl_alerts_total', { policy: 'other-policy', operation: 'Process', action: 'Block' }, 1],
      ['rtctl_alerts_published_total', {}, 4],
      ['rtctl_alert_followers', {}, 1],
      ['rtctl_enforcer_data_plane_info', { plane: 'fanotify' }, 1],
      ['rtctl_enforcer_decisions_total', {}, 10],
      ['rtctl_enforcer_decision_cache_hits_total', {}, 4],
      ['rtctl_enforcer_events_reported_total', {}, 3],
      ['rtctl_enforcer_events_dropped_total', {}, 0],
      ['rtctl_enforcer_workloads', {}, 2],
      ['rtctl_alert_output_alerts_total', { output: 'siem', kind: 'http', result: 'sent' }, 7],
      ['rtctl_alert_output_alerts_total', { output: 'siem', kind: 'http', result: 'dropped' }, 2],
      ['rtctl_alert_output_alerts_total', { output: 'siem', kind: 'http', result: 'filtered' }, 3],
      ['rtctl_alert_output_queued', { output: 'siem', kind: 'http' }, 4],
      ['rtctl_build_info', { role: 'enforcer' }, 1],
    ];
    for (const [name, labels, value] of checks)
      assert.equal(sample(m.body, name, labels), value, `${name}${JSON.stringify(labels)}`);
    // The plane's counters move: the next scrape shows the new totals (mirrored, not added up).
    stats = { decisions: 25, cacheHits: 20, reported: 5, dropped: 1, workloads: 1 };
    const again = await fetchText(`${server.url}/metrics`);
    assert.equal(sample(again.body, 'rtctl_enforcer_decisions_total'), 25);
    assert.equal(sample(again.body, 'rtctl_enforcer_events_dropped_total'), 1);
    abort.abort();
    await following;
  });

  it('bounds policy label values and maps unknown operations and actions to `other`', async () => {
    const hub = createAlertHub(100);
    const metrics = createEnforcerMetrics({ hub, role: 'relay', maxPolicies: 3 });
    for (let i = 0; i < 10; i++) hub.publish(sampleAlert(i, { PolicyName: `p${i}` }));
    hub.publish(sampleAlert(11, { PolicyName: 'p0', Operation: '/etc/passwd', Action: 'x'.repeat(100) }));
    const { body } = await metrics.render();
    const policies = new Set([...body.matchAll(/^rtctl_alerts_total\{policy="([^"]*)"/gm)].map((x) => x[1]));
    assert.deepEqual([...policies].sort(), [OTHER_POLICY, 'p0', 'p1', 'p2']);
    assert.equal(
      sample(body, 'rtctl_alerts_total', { policy: OTHER_POLICY, operation: 'Process', action: 'Block' }),
      7,
    );
    assert.equal(sample(body, 'rtctl_alert_policy_labels_overflow_total'), 7);
    assert.equal(
      sample(body, 'rtctl_alerts_total', { policy: 'p0', operation: 'other', action: 'other' }),
      1,
    );
    assert.ok(!/PID|HostPID|Resource|\/bin\/r/.test(body), 'no per-process or per-path label');
    metrics.close();
  });

  it('times each apply of an instrumented plane, failures apart', async () => {
    const hub = createAlertHub(10);
    const metrics = createEnforcerMetrics({ hub, role: 'enforcer' });
    let fail = false;
    const inner: DataPlane = {
      name: 'Test',
      auditName: 'Test',
      start: () => Promise.resolve(),
      apply: () => (fail ? Promise.reject(new Error('kernel said no')) : Promise.resolve()),
      enforced: () => Promise.resolve({ generation: 0, workloads: [] }),
      events: () => ({
        [Symbol.asyncIterator]: () => ({
          next: () => Promise.resolve({ done: true as const, value: undefined }),
        }),
      }),
      stats: () => Promise.resolve({ decisions: 0, cacheHits: 0, reported: 0, dropped: 0, workloads: 0 }),
      stop: () => Promise.resolve(),
    };
    const plane = instrumentDataPlane(inner, (s, ok) => metrics.observeApply(s, ok));
    assert.ok(!('acknowledge' in plane), 'an optional method stays absent');
    const state = { generation: 1, table: {} as never, workloads: [] };
    await plane.apply(state);
    await plane.apply(state);
    fail = true;
    await assert.rejects(plane.apply(state), /kernel said no/);
    const { body } = await metrics.render();
    assert.equal(sample(body, 'rtctl_enforcer_apply_duration_seconds_count', { result: 'ok' }), 2);
    assert.equal(sample(body, 'rtctl_enforcer_apply_duration_seconds_count', { result: 'error' }), 1);
  });

  it('rtctl enforcer relay serves /metrics and /status, and forwards to its --alert-output', async () => {
    const hub = createAlertHub(100);
    const upstream = await startAlertServer({
      hub,
      listen: { kind: 'tcp', host: '127.0.0.1', port: 0 },
      logger,
    });
    servers.push(upstream);
    hub.publish(sampleAlert(1));
    hub.publish(sampleAlert(2, { Action: 'Audit' }));
    const hooked: string[] = [];
    const receiver = createServer((req, res) => {
      let body = '';
      req.setEncoding('utf8');
      req.on('data', (c: string) => (body += c));
      req.on('end', () => {
        hooked.push(...body.split('\n').filter((l) => l !== ''));
        res.writeHead(200).end();
      });
    });
    await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
    const { port } = receiver.address() as { port: number };
    const child = spawn(
      process.execPath,
      rtctlArgs([
        'enforcer',
        'relay',
        '--upstream',
        upstream.url,
        '--listen',
        '127.0.0.1:0',
        '--alert-output',
        `http://127.0.0.1:${port}/in?batchSize=1&name=hook`,
      ]),
      { cwd: REPO_ROOT, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    try {
      let out = '';
      child.stdout.setEncoding('utf8').on('data', (c: string) => (out += c));
      await waitFor(() => /alerts: (http:\S+)\/alerts/.test(out), 'relay address');
      const url = /alerts: (http:\S+)\/alerts/.exec(out)?.[1] ?? '';
      let body = '';
      await waitFor(() => {
        void fetchText(`${url}/metrics`).then((r) => (body = r.body));
        return (
          sample(body, 'rtctl_alert_output_alerts_total', {
            output: 'hook',
            kind: 'http',
            result: 'sent',
          }) === 2
        );
      }, 'relay counted both alerts as sent');
      assert.equal(sample(body, 'rtctl_build_info', { role: 'relay' }), 1);
      assert.equal(sample(body, 'rtctl_alerts_published_total'), 2);
      assert.equal(
        sample(body, 'rtctl_alerts_total', { policy: 'block-sleep', operation: 'Process', action: 'Audit' }),
        1,
      );
      assert.equal(upstream.stats().streams, 1, 'the relay follows its upstream');
      assert.deepEqual(
        hooked.map((l) => (JSON.parse(l) as { Resource: string }).Resource),
        ['/bin/r1', '/bin/r2'],
      );
      const status = JSON.parse((await fetchText(`${url}/status`)).body) as {
        role: string;
        outputs: { name: string; sent: number }[];
      };
      assert.equal(status.role, 'relay');
      assert.deepEqual(
        status.outputs.map((o) => [o.name, o.sent]),
        [['hook', 2]],
      );
    } finally {
      const gone = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      await gone;
      receiver.close();
    }
  });
});

describe('Grafana dashboard (docs/dashboards/rtctl-enforcer.json)', () => {
  interface Panel {
    title: string;
    targets?: { expr: string }[];
  }
  const dashboard = JSON.parse(
    readFileSync(join(REPO_ROOT, 'docs/dashboards/rtctl-enforcer.json'), 'utf8'),
  ) as {
    panels: Panel[];
    templating: { list: { query?: unknown }[] };
  };
  const registry = createEnforcerMetrics({
    hub: createAlertHub(1),
    role: 'enforcer',
    processMetrics: true,
  }).registry;
  const exprs = [
    ...dashboard.panels.flatMap((p) => (p.targets ?? []).map((t) => ({ where: p.title, expr: t.expr }))),
    ...dashboard.templating.list
      .filter((v) => typeof v.query === 'string')
      .map((v) => ({ where: 'templating', expr: String(v.query) })),
  ];

  it('has panels with queries', () => {
    assert.ok(dashboard.panels.length >= 8);
    assert.ok(exprs.length >= 10);
  });

  for (const { where, expr } of exprs) {
    it(`${where}: ${expr.slice(0, 90)}`, () => {
      const names = [...expr.matchAll(/\b(rtctl_[a-z0-9_]+)\b(\{([^}]*)\})?/g)];
      if (where !== 'templating') assert.ok(names.length > 0, 'queries an rtctl metric');
      for (const [, full, , matchers] of names) {
        const base = (full ?? '').replace(/_(bucket|sum|count)$/, '');
        const metric = registry.getSingleMetric(full ?? '') ?? registry.getSingleMetric(base);
        assert.ok(metric, `${full} is a metric of the registry`);
        const labelNames = [
          ...((metric as unknown as { labelNames?: string[] }).labelNames ?? []),
          'instance',
          'job',
          'le',
        ];
        for (const [, label] of (matchers ?? '').matchAll(/([a-zA-Z_]\w*)\s*=~?/g))
          assert.ok(labelNames.includes(label ?? ''), `${full} has label ${label}`);
      }
      for (const [, by] of expr.matchAll(/by \(([^)]*)\)/g))
        for (const label of (by ?? '').split(',').map((l) => l.trim())) {
          const owners = names.map(([, full]) =>
            registry.getSingleMetric((full ?? '').replace(/_(bucket|sum|count)$/, '')),
          );
          assert.ok(
            owners.some((m) =>
              [...((m as unknown as { labelNames?: string[] })?.labelNames ?? []), 'instance', 'le'].includes(
                label,
              ),
            ),
            `grouping label ${label} exists on a metric of the query`,
          );
        }
    });
  }
});
