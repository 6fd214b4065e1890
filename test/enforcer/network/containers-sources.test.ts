// A network rule with fromSource end to end on real containers with the whole enforcer: `rtctl enforcer run
// --data-plane fanotify` with the cgroup network plane on (RTCTL_NETWORK_PIN_DIR on a bpffs this test mounts), a
// containerd + runc container in its own network namespace (only `lo`: nothing leaves it). The image holds busybox
// twice: /bin/busybox and a copy at /opt/tools/busybox. A Block matchAddresses rule with `fromSource:
// [{path: /opt/tools/busybox}]` denies `nc` run from the copy (EPERM, an alert with that container path as
// ProcessName in `rtctl logs -n team-s --json`) and leaves the same nc from /bin/busybox alone (it gets past the
// hook: "Network is unreachable", no alert).
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { findCgroup2Mount } from '../../../enforcer/network/network-plane.js';
import { requirePrereqs } from '../../support/prereq.js';
import { containerdPrereqs, startContainerd, type Containerd } from '../support/containerd.js';
import {
  readLogs,
  startEnforcer,
  stopHelper,
  waitForAlert,
  waitForStatus,
  type EnforcerProcess,
} from '../support/enforcer-process.js';

const ROOT = resolve(fileURLToPath(import.meta.url), '../../../..');
const LOADER = join(ROOT, 'dist/native/network/rtctl-net-loader');
const TARGET = '192.0.2.10';

const POLICY = `apiVersion: security.runtime.com/v1
kind: RuntimePolicy
metadata:
  name: no-egress-from-tools
  namespace: team-s
spec:
  selector:
    matchLabels: {app: web}
  network:
    matchAddresses:
      - cidr: 192.0.2.0/24
        fromSource:
          - path: /opt/tools/busybox
  severity: 7
  action: Block
`;

describe('fromSource on a network rule on real containers through the enforcer (cgroup network plane, rtctl logs)', function () {
  this.timeout(240_000);
  let cd: Containerd | undefined;
  let enforcer: EnforcerProcess | undefined;
  let work = '';
  let bpffs = '';
  const saved: Record<string, string | undefined> = {};
  const url = (): string => enforcer?.url ?? '';

  before(async function () {
    let cgroup2 = '';
    try {
      cgroup2 = findCgroup2Mount();
    } catch {
      // reported below
    }
    requirePrereqs(this, [
      ...containerdPrereqs(),
      [cgroup2 !== '', 'a cgroup v2 mount'],
      [existsSync(LOADER), 'the network plane built (npm run build:native)'],
    ]);
    work = mkdtempSync(join(tmpdir(), 'rtctl-netsrcc-'));
    bpffs = join(work, 'bpffs');
    mkdirSync(bpffs);
    execFileSync('mount', ['-t', 'bpf', 'bpf', bpffs]);
    cd = await startContainerd({
      'opt/tools/busybox': { mode: 0o755, content: readFileSync('/bin/busybox') },
    });
    await cd.runContainer({
      id: 'src-web-c',
      pod: 'src-web',
      namespace: 'team-s',
      container: 'web',
      labels: { app: 'web' },
    });
    const policies = join(work, 'policies');
    mkdirSync(policies);
    writeFileSync(join(policies, 'no-egress-from-tools.yaml'), POLICY);
    for (const k of ['RTCTL_NETWORK_PIN_DIR', 'RTCTL_NETWORK_HOST_CGROUP', 'RTCTL_NETWORK_CGROUP_ROOT'])
      saved[k] = process.env[k];
    process.env['RTCTL_NETWORK_PIN_DIR'] = join(bpffs, 'net');
    delete process.env['RTCTL_NETWORK_HOST_CGROUP'];
    delete process.env['RTCTL_NETWORK_CGROUP_ROOT'];
    mkdirSync(join(work, 'state'));
    enforcer = await startEnforcer([
      '--policy-dir',
      policies,
      '--data-plane',
      'fanotify',
      '--containerd-socket',
      cd.socket,
      '--state-dir',
      join(work, 'state'),
      '--alert-log',
      join(work, 'alerts.jsonl'),
      '--poll-ms',
      '200',
    ]);
    const status = await waitForStatus(
      url(),
      (s) => s.workloads.filter((w) => w.policies.includes('no-egress-from-tools')).length === 1,
      60_000,
    );
    // The rule's fromSource is enforced on this node (the kernel lets the cgroup programs see the process).
    const p = status.enforcement.find((e) => e.name === 'no-egress-from-tools');
    assert.equal(p?.level, 'enforced', JSON.stringify(p));
  });

  after(async function () {
    this.timeout(60_000);
    await enforcer?.kill('SIGTERM');
    for (const [k, v] of Object.entries(saved)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
    if (work !== '') await stopHelper(join(work, 'state', 'fanotify.sock'));
    await cd?.stop();
    if (bpffs !== '') spawnSync('umount', [bpffs]);
    if (work !== '') rmSync(work, { recursive: true, force: true });
  });

  it('nc from /opt/tools/busybox fails with EPERM and is reported with that ProcessName; nc from /bin/busybox gets past the hook', async () => {
    const denied = await cd?.exec('src-web-c', ['/opt/tools/busybox', 'nc', '-w', '2', TARGET, '80']);
    assert.notEqual(denied?.code, 0);
    assert.match(
      `${denied?.stderr ?? ''}${denied?.stdout ?? ''}`,
      /Operation not permitted/,
      JSON.stringify(denied),
    );
    const allowed = await cd?.exec('src-web-c', ['/bin/busybox', 'nc', '-w', '2', TARGET, '80']);
    assert.notEqual(allowed?.code, 0);
    const text = `${allowed?.stderr ?? ''}${allowed?.stdout ?? ''}`;
    assert.doesNotMatch(text, /Operation not permitted/);
    assert.match(text, /unreachable/i, JSON.stringify(allowed));
    await waitForAlert(url(), (a) => a.PodName === 'src-web' && a.Operation === 'Network');
    const network = readLogs(url(), ['-n', 'team-s']).filter((a) => a.Operation === 'Network');
    assert.equal(network.length, 1, JSON.stringify(network));
    const a = network[0];
    assert.equal(a?.PolicyName, 'no-egress-from-tools');
    assert.equal(a?.Action, 'Block');
    assert.equal(a?.Enforcer, 'CgroupBPF');
    assert.equal(a?.Resource, `${TARGET}:80`);
    assert.equal(a?.ProcessName, '/opt/tools/busybox', 'the container path of the executable');
    assert.equal(a?.Severity, '7');
    assert.match(a?.Data ?? '', /^syscall=SYS_CONNECT /);
  });
});
