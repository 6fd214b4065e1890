// End to end on real containers (containerd + runc + busybox-static) with the fanotify data plane: the
// enforcer runs as `rtctl enforcer run` over a policy directory, containers are labelled as the kubelet
// labels pod containers in two namespaces, and every outcome is checked against the decision oracle
// (compiler/decide) as well as against the expected text. Alerts are read back with `rtctl logs`.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import {
  chmodSync,
  mkdirSync,
  mkdtempSync,
  rmSync,
  writeFileSync,
  existsSync,
  readdirSync,
  readFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { decideOperation } from '../../../compiler/decide/decide.js';
import type { OperationRequest, Postures, Workload } from '../../../compiler/decide/decision-input.js';
import type { Decision } from '../../../compiler/decide/decision.js';
import { lintTexts } from '../../../compiler/lint.js';
import type { AlertRecord } from '../../../enforcer/alerts/alert-record.js';
import { requirePrereqs } from '../../support/prereq.js';
import { containerdPrereqs, startContainerd, type Containerd } from '../support/containerd.js';
import {
  fetchAlerts,
  readLogs,
  startEnforcer,
  stopHelper,
  waitForAlert,
  waitForStatus,
  type EnforcerProcess,
} from '../support/enforcer-process.js';

const NODE = 'node-e2e';
const CLUSTER = 'e2e-cluster';
/** A script at the same path on the host and in the image (case 5). */
const HOST_TOOL = '/usr/local/bin/rtctl-e2e-tool';
const TOOL_SCRIPT = '#!/bin/sh\necho tool-ran\n';
const SA_DIR = '/run/secrets/kubernetes.io/serviceaccount';

interface PolicyFile {
  name: string;
  text: string;
}

function podPolicy(
  name: string,
  namespace: string,
  app: string,
  action: string,
  section: string,
): PolicyFile {
  return {
    name: `${name}.yaml`,
    text: [
      'apiVersion: security.runtime.com/v1',
      'kind: RuntimePolicy',
      'metadata:',
      `  name: ${name}`,
      `  namespace: ${namespace}`,
      'spec:',
      '  severity: 7',
      '  selector:',
      '    matchLabels:',
      `      app: ${app}`,
      section,
      `  action: ${action}`,
      '',
    ].join('\n'),
  };
}

function namespaceDoc(name: string, filePosture: 'audit' | 'block'): PolicyFile {
  return {
    name: `ns-${name}.yaml`,
    text: `apiVersion: v1\nkind: Namespace\nmetadata:\n  name: ${name}\n  annotations:\n    runtime-file-posture: ${filePosture}\n`,
  };
}

