// A real `rtctl enforcer run` (fanotify, the real kernel, host mode: no container runtime) with alert outputs:
// a host policy blocks a tool; the alert reaches a real HTTP webhook on loopback, an output whose minimum
// severity is above the rule's counts it as filtered, /status shows both outputs' counters, /metrics shows
// the plane in use, the decisions and the alert by policy, and `rtctl logs --since` reads it back.
import assert from 'node:assert/strict';
import { execFile, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, get, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { AlertRecord } from '../../../enforcer/alerts/alert-record.js';
import type { AlertOutputStats } from '../../../enforcer/outputs/alert-output.js';
import { isRoot, requirePrereqs } from '../../support/prereq.js';
import {
  REPO_ROOT,
  getJson,
  rtctlArgs,
  startEnforcer,
  stopHelper,
  type EnforcerProcess,
} from '../support/enforcer-process.js';
import { waitFor } from '../outputs/support.js';

const TOOL = '/usr/local/bin/rtctl-e2e-outputs-tool';
const POLICY = 'host-block-outputs-tool';
const runTool = () => spawnSync('/bin/sh', ['-c', TOOL], { encoding: 'utf8' });

function fetchText(url: string): Promise<string> {
  return new Promise((resolve, reject) => {
    get(url, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () => resolve(body));
    }).on('error', reject);
  });
}

describe('enforcer alert outputs, /metrics and rtctl logs --since (fanotify, real kernel)', function () {
  this.timeout(180_000);
  let work = '';
  let enforcer: EnforcerProcess | undefined;
  let receiver: Server | undefined;
  const received: AlertRecord[] = [];

  before(async function () {
    requirePrereqs(this, [[isRoot(), 'root (fanotify permission events)']]);
    work = mkdtempSync(join(tmpdir(), 'rtctl-outputs-'));
    mkdirSync(join(work, 'policies'));
    writeFileSync(TOOL, '#!/bin/sh\necho tool-ran\n', { mode: 0o755 });
    writeFileSync(
      join(work, 'policies', 'host.yaml'),
      [
        'apiVersion: security.runtime.com/v1',
        'kind: RuntimeHostPolicy',
        'metadata:',
        `  name: ${POLICY}`,
        'spec:',
        '  nodeSelector:',
        '    matchLabels:',
        '      kubernetes.io/hostname: outputs-node',
        '  severity: 6',
        '  process:',
        '    matchPaths:',
        `    - path: ${TOOL}`,
        '  action: Block',
        '',
      ].join('\n'),
    );
    receiver = createServer((req, res) => {
      let body = '';
      req.setEncoding('utf8');
      req.on('data', (c: string) => (body += c));
      req.on('end', () => {
        for (const line of body.split('\n')) if (line !== '') received.push(JSON.parse(line) as AlertRecord);
        res.writeHead(204).end();
      });
    });
    await new Promise<void>((r) => receiver?.listen(0, '127.0.0.1', r));
  });

  after(async () => {
    await enforcer?.kill('SIGTERM');
    if (work !== '') await stopHelper(join(work, 'state', 'fanotify.sock')).catch(() => undefined);
    receiver?.close();
    rmSync(TOOL, { force: true });
    if (work !== '') rmSync(work, { recursive: true, force: true });
  });

  it('delivers the alert to the webhook, counts the filtered one, and shows both in /status and /metrics; logs --since reads it', async () => {
    const { port } = receiver?.address() as { port: number };
    enforcer = await startEnforcer(
      [
        '--policy-dir',
        join(work, 'policies'),
        '--data-plane',
        'fanotify',
        '--node-name',
        'outputs-node',
        '--state-dir',
        join(work, 'state'),
        '--containerd-socket',
        join(work, 'no-containerd.sock'),
        '--alert-log',
        join(work, 'alerts.log'),
        '--poll-ms',
        '200',
        '--release-on-exit',
        '--alert-output',
        `http://127.0.0.1:${port}/hook?batchSize=1&name=hook`,
        '--alert-output',
        `http://127.0.0.1:${port}/high?minSeverity=9&name=high`,
      ],
      { startTimeoutMs: 90_000 },
    );
    const url = enforcer.url;
    await waitFor(() => runTool().status === 126, 'the tool blocked', 60_000);
    await waitFor(() => received.some((a) => a.Resource === TOOL), 'the alert at the webhook', 30_000);
    const alert = received.find((a) => a.Resource === TOOL);
    assert.equal(alert?.PolicyName, POLICY);
    assert.equal(alert?.Action, 'Block');
    assert.equal(alert?.Severity, '6');

    let outputs: AlertOutputStats[] = [];
    await waitFor(() => {
      void getJson<{ outputs?: AlertOutputStats[] }>(`${url}/status`).then(
        (s) => (outputs = s.outputs ?? []),
      );
      return (outputs.find((o) => o.name === 'high')?.filtered ?? 0) >= 1;
    }, 'status with output counters');
    const hook = outputs.find((o) => o.name === 'hook');
    const high = outputs.find((o) => o.name === 'high');
    assert.ok(hook && hook.sent >= 1 && hook.failed === 0 && hook.dropped === 0, JSON.stringify(hook));
    assert.ok(high && high.sent === 0 && high.filtered >= 1, JSON.stringify(high));

    const metrics = await fetchText(`${url}/metrics`);
    assert.match(metrics, /^rtctl_enforcer_data_plane_info\{plane="fanotify"\} 1$/m);
    const count = (re: RegExp): number => Number(re.exec(metrics)?.[1] ?? NaN);
    assert.ok(
      count(
        new RegExp(
          `^rtctl_alerts_total\\{policy="${POLICY}",operation="Process",action="Block"\\} (\\d+)$`,
          'm',
        ),
      ) >= 1,
      metrics.slice(0, 3000),
    );
    assert.ok(count(/^rtctl_enforcer_decisions_total (\d+)$/m) >= 1);
    assert.ok(count(/^rtctl_enforcer_apply_duration_seconds_count\{result="ok"\} (\d+)$/m) >= 1);
    assert.ok(
      count(/^rtctl_alert_output_alerts_total\{output="high",kind="http",result="filtered"\} (\d+)$/m) >= 1,
    );

    const logs = await promisify(execFile)(
      process.execPath,
      rtctlArgs(['logs', '--no-follow', '--server', url, '--since', '10m', '--policy', POLICY, '-o', 'json']),
      { cwd: REPO_ROOT, encoding: 'utf8', timeout: 90_000 },
    );
    const lines = logs.stdout.split('\n').filter((l) => l !== '');
    assert.ok(lines.length >= 1);
    assert.ok(lines.every((l) => (JSON.parse(l) as AlertRecord).PolicyName === POLICY));
  });
});
