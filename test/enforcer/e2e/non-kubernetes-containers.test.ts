// Containers without Kubernetes (plain containerd, as `ctr run` or nerdctl create them: no io.kubernetes.*
// labels, containerd namespace `default`) on the real kernel with the fanotify data plane: RuntimePolicies
// select them by their own labels, in the configured non-Kubernetes namespace or the one their
// `security.runtime.com/namespace` label names, and `rtctl logs` shows their container name and image.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { decideOperation } from '../../../compiler/decide/decide.js';
import { lintTexts } from '../../../compiler/lint.js';
import { requirePrereqs } from '../../support/prereq.js';
import { BUSYBOX_IMAGE, containerdPrereqs, startContainerd, type Containerd } from '../support/containerd.js';
import {
  REPO_ROOT,
  readLogs,
  rtctlArgs,
  startEnforcer,
  stopHelper,
  waitForAlert,
  waitForStatus,
  type EnforcerProcess,
} from '../support/enforcer-process.js';

const POLICIES = [
  // No metadata.namespace: the policy's namespace is `default`, the non-Kubernetes default here.
  [
    'apiVersion: security.runtime.com/v1',
    'kind: RuntimePolicy',
    'metadata:',
    '  name: plain-block-cat',
    'spec:',
    '  selector:',
    '    matchLabels:',
    '      app: plain',
    '  process:',
    '    matchPaths:',
    '    - path: /bin/cat',
    '  action: Block',
    '',
  ].join('\n'),
  [
    'apiVersion: security.runtime.com/v1',
    'kind: RuntimePolicy',
    'metadata:',
    '  name: team-audit-hello',
    '  namespace: team-a',
    'spec:',
    '  selector:',
    '    matchLabels:',
    '      app: plain',
    '  file:',
    '    matchPaths:',
    '    - path: /data/hello.txt',
    '  action: Audit',
    '',
  ].join('\n'),
];

