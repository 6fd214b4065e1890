// System call rules and filelessExec on real containers (containerd + runc, the harness's private containerd)
// with the whole enforcer: `rtctl enforcer run --data-plane fanotify` with the system call plane on
// (RTCTL_SYSCALL_PIN_DIR on a bpffs the test mounts). A container's call a rule names gives an
// `Operation: Syscall` alert that `rtctl logs -n <ns> --json` shows; calls no rule names, calls from another
// executable and the calls of an unselected container give none; the exec of a memfd in the selected container
// is killed before it runs and reported, in the other container it runs.
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { AlertRecord } from '../../../enforcer/alerts/alert-record.js';
import { requirePrereqs } from '../../support/prereq.js';
import { containerdPrereqs, startContainerd, type Containerd } from '../support/containerd.js';
import {
  REPO_ROOT,
  readLogs,
  rtctlArgs,
  startEnforcer,
  stopHelper,
  waitForStatus,
  type EnforcerProcess,
} from '../support/enforcer-process.js';

const HERE = dirname(fileURLToPath(import.meta.url));
const LOADER = join(REPO_ROOT, 'dist/native/syscalls/rtctl-sys-loader');
const NS = 'sys-team';

const POLICIES = [
  [
    'apiVersion: security.runtime.com/v1',
    'kind: RuntimePolicy',
    'metadata:',
    '  name: audit-tmp-unlink',
    `  namespace: ${NS}`,
    'spec:',
    '  severity: 4',
    '  selector:',
    '    matchLabels:',
    '      app: web',
    '  syscalls:',
    '    matchPaths:',
    '    - syscall: [unlink]',
    '      path: /tmp/',
    '      recursive: true',
    '    matchSyscalls:',
    '    - syscall: [mkdir]',
    '      fromSource:',
    '      - path: /bin/mkdir',
    '  action: Audit',
    '',
  ].join('\n'),
  [
    'apiVersion: security.runtime.com/v1',
    'kind: RuntimePolicy',
    'metadata:',
    '  name: block-fileless',
    `  namespace: ${NS}`,
    'spec:',
    '  severity: 8',
    '  selector:',
    '    matchLabels:',
    '      app: web',
    '  presets:',
    '  - name: filelessExec',
    '    action: Block',
    '',
  ].join('\n'),
];

