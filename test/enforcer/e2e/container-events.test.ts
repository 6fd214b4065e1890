// Container discovery from containerd's event stream (real containerd + runc, real `ctr events`, the fanotify
// plane on the real kernel): with the poll and the resync both set to a minute, a container started after the
// enforcer is enforced within seconds (so through the event path), a removed one leaves the state, and a
// killed event client is restarted and followed by a full list.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { requirePrereqs } from '../../support/prereq.js';
import { containerdPrereqs, startContainerd, type Containerd } from '../support/containerd.js';
import {
  startEnforcer,
  stopHelper,
  waitForStatus,
  type EnforcerProcess,
} from '../support/enforcer-process.js';
import type { EnforcerStatus } from '../../../enforcer/enforcer.js';
import { waitUntil } from '../../support/wait-until.js';

const POLICY = [
  'apiVersion: security.runtime.com/v1',
  'kind: RuntimePolicy',
  'metadata:',
  '  name: late-block-cat',
  '  namespace: ns-late',
  'spec:',
  '  selector:',
  '    matchLabels:',
  '      app: late',
  '  process:',
  '    matchPaths:',
  '    - path: /bin/cat',
  '  action: Block',
  '',
].join('\n');

/** Well under the one-minute poll and resync: a workload seen within this came through the event path. */
const EVENT_PATH_MS = 20000;

/** Pids of `ctr -a <socket> events` processes. */
function eventClients(socket: string): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const argv = readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0');
      if (argv[0]?.endsWith('ctr') && argv.includes(socket) && argv.includes('events'))
        pids.push(Number(entry));
    } catch {
      // gone
    }
  }
  return pids;
}

describe('container discovery from containerd events (containerd + runc, ctr events, fanotify)', function () {
  this.timeout(180000);
  let work = '';
  let stateDir = '';
  let cd: Containerd | undefined;
  let enforcer: EnforcerProcess | undefined;

  /** Runs container `late-<n>` (the policy selects it) and waits until the enforcer's state holds it. */
  async function startLate(n: number): Promise<EnforcerStatus> {
    assert.ok(cd && enforcer);
    const id = `late-${n}`;
    await cd.runContainer({
      id,
      pod: n === 1 ? 'late' : `late${n}`,
      namespace: 'ns-late',
      container: 'c',
      labels: { app: 'late' },
    });
    return waitForStatus(enforcer.url, (s) => s.workloads.some((w) => w.key === id), EVENT_PATH_MS);
  }

  before(async function () {
    requirePrereqs(this, containerdPrereqs());
    work = mkdtempSync(join(tmpdir(), 'rtctl-ctr-events-'));
    stateDir = join(work, 'state');
    mkdirSync(join(work, 'policies'));
    writeFileSync(join(work, 'policies', 'late.yaml'), POLICY);
    cd = await startContainerd();
    enforcer = await startEnforcer([
      '--policy-dir',
      join(work, 'policies'),
      '--data-plane',
      'fanotify',
      '--node-name',
      'events-node',
      '--containerd-socket',
      cd.socket,
      '--state-dir',
      stateDir,
      '--poll-ms',
      '60000',
      '--resync-ms',
      '60000',
    ]);
    await waitForStatus(enforcer.url, (s) => s.containerEvents?.up === true, EVENT_PATH_MS);
  });

  after(async function () {
    this.timeout(60000);
    await enforcer?.kill('SIGTERM');
    if (stateDir !== '') await stopHelper(join(stateDir, 'fanotify.sock'));
    if (cd !== undefined) assert.deepEqual(eventClients(cd.socket), [], 'no event client left behind');
    await cd?.stop();
    if (work !== '') rmSync(work, { recursive: true, force: true });
  });

  it('enforces a container started after the enforcer without waiting for the resync', async () => {
    assert.ok(cd && enforcer);
    const started = Date.now();
    const status = await startLate(1);
    assert.ok(Date.now() - started < 60000);
    assert.deepEqual(status.workloads.find((w) => w.key === 'late-1')?.policies, ['late-block-cat']);
    const r = await cd.exec('late-1', ['/bin/cat', '/data/hello.txt']);
    assert.notEqual(r.code, 0, `cat ran: ${JSON.stringify(r)}`);
    assert.match(r.stderr, /not permitted|denied/i);
  });

  it('drops a removed container from the state', async () => {
    assert.ok(cd && enforcer);
    await cd.removeContainer('late-1');
    await waitForStatus(enforcer.url, (s) => !s.workloads.some((w) => w.key === 'late-1'), EVENT_PATH_MS);
  });

  it('restarts a killed event client, lists again, and follows the new one', async () => {
    assert.ok(cd && enforcer);
    const socket = cd.socket;
    const [first] = await waitUntil(
      'one event client',
      () => {
        const pids = eventClients(socket);
        return pids.length === 1 ? pids : undefined;
      },
      EVENT_PATH_MS,
      50,
    );
    assert.ok(first !== undefined);
    process.kill(first, 'SIGKILL');
    // Started while the client is down: the full list after the restart finds it.
    await startLate(2);
    const stderr = enforcer.stderr();
    assert.match(stderr, /containerd event stream stopped; polling until it is back/);
    assert.match(stderr, /signal SIGKILL/);
    const second = await waitUntil(
      'the new client',
      () => {
        const pids = eventClients(socket).filter((p) => p !== first);
        return pids.length === 1 ? pids[0] : undefined;
      },
      EVENT_PATH_MS,
      50,
    );
    assert.notEqual(second, first);
    await waitUntil(
      'the stream back',
      () => /containerd event stream is back/.test(enforcer?.stderr() ?? ''),
      EVENT_PATH_MS,
      50,
    );
    const status = await waitForStatus(enforcer.url, (s) => s.containerEvents?.up === true);
    assert.equal(status.containerEvents?.starts, 2);
    assert.equal(status.containerEvents?.malformed, 0);
    assert.ok((status.containerEvents?.changes ?? 0) >= 3, 'late-1 start, exit and delete at least');
    // And the new client carries events: a third container is found without a resync.
    await startLate(3);
  });
});