describe('containers without Kubernetes labels (containerd + runc, fanotify, real kernel)', function () {
  this.timeout(180000);
  let work = '';
  let stateDir = '';
  let cd: Containerd | undefined;
  let enforcer: EnforcerProcess | undefined;

  before(async function () {
    requirePrereqs(this, containerdPrereqs());
    work = mkdtempSync(join(tmpdir(), 'rtctl-plain-'));
    stateDir = join(work, 'state');
    mkdirSync(join(work, 'policies'));
    POLICIES.forEach((text, i) => writeFileSync(join(work, 'policies', `p${i}.yaml`), text));
    cd = await startContainerd();
    await cd.runPlainContainer({ id: 'plain-web', labels: { app: 'plain', 'nerdctl/name': 'web-frontend' } });
    await cd.runPlainContainer({
      id: 'plain-team',
      labels: { app: 'plain', 'security.runtime.com/namespace': 'team-a' },
    });
    await cd.runPlainContainer({ id: 'plain-other', labels: { app: 'other' } });
    await cd.runPlainContainer({
      id: 'plain-badns',
      labels: { app: 'plain', 'security.runtime.com/namespace': 'Not_A_Namespace' },
    });
    enforcer = await startEnforcer([
      '--policy-dir',
      join(work, 'policies'),
      '--data-plane',
      'fanotify',
      '--node-name',
      'plain-node',
      '--containerd-socket',
      cd.socket,
      '--containerd-namespace',
      'k8s.io,default',
      '--state-dir',
      stateDir,
      '--poll-ms',
      '200',
    ]);
    await waitForStatus(
      enforcer.url,
      (s) => ['plain-web', 'plain-team'].every((k) => s.workloads.some((w) => w.key === k)),
      30000,
    );
  });

  after(async function () {
    this.timeout(60000);
    await enforcer?.kill('SIGTERM');
    if (stateDir !== '') await stopHelper(join(stateDir, 'fanotify.sock'));
    await cd?.stop();
    if (work !== '') rmSync(work, { recursive: true, force: true });
  });

  it('enforces the policy of the default namespace on a container selected by its own labels', async () => {
    const status = await waitForStatus(enforcer?.url ?? '', () => true);
    const web = status.workloads.find((w) => w.key === 'plain-web');
    assert.deepEqual(
      { namespace: web?.namespace, pod: web?.pod, container: web?.container, policies: web?.policies },
      { namespace: 'default', pod: '', container: 'web-frontend', policies: ['plain-block-cat'] },
    );
    const oracle = decideOperation(
      lintTexts(POLICIES.map((text, i) => ({ file: `p${i}.yaml`, text }))).ruleSet,
      { kind: 'container', namespace: 'default', labels: { app: 'plain' }, nodeLabels: {} },
      { operation: 'Process', resource: '/bin/cat', parentExecutable: '/bin/sh', write: false, owner: false },
    );
    assert.equal(oracle.allowed, false, 'the oracle denies it too');
    const r = await cd?.exec('plain-web', ['/bin/cat', '/data/hello.txt']);
    assert.notEqual(r?.code, 0, `cat ran: ${JSON.stringify(r)}`);
    assert.match(r?.stderr ?? '', /not permitted|denied/i);
    const alert = await waitForAlert(
      enforcer?.url ?? '',
      (a) => a.ContainerID === 'plain-web' && a.PolicyName === 'plain-block-cat',
    );
    assert.equal(alert.Action, 'Block');
    assert.equal(alert.NamespaceName, 'default');
    assert.equal(alert.ContainerName, 'web-frontend');
    assert.equal(alert.PodName, '');
    assert.match(
      alert.ContainerImage,
      new RegExp(`^${BUSYBOX_IMAGE.replace(/\./g, '\\.')}@sha256:[0-9a-f]{64}$`),
    );
    assert.match(alert.Labels, /(^|,)app=plain(,|$)/);
    assert.ok(!/io\.kubernetes/.test(alert.Labels));
  });

  it('puts a container in the namespace its security.runtime.com/namespace label names', async () => {
    const blocked = await cd?.exec('plain-team', ['/bin/cat', '/data/hello.txt']);
    assert.equal(blocked?.code, 0, 'the default-namespace Block policy does not select it');
    assert.equal(blocked?.stdout, 'hello from the image\n');
    const alert = await waitForAlert(
      enforcer?.url ?? '',
      (a) => a.ContainerID === 'plain-team' && a.PolicyName === 'team-audit-hello',
    );
    assert.equal(alert.Action, 'Audit');
    assert.equal(alert.NamespaceName, 'team-a');
    assert.equal(alert.ContainerName, 'plain-team', 'no name label: the container id');
  });

  it('leaves unselected containers alone and warns about a namespace label that is no namespace name', async () => {
    const other = await cd?.exec('plain-other', ['/bin/cat', '/data/hello.txt']);
    assert.equal(other?.code, 0);
    const bad = await cd?.exec('plain-badns', ['/bin/cat', '/data/hello.txt']);
    assert.equal(bad?.code, 0, 'an invalid namespace label selects no policy');
    assert.match(enforcer?.stderr() ?? '', /namespace label is not a namespace name/);
    const status = await waitForStatus(enforcer?.url ?? '', () => true);
    assert.ok(!status.workloads.some((w) => w.key === 'plain-other' || w.key === 'plain-badns'));
  });

  it('`rtctl logs` shows them with their container name and image, filtered by namespace and container', () => {
    const url = enforcer?.url ?? '';
    const json = readLogs(url, ['-n', 'default', '--container', 'web-frontend']);
    assert.ok(json.length > 0 && json.every((a) => a.ContainerName === 'web-frontend'));
    const text = spawnSync(
      process.execPath,
      rtctlArgs(['logs', '--no-follow', '--server', url, '--container', 'web-frontend']),
      { cwd: REPO_ROOT, encoding: 'utf8', timeout: 30000 },
    );
    assert.equal(text.status, 0, text.stderr);
    assert.match(text.stdout, /^NamespaceName: default$/m);
    assert.match(text.stdout, /^ContainerName: web-frontend$/m);
    assert.match(text.stdout, /^ContainerID: plain-web$/m);
    assert.match(text.stdout, /^ContainerImage: rtctl\.test\/busybox:1@sha256:[0-9a-f]{64}$/m);
    assert.doesNotMatch(text.stdout, /^PodName:/m);
  });
});