describe('syscalls rules and filelessExec on containers (containerd + runc, whole enforcer, real kernel)', function () {
  this.timeout(240_000);
  let work = '';
  let bpffs = '';
  let stateDir = '';
  let cd: Containerd | undefined;
  let enforcer: EnforcerProcess | undefined;

  before(async function () {
    requirePrereqs(this, [
      ...containerdPrereqs(),
      [existsSync(LOADER), 'the system call plane built (npm run build:native)'],
      [existsSync('/usr/lib/x86_64-linux-gnu/libc.a'), 'static libc (libc6-dev) for the memfd helper'],
    ]);
    work = mkdtempSync(join(tmpdir(), 'rtctl-sysc-'));
    stateDir = join(work, 'state');
    bpffs = join(work, 'bpffs');
    mkdirSync(bpffs);
    execFileSync('mount', ['-t', 'bpf', 'bpf', bpffs]);
    mkdirSync(join(work, 'policies'));
    POLICIES.forEach((text, i) => writeFileSync(join(work, 'policies', `p${i}.yaml`), text));
    const helper = join(work, 'memfd-exec');
    execFileSync('cc', ['-O2', '-static', '-o', helper, join(HERE, '../syscalls/memfd-exec.c')]);
    cd = await startContainerd({ 'bin/memfd-exec': { mode: 0o755, content: readFileSync(helper) } });
    await cd.runContainer({
      id: `sys-web-${process.pid}`,
      pod: 'web',
      namespace: NS,
      container: 'c',
      labels: { app: 'web' },
    });
    await cd.runContainer({
      id: `sys-other-${process.pid}`,
      pod: 'other',
      namespace: NS,
      container: 'c',
      labels: { app: 'other' },
    });
    process.env['RTCTL_SYSCALL_PIN_DIR'] = join(bpffs, 'sys');
    try {
      enforcer = await startEnforcer([
        '--policy-dir',
        join(work, 'policies'),
        '--data-plane',
        'fanotify',
        '--node-name',
        'sys-node',
        '--containerd-socket',
        cd.socket,
        '--state-dir',
        stateDir,
        '--poll-ms',
        '200',
      ]);
    } finally {
      delete process.env['RTCTL_SYSCALL_PIN_DIR'];
    }
    await waitForStatus(
      enforcer.url,
      (s) => s.workloads.some((w) => w.key === `sys-web-${process.pid}`),
      30_000,
    );
  });

  after(async function () {
    this.timeout(60_000);
    await enforcer?.kill('SIGTERM');
    if (stateDir !== '') await stopHelper(join(stateDir, 'fanotify.sock'));
    await cd?.stop();
    // The plane's links are pinned on the test's bpffs: unmounting it detaches them.
    if (bpffs !== '') execFileSync('umount', [bpffs]);
    if (work !== '') rmSync(work, { recursive: true, force: true });
  });

  const web = (): string => `sys-web-${process.pid}`;
  const other = (): string => `sys-other-${process.pid}`;

  /** Alerts of the namespace through `rtctl logs -n <ns> --json`, once `until` holds (10 s). */
  async function logsUntil(until: (alerts: AlertRecord[]) => boolean): Promise<AlertRecord[]> {
    const deadline = Date.now() + 30_000;
    for (;;) {
      const alerts = readLogs(enforcer?.url ?? '', ['-n', NS]);
      if (until(alerts)) return alerts;
      if (Date.now() > deadline) assert.fail(`alerts did not arrive: ${JSON.stringify(alerts, null, 1)}`);
      await new Promise((r) => setTimeout(r, 200));
    }
  }

  it('alerts Operation Syscall for the calls the rules name, and for nothing else', async () => {
    // Calls no rule matches first: outside /tmp/, mkdir by another executable, anything in the other container.
    assert.equal((await cd?.exec(web(), ['/bin/touch', '/data/x']))?.code, 0);
    assert.equal((await cd?.exec(web(), ['/bin/rm', '/data/x']))?.code, 0);
    assert.equal((await cd?.exec(web(), ['/bin/busybox', 'mkdir', '/tmp/by-busybox']))?.code, 0);
    assert.equal((await cd?.exec(other(), ['/bin/touch', '/tmp/o']))?.code, 0);
    assert.equal((await cd?.exec(other(), ['/bin/rm', '/tmp/o']))?.code, 0);
    assert.equal((await cd?.exec(other(), ['/bin/mkdir', '/tmp/od']))?.code, 0);
    // Then the calls the rules name.
    assert.equal((await cd?.exec(web(), ['/bin/touch', '/tmp/a']))?.code, 0);
    assert.equal((await cd?.exec(web(), ['/bin/rm', '/tmp/a']))?.code, 0);
    assert.equal((await cd?.exec(web(), ['/bin/mkdir', '/tmp/d']))?.code, 0);
    const alerts = await logsUntil((a) => a.some((x) => x.Resource === '/tmp/d'));
    const syscalls = alerts.filter((a) => a.Operation === 'Syscall');
    assert.deepEqual(
      syscalls.map((a) => [
        a.ContainerID,
        a.PolicyName,
        a.Resource,
        a.ProcessName,
        a.Data,
        a.Action,
        a.Result,
      ]),
      [
        [
          web(),
          'audit-tmp-unlink',
          '/tmp/a',
          '/bin/rm',
          'syscall=SYS_UNLINK pathname=/tmp/a',
          'Audit',
          'Passed',
        ],
        [
          web(),
          'audit-tmp-unlink',
          '/tmp/d',
          '/bin/mkdir',
          'syscall=SYS_MKDIR pathname=/tmp/d',
          'Audit',
          'Passed',
        ],
      ],
    );
    for (const a of syscalls) {
      assert.equal(a.NamespaceName, NS);
      assert.equal(a.PodName, 'web');
      assert.equal(a.Severity, '4');
      assert.equal(a.Enforcer, 'eBPF Monitor');
      assert.equal(a.Type, 'MatchedPolicy');
      // Pids as the container sees them (its own pid namespace), host pids beside them.
      assert.ok(a.HostPID > 0 && a.PID > 0 && a.PID !== a.HostPID, `${a.PID} ${a.HostPID}`);
    }
  });

  it('kills a memfd exec in the selected container and reports it; the other container runs it', async () => {
    const blocked = await cd?.exec(web(), ['/bin/memfd-exec', '/bin/echo', 'ran']);
    assert.notEqual(blocked?.code, 0, JSON.stringify(blocked));
    assert.doesNotMatch(blocked?.stdout ?? '', /ran/);
    const ran = await cd?.exec(other(), ['/bin/memfd-exec', '/bin/echo', 'ran']);
    assert.equal(ran?.code, 0, JSON.stringify(ran));
    assert.equal(ran?.stdout, 'ran\n');
    const alerts = await logsUntil((a) => a.some((x) => x.PolicyName === 'block-fileless'));
    const fileless = alerts.filter((a) => a.PolicyName === 'block-fileless');
    assert.equal(fileless.length, 1, JSON.stringify(fileless));
    const a = fileless[0] as AlertRecord;
    assert.equal(a.ContainerID, web());
    assert.equal(a.Operation, 'Process');
    assert.equal(a.Action, 'Block');
    assert.equal(a.Severity, '8');
    assert.equal(a.ParentProcessName, '/bin/memfd-exec');
    assert.match(a.Resource, /^\/dev\/fd\/\d+$/);
    assert.match(a.Data, /preset=filelessExec file=memfd:rtctl-fileless nlink=0 killed=SIGKILL/);
  });

  it('rtctl enforcer stop releases the system call plane a stopped enforcer left pinned', async () => {
    const pins = join(bpffs, 'sys');
    await enforcer?.kill('SIGTERM'); // a clean stop keeps enforcing: the programs stay pinned
    assert.ok(existsSync(join(pins, 'prog_rts_sys_enter')));
    assert.ok(existsSync(join(pins, 'link_rts_sys_enter')), 'sys_enter attached: a rule watches calls');
    const r = spawnSync(
      process.execPath,
      rtctlArgs(['enforcer', 'stop', '--data-plane', 'fanotify', '--state-dir', stateDir]),
      {
        cwd: REPO_ROOT,
        encoding: 'utf8',
        timeout: 60_000,
        env: { ...process.env, RTCTL_SYSCALL_PIN_DIR: pins },
      },
    );
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /released the fanotify data plane/);
    assert.equal(existsSync(pins), false, 'every pin removed');
  });
});