describe('fanotify enforcement on real containers (containerd + runc + busybox)', function () {
  this.timeout(120000);
  let cd: Containerd | undefined;
  let enforcer: EnforcerProcess | undefined;
  let work = '';
  let policyDir = '';
  let stateDir = '';
  let policies: PolicyFile[] = [];
  let createdHostTool = false;

  const labels: Record<string, Record<string, string>> = {
    web: { app: 'web', tier: 'front' },
    db: { app: 'db' },
    api: { app: 'api' },
  };
  const workloadOf = (c: 'web' | 'db' | 'api'): Workload => ({
    kind: 'container',
    namespace: c === 'api' ? 'ns-b' : 'ns-a',
    labels: labels[c] ?? {},
    nodeLabels: {},
  });
  const hostWorkload: Workload = {
    kind: 'host',
    namespace: '',
    labels: {},
    nodeLabels: { 'kubernetes.io/hostname': NODE },
  };

  /** The oracle over the same policy texts the enforcer reads. */
  function oracle(workload: Workload, request: OperationRequest, postures: Postures = {}): Decision {
    const lint = lintTexts(policies.map((p) => ({ file: p.name, text: p.text })));
    return decideOperation(lint.ruleSet, workload, request, postures);
  }

  /** Replaces the policy directory's content and waits until the enforcer applied it. */
  async function setPolicies(files: PolicyFile[], expect: (policyNames: string[]) => boolean): Promise<void> {
    const url = enforcer?.url ?? '';
    const before = (await waitForStatus(url, () => true)).generation;
    for (const f of readdirSync(policyDir)) rmSync(join(policyDir, f));
    for (const f of files) writeFileSync(join(policyDir, f.name), f.text);
    policies = files;
    await waitForStatus(url, (s) => s.generation > before && expect(s.workloads.flatMap((w) => w.policies)));
  }

  async function exec(c: string, argv: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
    if (!cd) throw new Error('containerd not started');
    return cd.exec(c, argv);
  }

  function alertsFor(all: AlertRecord[], pred: (a: AlertRecord) => boolean): AlertRecord[] {
    return all.filter(pred);
  }

  before(async function () {
    this.timeout(180000);
    requirePrereqs(this, containerdPrereqs());
    work = mkdtempSync(join(tmpdir(), 'rtctl-e2e-'));
    policyDir = join(work, 'policies');
    stateDir = join(work, 'state');
    mkdirSync(policyDir);
    mkdirSync(stateDir);
    const saSource = join(work, 'serviceaccount');
    mkdirSync(saSource);
    writeFileSync(join(saSource, 'token'), 'eyJhbGciOiJSUzI1NiJ9.test-token\n');
    writeFileSync(join(saSource, 'namespace'), 'ns-b\n');
    if (!existsSync(HOST_TOOL)) {
      mkdirSync('/usr/local/bin', { recursive: true });
      writeFileSync(HOST_TOOL, TOOL_SCRIPT);
      chmodSync(HOST_TOOL, 0o755);
      createdHostTool = true;
    }
    cd = await startContainerd({ [HOST_TOOL]: { mode: 0o755, content: TOOL_SCRIPT } });
    await cd.runContainer({
      id: 'web-1-c',
      pod: 'web-1',
      namespace: 'ns-a',
      container: 'web',
      labels: labels['web'] ?? {},
    });
    await cd.runContainer({
      id: 'db-1-c',
      pod: 'db-1',
      namespace: 'ns-a',
      container: 'db',
      labels: labels['db'] ?? {},
    });
    await cd.runContainer({
      id: 'api-1-c',
      pod: 'api-1',
      namespace: 'ns-b',
      container: 'api',
      labels: labels['api'] ?? {},
      mounts: [{ source: saSource, destination: SA_DIR }],
    });
    enforcer = await startEnforcer([
      '--policy-dir',
      policyDir,
      '--data-plane',
      'fanotify',
      '--node-name',
      NODE,
      '--cluster-name',
      CLUSTER,
      '--containerd-socket',
      cd.socket,
      '--state-dir',
      stateDir,
      '--alert-log',
      join(work, 'alerts.jsonl'),
      '--poll-ms',
      '200',
    ]);
  });

  after(async function () {
    this.timeout(60000);
    await enforcer?.kill('SIGTERM');
    if (stateDir) await stopHelper(join(stateDir, 'fanotify.sock'));
    await cd?.stop();
    if (createdHostTool) rmSync(HOST_TOOL, { force: true });
    if (work) rmSync(work, { recursive: true, force: true });
  });

  describe('1. Block on /bin/sleep (process)', () => {
    before(async () => {
      await setPolicies(
        [
          podPolicy(
            'block-sleep',
            'ns-a',
            'web',
            'Block',
            '  process:\n    matchPaths:\n    - path: /bin/sleep',
          ),
        ],
        (names) => names.includes('block-sleep'),
      );
    });

    it('the unselected container runs it and yields no alert; the oracle agrees', async () => {
      const r = await exec('db-1-c', ['/bin/sh', '-c', '/bin/sleep 0; echo rc=$?']);
      assert.equal(r.stdout.trim(), 'rc=0', r.stderr);
      const d = oracle(workloadOf('db'), {
        operation: 'Process',
        resource: '/bin/sleep',
        parentExecutable: '/bin/sh',
        write: false,
        owner: true,
      });
      assert.equal(d.allowed, true);
      assert.equal(d.alert, null);
    });

    it('the selected container: "Operation not permitted", exit 126, one alert with its identity', async () => {
      const r = await exec('web-1-c', ['/bin/sh', '-c', '/bin/sleep 0']);
      assert.equal(r.code, 126, `exit ${r.code}: ${r.stderr}`);
      assert.match(r.stderr, /\/bin\/sleep: Operation not permitted/);
      const d = oracle(workloadOf('web'), {
        operation: 'Process',
        resource: '/bin/sleep',
        parentExecutable: '/bin/sh',
        write: false,
        owner: true,
      });
      assert.equal(d.allowed, false);
      assert.equal(d.alert?.Action, 'Block');
      await waitForAlert(enforcer?.url ?? '', (a) => a.PodName === 'web-1' && a.Resource === '/bin/sleep');
      const alerts = readLogs(enforcer?.url ?? '', ['-n', 'ns-a']);
      const mine = alertsFor(alerts, (a) => a.Resource === '/bin/sleep');
      assert.equal(mine.length, 1, JSON.stringify(mine));
      const a = mine[0];
      assert.ok(a);
      assert.equal(a.Operation, 'Process');
      assert.equal(a.Action, 'Block');
      assert.equal(a.Action, d.alert?.Action);
      assert.equal(a.PolicyName, d.alert?.PolicyName);
      assert.equal(a.PolicyName, 'block-sleep');
      assert.equal(a.Type, d.alert?.Type);
      assert.equal(a.Severity, '7');
      assert.equal(a.Result, 'Operation not permitted');
      assert.equal(a.Enforcer, 'Fanotify');
      assert.equal(a.NamespaceName, 'ns-a');
      assert.equal(a.PodName, 'web-1');
      assert.equal(a.ContainerName, 'web');
      assert.equal(a.ContainerID, 'web-1-c');
      assert.match(a.ContainerImage, /^rtctl\.test\/busybox:1@sha256:[0-9a-f]{64}$/);
      assert.equal(a.Labels, 'app=web,tier=front');
      assert.equal(a.ClusterName, CLUSTER);
      assert.equal(a.HostName, NODE);
      assert.equal(a.ProcessName, '/bin/sleep');
      assert.equal(a.ParentProcessName, '/bin/sh');
      assert.equal(a.Source, '/bin/sh');
      assert.equal(a.Data, 'syscall=SYS_EXECVE');
      assert.ok(a.HostPID > 1 && a.HostPPID > 1 && a.PID >= 1, JSON.stringify(a));
      assert.notEqual(a.HostPID, a.PID, 'host and container pids differ');
      assert.equal(typeof a.Timestamp, 'number');
      assert.match(a.UpdatedTime, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d+Z$/);
      assert.equal(
        alertsFor(alerts, (a2) => a2.PodName === 'db-1').length,
        0,
        'no alert for the unselected pod',
      );
    });
  });

  describe('2. Audit on a directory (file)', () => {
    before(async () => {
      await setPolicies(
        [podPolicy('audit-data', 'ns-a', 'db', 'Audit', '  file:\n    matchDirectories:\n    - dir: /data/')],
        (names) => names.includes('audit-data'),
      );
    });

    it('the read succeeds and yields an Audit alert with Enforcer Fanotify and the open flags', async () => {
      const r = await exec('db-1-c', ['/bin/cat', '/data/hello.txt']);
      assert.equal(r.code, 0, r.stderr);
      assert.equal(r.stdout, 'hello from the image\n');
      const d = oracle(workloadOf('db'), {
        operation: 'File',
        resource: '/data/hello.txt',
        executable: '/bin/cat',
        write: false,
        owner: true,
      });
      assert.equal(d.allowed, true);
      assert.equal(d.alert?.Action, 'Audit');
      await waitForAlert(enforcer?.url ?? '', (a) => a.Resource === '/data/hello.txt');
      const a = readLogs(enforcer?.url ?? '', ['-n', 'ns-a', '--operation', 'File']).find(
        (x) => x.Resource === '/data/hello.txt',
      );
      assert.ok(a);
      assert.equal(a.Operation, 'File');
      assert.equal(a.Action, 'Audit');
      assert.equal(a.Result, 'Passed');
      assert.equal(a.Result, d.alert?.Result);
      assert.equal(a.PolicyName, d.alert?.PolicyName);
      assert.equal(a.Enforcer, 'Fanotify');
      assert.equal(a.ProcessName, '/bin/cat');
      assert.equal(a.PodName, 'db-1');
      assert.match(a.Data, /^syscall=SYS_OPENAT fd=-100 flags=O_RDONLY/);
    });
  });

  describe('2b. Audit on a script interpreter (exec of a #! script)', () => {
    it('reports the interpreter opened inside execve without stalling the task', async () => {
      await setPolicies(
        [podPolicy('audit-shell', 'ns-a', 'db', 'Audit', '  process:\n    matchPaths:\n    - path: /bin/sh')],
        (names) => names.includes('audit-shell'),
      );
      // The kernel opens /bin/sh for the script while execve holds the task's cred_guard_mutex.
      const r = await exec('db-1-c', [HOST_TOOL]);
      assert.equal(r.code, 0, r.stderr);
      assert.equal(r.stdout.trim(), 'tool-ran');
      const d = oracle(workloadOf('db'), {
        operation: 'Process',
        resource: '/bin/sh',
        parentExecutable: '/usr/sbin/runc',
        write: false,
        owner: true,
      });
      assert.equal(d.alert?.Action, 'Audit');
      const a = await waitForAlert(
        enforcer?.url ?? '',
        (x) => x.PolicyName === 'audit-shell' && x.Resource === '/bin/sh',
      );
      assert.equal(a.Action, 'Audit');
      assert.equal(a.Result, 'Passed');
      assert.equal(a.Data, 'syscall=SYS_EXECVE');
    });
  });

  describe('3. Allow (least-permissive) with the namespace file posture', () => {
    const allow = podPolicy(
      'allow-basics',
      'ns-b',
      'api',
      'Allow',
      '  process:\n    matchPaths:\n    - path: /bin/sh\n    - path: /bin/ls\n    - path: /bin/cat',
    );

    it('posture block: a binary outside the allow list is denied with a DefaultPosture alert; allowed ones work', async () => {
      await setPolicies([allow, namespaceDoc('ns-b', 'block')], (names) => names.includes('allow-basics'));
      const ok = await exec('api-1-c', ['/bin/sh', '-c', '/bin/ls /data']);
      assert.equal(ok.code, 0, ok.stderr);
      assert.equal(ok.stdout.trim(), 'hello.txt');
      const r = await exec('api-1-c', ['/bin/sh', '-c', '/bin/sleep 0']);
      assert.equal(r.code, 126, r.stderr);
      assert.match(r.stderr, /Operation not permitted/);
      const d = oracle(
        workloadOf('api'),
        {
          operation: 'Process',
          resource: '/bin/sleep',
          parentExecutable: '/bin/sh',
          write: false,
          owner: true,
        },
        { file: 'block' },
      );
      assert.equal(d.allowed, false);
      assert.equal(d.alert?.PolicyName, 'DefaultPosture');
      const a = await waitForAlert(
        enforcer?.url ?? '',
        (x) => x.PodName === 'api-1' && x.Resource === '/bin/sleep' && x.Action === 'Block',
      );
      assert.equal(a.PolicyName, 'DefaultPosture');
      assert.equal(a.Severity, '', 'a posture decision has no severity');
      assert.equal(a.Severity, d.alert?.Severity);
      const fromLogs = readLogs(enforcer?.url ?? '', ['-n', 'ns-b', '--pod', 'api-1']);
      assert.ok(
        fromLogs.some(
          (x) => x.PolicyName === 'DefaultPosture' && x.Action === 'Block' && x.Resource === '/bin/sleep',
        ),
      );
      assert.ok(!fromLogs.some((x) => x.Resource === '/bin/ls'), 'allowed binaries yield no alert');
    });

    it('posture audit: it runs and yields the DefaultPosture audit alert', async () => {
      const gen = (await waitForStatus(enforcer?.url ?? '', () => true)).generation;
      writeFileSync(join(policyDir, 'ns-ns-b.yaml'), namespaceDoc('ns-b', 'audit').text);
      policies = [allow, namespaceDoc('ns-b', 'audit')];
      await waitForStatus(enforcer?.url ?? '', (s) => s.generation > gen);
      const r = await exec('api-1-c', ['/bin/sh', '-c', '/bin/sleep 0; echo rc=$?']);
      assert.equal(r.stdout.trim(), 'rc=0', r.stderr);
      const d = oracle(
        workloadOf('api'),
        {
          operation: 'Process',
          resource: '/bin/sleep',
          parentExecutable: '/bin/sh',
          write: false,
          owner: true,
        },
        { file: 'audit' },
      );
      assert.equal(d.allowed, true);
      assert.equal(d.alert?.Action, 'Audit');
      const a = await waitForAlert(
        enforcer?.url ?? '',
        (x) => x.PodName === 'api-1' && x.Resource === '/bin/sleep' && x.Action === 'Audit',
      );
      assert.equal(a.PolicyName, 'DefaultPosture');
      assert.equal(a.Result, 'Passed');
    });
  });

  describe('4. Block on the service-account token directory', () => {
    it('reading the token fails', async () => {
      await setPolicies(
        [
          podPolicy(
            'block-sa-token',
            'ns-b',
            'api',
            'Block',
            `  file:\n    matchDirectories:\n    - dir: ${SA_DIR}/\n      recursive: true`,
          ),
        ],
        (names) => names.includes('block-sa-token'),
      );
      const r = await exec('api-1-c', ['/bin/cat', `${SA_DIR}/token`]);
      assert.notEqual(r.code, 0);
      assert.match(r.stderr, /Operation not permitted/);
      assert.doesNotMatch(r.stdout, /test-token/);
      const d = oracle(workloadOf('api'), {
        operation: 'File',
        resource: `${SA_DIR}/token`,
        executable: '/bin/cat',
        write: false,
        owner: true,
      });
      assert.equal(d.allowed, false);
      const a = await waitForAlert(enforcer?.url ?? '', (x) => x.Resource === `${SA_DIR}/token`);
      assert.equal(a.Action, 'Block');
      assert.equal(a.PolicyName, 'block-sa-token');
      assert.equal(a.Operation, 'File');
      const fromLogs = readLogs(enforcer?.url ?? '', ['-n', 'ns-b', '--container', 'api']);
      assert.ok(
        fromLogs.some(
          (x) => x.Resource === `${SA_DIR}/token` && x.Action === 'Block' && x.PodName === 'api-1',
        ),
      );
      // Other files of the container stay readable.
      const other = await exec('api-1-c', ['/bin/cat', '/data/hello.txt']);
      assert.equal(other.code, 0, other.stderr);
    });
  });

  describe('5. Host policy', () => {
    it('blocks the binary for host processes and not inside containers', async () => {
      const hostPolicy: PolicyFile = {
        name: 'host-block-tool.yaml',
        text: [
          'apiVersion: security.runtime.com/v1',
          'kind: RuntimeHostPolicy',
          'metadata:',
          '  name: host-block-tool',
          'spec:',
          '  nodeSelector:',
          '    matchLabels:',
          `      kubernetes.io/hostname: ${NODE}`,
          '  process:',
          '    matchPaths:',
          `    - path: ${HOST_TOOL}`,
          '  action: Block',
          '',
        ].join('\n'),
      };
      await setPolicies([hostPolicy], (names) => names.includes('host-block-tool'));
      try {
        const host = spawnSync('/bin/sh', ['-c', HOST_TOOL], { encoding: 'utf8' });
        assert.equal(host.status, 126, host.stderr);
        assert.match(host.stderr, /Operation not permitted/);
        const inContainer = await exec('web-1-c', [HOST_TOOL]);
        assert.equal(inContainer.code, 0, inContainer.stderr);
        assert.equal(inContainer.stdout.trim(), 'tool-ran');
        const d = oracle(hostWorkload, {
          operation: 'Process',
          resource: HOST_TOOL,
          parentExecutable: '/bin/sh',
          write: false,
          owner: true,
        });
        assert.equal(d.allowed, false);
        assert.equal(d.alert?.Type, 'MatchedHostPolicy');
        assert.equal(
          oracle(workloadOf('web'), { operation: 'Process', resource: HOST_TOOL, write: false, owner: true })
            .allowed,
          true,
        );
        const a = await waitForAlert(enforcer?.url ?? '', (x) => x.Resource === HOST_TOOL);
        assert.equal(a.Type, 'MatchedHostPolicy');
        assert.equal(a.PolicyName, 'host-block-tool');
        assert.equal(a.NamespaceName, '');
        assert.equal(a.HostName, NODE);
        assert.equal(a.HostPID, a.PID, 'host processes: host and namespace pids are the same');
        const fromLogs = readLogs(enforcer?.url ?? '', ['--operation', 'Process']);
        assert.equal(fromLogs.filter((x) => x.Resource === HOST_TOOL).length, 1);
      } finally {
        // Release the host before anything else runs.
        await setPolicies([], (names) => !names.includes('host-block-tool'));
      }
    });
  });

  describe('6. Policy update, deletion and enforcer restart', () => {
    const blockSleep = podPolicy(
      'change-me',
      'ns-a',
      'web',
      'Block',
      '  process:\n    matchPaths:\n    - path: /bin/sleep',
    );
    const blockCat = podPolicy(
      'change-me',
      'ns-a',
      'web',
      'Block',
      '  process:\n    matchPaths:\n    - path: /bin/cat',
    );
    const blockId = podPolicy(
      'block-id',
      'ns-a',
      'web',
      'Block',
      '  process:\n    matchPaths:\n    - path: /bin/id',
    );

    it('an update takes effect without restarting anything', async () => {
      await setPolicies([blockSleep], (names) => names.includes('change-me'));
      assert.equal((await exec('web-1-c', ['/bin/sh', '-c', '/bin/sleep 0'])).code, 126);
      const pid = enforcer?.child.pid;
      await setPolicies([blockCat], (names) => names.includes('change-me'));
      assert.equal(enforcer?.child.pid, pid, 'same enforcer process');
      const sleepRun = await exec('web-1-c', ['/bin/sh', '-c', '/bin/sleep 0; echo rc=$?']);
      assert.equal(sleepRun.stdout.trim(), 'rc=0');
      const cat = await exec('web-1-c', ['/bin/sh', '-c', '/bin/cat /data/hello.txt']);
      assert.equal(cat.code, 126, cat.stderr);
      const d = oracle(workloadOf('web'), {
        operation: 'Process',
        resource: '/bin/sleep',
        parentExecutable: '/bin/sh',
        write: false,
        owner: true,
      });
      assert.equal(d.allowed, true);
    });

    it('a deletion takes effect without restarting anything', async () => {
      await setPolicies([], (names) => !names.includes('change-me'));
      const cat = await exec('web-1-c', ['/bin/sh', '-c', '/bin/cat /data/hello.txt']);
      assert.equal(cat.code, 0, cat.stderr);
      assert.equal(
        oracle(workloadOf('web'), {
          operation: 'Process',
          resource: '/bin/cat',
          parentExecutable: '/bin/sh',
          write: false,
          owner: true,
        }).allowed,
        true,
      );
    });

    it('restarting the TypeScript enforcer during a loop lets the blocked binary through zero times', async () => {
      if (!enforcer || !cd) throw new Error('not started');
      await setPolicies([blockId], (names) => names.includes('block-id'));
      const before = (await fetchAlerts(enforcer.url)).length;
      const loop = exec('web-1-c', [
        '/bin/sh',
        '-c',
        'ok=0; n=0; while [ $n -lt 80 ]; do /bin/id >/dev/null 2>&1 && ok=$((ok+1)); n=$((n+1)); /bin/sleep 0.05; done; echo ran=$n ok=$ok',
      ]);
      await sleep(500);
      await enforcer.kill('SIGKILL');
      await sleep(300);
      enforcer = await startEnforcer([
        '--policy-dir',
        policyDir,
        '--data-plane',
        'fanotify',
        '--node-name',
        NODE,
        '--cluster-name',
        CLUSTER,
        '--containerd-socket',
        cd.socket,
        '--state-dir',
        stateDir,
        '--alert-log',
        join(work, 'alerts.jsonl'),
        '--poll-ms',
        '200',
      ]);
      const r = await loop;
      assert.equal(r.stdout.trim(), 'ran=80 ok=0', r.stderr);
      // Every denial is reported, across the restart: the helper buffered what the old process never read.
      await waitForStatus(enforcer.url, (s) => s.stats.dropped === 0);
      const end = Date.now() + 10000;
      let denied = 0;
      while (Date.now() < end) {
        denied = (await fetchAlerts(enforcer.url)).filter(
          (a) => a.Resource === '/bin/id' && a.Action === 'Block',
        ).length;
        if (denied >= 80) break;
        await sleep(200);
      }
      assert.equal(denied, 80, `alerts for the 80 denials (alerts before: ${before})`);
      const fromLogs = readLogs(enforcer.url, ['-n', 'ns-a', '--pod', 'web-1', '--operation', 'Process']);
      assert.equal(fromLogs.filter((a) => a.Resource === '/bin/id' && a.Action === 'Block').length, 80);
      // The log's mark names the kept helper's numbering (boot id, pid, start time): what lets a restart tell
      // a resent event already written from a new one.
      const mark = JSON.parse(readFileSync(join(work, 'alerts.jsonl.mark'), 'utf8')) as {
        id: string;
        seq: number;
      };
      assert.match(mark.id, /^[0-9a-f-]+:[0-9]+:[0-9]+$/);
      assert.ok(mark.seq > 0);
    });
  });
});
