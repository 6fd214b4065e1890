// The BPF-LSM plane through the user's commands, inside the guest: `rtctl enforcer run --data-plane bpf-lsm`
// over a policy directory with a real containerd, a blocked exec in a pod container (Permission denied, 126),
// its alert read back with `rtctl logs -n <ns> --json` (Enforcer BPFLSM, Result Permission denied, Data naming
// the exec system call), enforcement kept after the enforcer is killed, and `rtctl enforcer stop` detaching it.
import assert from 'node:assert/strict';
import { execFile, execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { startContainerd, type Containerd, type TestContainer } from '../../support/containerd.js';
import {
  readLogs,
  rtctlArgs,
  startEnforcer,
  waitForStatus,
  type EnforcerProcess,
} from '../../support/enforcer-process.js';
import { repoRoot } from './guest-support.js';

const WORK = '/tmp/cli-e2e';
const POLICY = `apiVersion: security.runtime.com/v1
kind: RuntimePolicy
metadata: { name: cli-block-sleep, namespace: ns-cli }
spec:
  selector: { matchLabels: { app: cli } }
  process:
    matchPaths:
      - path: /bin/sleep
  severity: 7
  action: Block
`;

interface StopRun {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** `rtctl enforcer stop --data-plane bpf-lsm`, its exit status and output, whatever the outcome. */
function runStop(): Promise<StopRun> {
  return new Promise((resolve) => {
    const child = execFile(
      process.execPath,
      rtctlArgs(['enforcer', 'stop', '--data-plane', 'bpf-lsm', '--state-dir', path.join(WORK, 'state')]),
      { cwd: repoRoot },
      (_err, stdout, stderr) => resolve({ code: child.exitCode, signal: child.signalCode, stdout, stderr }),
    );
  });
}

/** The guest's available memory, for the log and for a failure's message. */
function memAvailable(): string {
  const line = readFileSync('/proc/meminfo', 'utf8')
    .split('\n')
    .find((l) => l.startsWith('MemAvailable:'));
  return line?.replace(/\s+/g, ' ') ?? 'MemAvailable unknown';
}

/** Everything a failed stop left to go on: status, output, memory, and the guest kernel's last messages. */
function describeStop(run: StopRun): string {
  let kernel: string;
  try {
    kernel = execFileSync('dmesg', [], { encoding: 'utf8' }).split('\n').slice(-15).join('\n');
  } catch (err) {
    kernel = `dmesg failed: ${String(err)}`;
  }
  return [
    `rtctl enforcer stop: exit ${String(run.code)}, signal ${String(run.signal)}, ${memAvailable()}`,
    `stdout: ${run.stdout}`,
    `stderr: ${run.stderr}`,
    `kernel:\n${kernel}`,
  ].join('\n');
}

describe('rtctl enforcer run --data-plane bpf-lsm and rtctl logs (in the guest)', function () {
  // Hang detectors, not speed judges: under TCG each `rtctl` start transpiles the CLI with tsx, which takes
  // about a minute on an idle host and several while the host runs the rest of the suite beside the guest.
  this.timeout(1500000);
  let containerd: Containerd;
  let pod: TestContainer;
  let enforcer: EnforcerProcess | undefined;

  const sleepInPod = () => containerd.exec(pod.id, ['/bin/sh', '-c', '/bin/sleep 0']);

  before(async () => {
    execFileSync('sh', [path.join(repoRoot, 'test/guest/guest-modprobe.sh'), 'overlay']);
    mkdirSync(path.join(WORK, 'policies'), { recursive: true });
    writeFileSync(path.join(WORK, 'policies', 'block-sleep.yaml'), POLICY);
    containerd = await startContainerd();
    pod = await containerd.runContainer({
      id: 'cli-pod',
      pod: 'cli-0',
      namespace: 'ns-cli',
      container: 'cli',
      labels: { app: 'cli' },
    });
  });

  after(async () => {
    await enforcer?.kill('SIGKILL');
    await containerd.stop();
  });

  it('blocks the exec (Permission denied, 126) and `rtctl logs -n ns-cli --json` shows the BPFLSM alert with the pod identity', async () => {
    assert.equal((await sleepInPod()).code, 0, 'sleep runs before the enforcer');
    enforcer = await startEnforcer(
      [
        '--policy-dir',
        path.join(WORK, 'policies'),
        '--data-plane',
        'bpf-lsm',
        '--node-name',
        'guest-node',
        '--cluster-name',
        'guest-cluster',
        '--containerd-socket',
        containerd.socket,
        '--state-dir',
        path.join(WORK, 'state'),
        '--poll-ms',
        '300',
      ],
      { startTimeoutMs: 600000 },
    );
    const url = enforcer.url;
    const status = await waitForStatus(
      url,
      (s) => s.workloads.some((w) => w.pod === 'cli-0' && w.policies.includes('cli-block-sleep')),
      300000,
    );
    assert.equal(status.dataPlane, 'BPFLSM');
    const r = await sleepInPod();
    assert.equal(r.code, 126, `${r.code} ${r.stderr}`);
    assert.match(r.stdout + r.stderr, /Permission denied/);
    let alert;
    // Node starts slowly under emulation, the more so while the host runs other suites: give `rtctl logs`
    // minutes, not seconds (a CI run under load took over 180 s for one call).
    for (let i = 0; i < 3 && alert === undefined; i++) {
      alert = readLogs(url, ['-n', 'ns-cli'], 420000).find((a) => a.PolicyName === 'cli-block-sleep');
      if (alert === undefined) await sleep(1000);
    }
    assert.ok(alert, 'an alert for the blocked exec');
    assert.equal(alert.Enforcer, 'BPFLSM');
    assert.equal(alert.Result, 'Permission denied');
    assert.equal(alert.Action, 'Block');
    assert.equal(alert.Operation, 'Process');
    assert.equal(alert.NamespaceName, 'ns-cli');
    assert.equal(alert.PodName, 'cli-0');
    assert.equal(alert.ContainerName, 'cli');
    assert.equal(alert.ClusterName, 'guest-cluster');
    assert.match(alert.Data, /syscall=SYS_EXECVE/);
  });

  it('keeps blocking after the enforcer is killed, and `rtctl enforcer stop --data-plane bpf-lsm` detaches', async () => {
    await enforcer?.kill('SIGKILL');
    assert.equal((await sleepInPod()).code, 126, 'still blocked with the enforcer dead');
    process.stdout.write(`[report] cli: guest ${memAvailable()} before rtctl enforcer stop\n`);
    let stop = await runStop();
    // A CI run once saw this command end non-zero with no output at all (no message of rtctl's, no stack:
    // the emulated node process died). It then said nothing about the product: run it once more, and log the
    // first run's status, memory and kernel messages. A run that says anything is judged as it is.
    if (stop.code !== 0 && stop.stdout === '' && stop.stderr === '') {
      process.stdout.write(
        `[report] cli: rtctl enforcer stop died silently, run again; ${describeStop(stop)}\n`,
      );
      stop = await runStop();
    }
    assert.equal(stop.code, 0, describeStop(stop));
    assert.match(stop.stdout, /released the bpf-lsm data plane/, describeStop(stop));
    assert.equal((await sleepInPod()).code, 0, 'sleep runs again after rtctl enforcer stop');
  });
});
