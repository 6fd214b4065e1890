// Start-up failures leave nothing running: `--alert-log` in a missing folder is refused (exit 2,
// `rtctl: …`, no stack) before any data plane starts; a failure after the data plane started releases it
// unless it was already enforcing a state kept from a previous run. `rtctl enforcer stop` needs root and
// starts nothing when nothing is in force. The enforcer's log lines carry each key once.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { EnforcementTarget } from '../../compiler/enforcement/enforcement-table.js';
import { createAlertHub } from '../../enforcer/alerts/alert-hub.js';
import { createLogger } from '../../enforcer/cli.js';
import type { DataPlane, DataPlaneEvent } from '../../enforcer/data-plane.js';
import { createEnforcer } from '../../enforcer/enforcer.js';
import type { PolicySource } from '../../enforcer/policy-source.js';
import { isRoot, requirePrereqs } from '../support/prereq.js';
import { REPO_ROOT, rtctlArgs } from './support/enforcer-process.js';

function run(
  args: string[],
  uid?: number,
): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, rtctlArgs(args), {
      cwd: REPO_ROOT,
      ...(uid !== undefined ? { uid, gid: uid, env: { ...process.env, HOME: '/tmp' } } : {}),
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (c: string) => (stdout += c));
    child.stderr.setEncoding('utf8').on('data', (c: string) => (stderr += c));
    child.on('exit', (status) => resolve({ status, stdout, stderr }));
  });
}

/** A stand-in data plane recording what the enforcer asks of it (the kernel side is not under test here). */
function recordingPlane(generation: number): DataPlane & { stops: boolean[] } {
  const stops: boolean[] = [];
  return {
    stops,
    name: 'Recording',
    auditName: 'Recording',
    start: () => Promise.resolve(),
    apply: () => Promise.resolve(),
    enforced: () => Promise.resolve({ generation, workloads: [] }),
    events: (): AsyncIterable<DataPlaneEvent> => ({
      [Symbol.asyncIterator]: () => ({
        next: () => Promise.resolve({ done: true as const, value: undefined }),
      }),
    }),
    stats: () => Promise.resolve({ decisions: 0, cacheHits: 0, reported: 0, dropped: 0, workloads: 0 }),
    stop: ({ keepEnforcing }) => {
      stops.push(keepEnforcing);
      return Promise.resolve();
    },
  };
}

const failingSource: PolicySource = {
  start: () => Promise.reject(new Error('policy source unreachable')),
  stop: () => Promise.resolve(),
};

describe('enforcer start-up failures and release', function () {
  this.timeout(120000);
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'rtctl-startup-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('--alert-log in a missing folder: exit 2 with `rtctl: …`, and no data plane or socket left', async () => {
    mkdirSync(join(dir, 'policies'));
    const state = join(dir, 'state');
    const r = await run([
      'enforcer',
      'run',
      '--policy-dir',
      join(dir, 'policies'),
      '--data-plane',
      'fanotify',
      '--state-dir',
      state,
      '--alert-log',
      join(dir, 'missing', 'alerts.log'),
    ]);
    assert.equal(r.status, 2, r.stderr);
    assert.match(r.stderr, /^rtctl: --alert-log: cannot open .*missing\/alerts\.log: ENOENT/m);
    assert.doesNotMatch(r.stderr, /\n\s+at /, 'no stack trace');
    assert.deepEqual(existsSync(state) ? readdirSync(state) : [], [], 'no helper socket, no alert socket');
  });

  for (const [inherited, keep] of [
    [0, false],
    [7, true],
  ] as const) {
    it(`a start that fails after the data plane started releases it (${inherited ? 'keeps a state from a previous run' : 'nothing was enforced before'}; stand-in plane)`, async () => {
      const plane = recordingPlane(inherited);
      const enforcer = createEnforcer({
        source: failingSource,
        containers: { list: () => Promise.resolve([]) },
        plane,
        enforcementTarget: EnforcementTarget.Fanotify,
        hub: createAlertHub(10),
        clusterName: 'c',
        nodeName: 'n',
        nodeLabels: {},
        pollMs: 1000,
        logger: pino({ level: 'silent' }),
      });
      await assert.rejects(enforcer.start(), /policy source unreachable/);
      assert.deepEqual(plane.stops, [keep]);
    });
  }

  it('`rtctl enforcer stop` by a non-root user is a permission error', async function () {
    requirePrereqs(this, [[isRoot(), 'root (to run the CLI as another user)']]);
    const r = await run(['enforcer', 'stop', '--state-dir', dir], 65534);
    assert.equal(r.status, 2, r.stderr);
    assert.match(r.stderr, /^rtctl: enforcer stop: permission denied: releasing a data plane needs root/m);
  });

  it('`rtctl enforcer stop` with nothing enforcing starts nothing and says so', async function () {
    requirePrereqs(this, [[isRoot(), 'root']]);
    const r = await run(['enforcer', 'stop', '--data-plane', 'fanotify', '--state-dir', dir]);
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /nothing to release: no fanotify data plane is enforcing/);
    assert.deepEqual(readdirSync(dir), [], 'no helper started');
  });

  it('log lines carry "pid" once (a logged pid field is renamed)', () => {
    let out = '';
    const sink = new Writable({
      write(chunk: Buffer, _enc, done) {
        out += chunk.toString('utf8');
        done();
      },
    });
    createLogger(sink).info({ pid: 4242, socket: '/s' }, 'started fanotify helper');
    assert.equal((out.match(/"pid":/g) ?? []).length, 1, out);
    const line = JSON.parse(out) as Record<string, unknown>;
    assert.equal(line['pid'], process.pid);
    assert.equal(line['targetPid'], 4242);
  });
});
