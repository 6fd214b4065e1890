// Defects the peer scenarios found, on real containers (containerd + runc + busybox) with the fanotify plane and
// `rtctl enforcer run` over a policy directory; alerts read back with `rtctl logs`:
// - `pts: false` (read as the reference reads it: a terminal rule) leaves a process run without a terminal
//   alone and blocks the same exec from a terminal (`ctr tasks exec -t` under `script`, which gives it a pty);
// - the exec runc performs (`ctr tasks exec` of a binary: runc's init stage execs it) names runc as `/runc` in
//   Source and ParentProcessName, so a `fromSource: /runc` rule matches it; a process runc started directly
//   has `/runc` (or the shim's name) as ParentProcessName, never a host path;
// - DefaultPosture alerts carry an empty Severity.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { decideOperation } from '../../../compiler/decide/decide.js';
import type { Workload } from '../../../compiler/decide/decision-input.js';
import { lintTexts } from '../../../compiler/lint.js';
import { hasCommand, requirePrereqs } from '../../support/prereq.js';
import {
  CONTAINERD_NAMESPACE,
  containerdPrereqs,
  startContainerd,
  type Containerd,
} from '../support/containerd.js';
import {
  readLogs,
  startEnforcer,
  stopHelper,
  waitForAlert,
  waitForStatus,
  type EnforcerProcess,
} from '../support/enforcer-process.js';

const NS = 'ns-peer';

const POLICIES: Record<string, string> = {
  'pts.yaml': `apiVersion: security.runtime.com/v1
kind: RuntimePolicy
metadata: {name: block-sleep-pts, namespace: ${NS}}
spec:
  severity: 5
  selector: {matchLabels: {app: tty}}
  process:
    matchPaths:
      - path: /bin/sleep
        pts: false
  action: Block
`,
  'runc.yaml': `apiVersion: security.runtime.com/v1
kind: RuntimePolicy
metadata: {name: block-sleep-from-runc, namespace: ${NS}}
spec:
  severity: 6
  selector: {matchLabels: {app: runc}}
  process:
    matchPaths:
      - path: /bin/sleep
        fromSource:
          - path: /runc
  file:
    matchPaths:
      - path: /data/hello.txt
  action: Block
`,
  'posture.yaml': `apiVersion: security.runtime.com/v1
kind: RuntimePolicy
metadata: {name: allow-sh, namespace: ${NS}}
spec:
  selector: {matchLabels: {app: posture}}
  process:
    matchPaths:
      - path: /bin/sh
  action: Allow
---
apiVersion: v1
kind: Namespace
metadata:
  name: ${NS}
  annotations:
    runtime-file-posture: block
`,
};

