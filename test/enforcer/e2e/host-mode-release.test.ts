// systemd mode on a host with no container runtime: `rtctl enforcer run` over a policy directory still enforces
// a host policy (the container list fails and is retried), the fanotify helper keeps enforcing after the
// enforcer is killed, and `rtctl enforcer stop` releases it.
import assert from 'node:assert/strict';
import { execFile, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import { isRoot, requirePrereqs } from '../../support/prereq.js';
import {
  REPO_ROOT,
  rtctlArgs,
  startEnforcer,
  stopHelper,
  type EnforcerProcess,
} from '../support/enforcer-process.js';

const TOOL = '/usr/local/bin/rtctl-e2e-release-tool';
const runTool = () => spawnSync('/bin/sh', ['-c', TOOL], { encoding: 'utf8' });

async function waitUntil(predicate: () => boolean, timeoutMs: number): Promise<boolean> {
  const end = Date.now() + timeoutMs;
  while (Date.now() < end) {
    if (predicate()) return true;
    await sleep(200);
  }
  return predicate();
}

describe('enforcer without a container runtime, and rtctl enforcer stop (fanotify, real kernel)', function () {
  this.timeout(120000);
  let work = '';
  let enforcer: EnforcerProcess | undefined;

  before(function () {
    requirePrereqs(this, [[isRoot(), 'root (fanotify permission events)']]);
    work = mkdtempSync(join(tmpdir(), 'rtctl-release-'));
    mkdirSync(join(work, 'policies'));
    writeFileSync(TOOL, '#!/bin/sh\necho tool-ran\n', { mode: 0o755 });
    writeFileSync(
      join(work, 'policies', 'host.yaml'),
      [
        'apiVersion: security.runtime.com/v1',
        'kind: RuntimeHostPolicy',
        'metadata:',
        '  name: host-block-release-tool',
        'spec:',
        '  nodeSelector:',
        '    matchLabels:',
        '      kubernetes.io/hostname: release-node',
        '  process:',
        '    matchPaths:',
        `    - path: ${TOOL}`,
        '  action: Block',
        '',
      ].join('\n'),
    );
  });

  after(async () => {
    await enforcer?.kill('SIGKILL');
    if (work !== '') await stopHelper(join(work, 'state', 'fanotify.sock')).catch(() => undefined);
    rmSync(TOOL, { force: true });
    if (work !== '') rmSync(work, { recursive: true, force: true });
  });

  it('enforces the host policy with no containerd socket, keeps enforcing after SIGKILL, and is released by `rtctl enforcer stop`', async () => {
    assert.equal(runTool().status, 0, 'the tool runs before any enforcer');
    enforcer = await startEnforcer([
      '--policy-dir',
      join(work, 'policies'),
      '--data-plane',
      'fanotify',
      '--node-name',
      'release-node',
      '--state-dir',
      join(work, 'state'),
      '--containerd-socket',
      join(work, 'no-containerd.sock'),
      '--poll-ms',
      '200',
    ]);
    assert.ok(
      await waitUntil(() => runTool().status === 126, 60000),
      `never blocked:\n${enforcer.stderr().slice(-2000)}`,
    );
    assert.match(runTool().stderr, /Operation not permitted/);
    assert.match(enforcer.stderr(), /cannot list containers/);

    await enforcer.kill('SIGKILL');
    for (let i = 0; i < 20; i++) assert.equal(runTool().status, 126, 'still blocked after the enforcer died');

    const stop = await promisify(execFile)(
      process.execPath,
      rtctlArgs(['enforcer', 'stop', '--data-plane', 'fanotify', '--state-dir', join(work, 'state')]),
      { cwd: REPO_ROOT },
    );
    assert.match(stop.stdout, /released the fanotify data plane/);
    assert.ok(await waitUntil(() => runTool().status === 0, 10000), 'runs again after rtctl enforcer stop');
    assert.equal(runTool().stdout.trim(), 'tool-ran');
  });
});