describe('peer scenario defects on real containers (fanotify plane)', function () {
  this.timeout(180000);
  let cd: Containerd | undefined;
  let enforcer: EnforcerProcess | undefined;
  let work = '';
  const stateDir = (): string => join(work, 'state');
  const url = (): string => enforcer?.url ?? '';
  const ruleSet = () => lintTexts(Object.entries(POLICIES).map(([file, text]) => ({ file, text }))).ruleSet;
  const workload = (app: string): Workload => ({
    kind: 'container',
    namespace: NS,
    labels: { app },
    nodeLabels: {},
  });

  before(async function () {
    requirePrereqs(this, [...containerdPrereqs(), [hasCommand('script'), 'script (util-linux)']]);
    work = mkdtempSync(join(tmpdir(), 'rtctl-peer-'));
    mkdirSync(join(work, 'policies'));
    mkdirSync(stateDir());
    for (const [file, text] of Object.entries(POLICIES)) writeFileSync(join(work, 'policies', file), text);
    cd = await startContainerd();
    for (const app of ['tty', 'runc', 'posture'])
      await cd.runContainer({
        id: `peer-${app}`,
        pod: `peer-${app}`,
        namespace: NS,
        container: 'c',
        labels: { app },
      });
    enforcer = await startEnforcer([
      '--policy-dir',
      join(work, 'policies'),
      '--data-plane',
      'fanotify',
      '--containerd-socket',
      cd.socket,
      '--state-dir',
      stateDir(),
      '--alert-log',
      join(work, 'alerts.jsonl'),
      '--poll-ms',
      '200',
    ]);
    await waitForStatus(url(), (s) => s.workloads.length === 3, 60000);
  });

  after(async function () {
    this.timeout(60000);
    await enforcer?.kill('SIGTERM');
    if (work !== '') await stopHelper(join(stateDir(), 'fanotify.sock'));
    await cd?.stop();
    if (work !== '') rmSync(work, { recursive: true, force: true });
  });

  describe('pts: false', () => {
    it('a process run without a terminal is not blocked, and no alert names it; the oracle agrees', async () => {
      const r = await cd?.exec('peer-tty', ['/bin/sh', '-c', '/bin/sleep 0; echo rc=$?']);
      assert.equal(r?.stdout.trim(), 'rc=0', JSON.stringify(r));
      const d = decideOperation(ruleSet(), workload('tty'), {
        operation: 'Process',
        resource: '/bin/sleep',
        parentExecutable: '/bin/sh',
        write: false,
        owner: true,
        tty: false,
      });
      assert.equal(d.allowed, true);
      assert.equal(d.alert, null);
    });

    it('the same exec from a terminal is blocked with an alert', async () => {
      assert.ok(cd);
      // `script` gives ctr a pty; `-t` passes a terminal to the exec'd process.
      const command = [
        'ctr',
        '-a',
        cd.socket,
        '-n',
        CONTAINERD_NAMESPACE,
        'tasks',
        'exec',
        '-t',
        '--exec-id',
        `tty-${process.pid}`,
        'peer-tty',
        '/bin/sh',
        '-c',
        '/bin/sleep 0; echo rc=$?',
      ].join(' ');
      const r = spawnSync('script', ['-qec', command, '/dev/null'], { encoding: 'utf8', timeout: 60000 });
      assert.match(r.stdout, /Operation not permitted/, JSON.stringify(r));
      assert.match(r.stdout, /rc=126/);
      const a = await waitForAlert(url(), (x) => x.PolicyName === 'block-sleep-pts');
      assert.equal(a.Action, 'Block');
      assert.equal(a.Resource, '/bin/sleep');
      assert.equal(
        readLogs(url(), ['-n', NS]).filter((x) => x.PolicyName === 'block-sleep-pts').length,
        1,
        'only the terminal exec is reported',
      );
    });
  });

  describe('Source and ParentProcessName when runc performs the exec', () => {
    it('an exec runc performs is named /runc in Source and ParentProcessName; fromSource: /runc blocks it', async () => {
      const direct = await cd?.exec('peer-runc', ['/bin/sleep', '0']);
      assert.notEqual(direct?.code, 0, 'runc performing the exec of /bin/sleep is denied');
      const viaShell = await cd?.exec('peer-runc', ['/bin/sh', '-c', '/bin/sleep 0; echo rc=$?']);
      assert.equal(viaShell?.stdout.trim(), 'rc=0', 'the shell is not /runc: not denied');
      const a = await waitForAlert(
        url(),
        (x) => x.PolicyName === 'block-sleep-from-runc' && x.Operation === 'Process',
      );
      assert.equal(a.Source, '/runc');
      assert.equal(a.ParentProcessName, '/runc');
      assert.equal(a.ProcessName, '/bin/sleep');
      const d = decideOperation(ruleSet(), workload('runc'), {
        operation: 'Process',
        resource: '/bin/sleep',
        parentExecutable: a.Source,
        write: false,
        owner: true,
      });
      assert.equal(d.allowed, false);
      assert.equal(d.alert?.PolicyName, 'block-sleep-from-runc');
    });

    it('a process runc started has its host-side parent named by its base name, never a host path', async () => {
      const r = await cd?.exec('peer-runc', ['/bin/cat', '/data/hello.txt']);
      assert.notEqual(r?.code, 0);
      const a = await waitForAlert(
        url(),
        (x) => x.PolicyName === 'block-sleep-from-runc' && x.Operation === 'File',
      );
      assert.equal(a.ProcessName, '/bin/cat');
      assert.equal(a.Source, '/bin/cat');
      // runc exec, or the shim once runc exec has exited: one path component, no host folder.
      assert.match(
        a.ParentProcessName,
        /^\/(runc|containerd-shim-runc-v2|containerd-shim)$/,
        JSON.stringify(a),
      );
    });
  });

  describe('Severity on DefaultPosture alerts', () => {
    it('is empty (no rule decided), as the oracle says', async () => {
      const r = await cd?.exec('peer-posture', ['/bin/sh', '-c', '/bin/sleep 0']);
      assert.equal(r?.code, 126, JSON.stringify(r));
      const a = await waitForAlert(
        url(),
        (x) => x.PodName === 'peer-posture' && x.PolicyName === 'DefaultPosture',
      );
      assert.equal(a.Severity, '');
      const d = decideOperation(
        ruleSet(),
        workload('posture'),
        {
          operation: 'Process',
          resource: '/bin/sleep',
          parentExecutable: '/bin/sh',
          write: false,
          owner: true,
        },
        { file: 'block' },
      );
      assert.equal(d.alert?.PolicyName, 'DefaultPosture');
      assert.equal(d.alert?.Severity, a.Severity);
      const logged = readLogs(url(), ['-n', NS, '--pod', 'peer-posture']).find(
        (x) => x.PolicyName === 'DefaultPosture',
      );
      assert.equal(logged?.Severity, '');
    });
  });
});
