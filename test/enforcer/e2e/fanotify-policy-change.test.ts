// A policy change through `rtctl enforcer run --policy-dir` on the fanotify plane, real containers and the
// real kernel (issue 13, incremental rebuild): a change to the policy of one workload is in force on the
// very next open once the enforcer reports the new generation, while the decisions of another workload,
// whose policy file did not change, stay what they were. Every outcome is also the decision oracle's.
import assert from 'node:assert/strict';
import { closeSync, mkdirSync, mkdtempSync, openSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { decideOperation } from '../../../compiler/decide/decide.js';
import type { Workload } from '../../../compiler/decide/decision-input.js';
import { Operation } from '../../../compiler/ir/rule-set.js';
import { lintTexts } from '../../../compiler/lint.js';
import { NativeArtifact, requireNativeArtifact } from '../../support/native.js';
import { requirePrereqs } from '../../support/prereq.js';
import {
  containerdPrereqs,
  startContainerd,
  type Containerd,
  type TestContainer,
} from '../support/containerd.js';
import {
  startEnforcer,
  stopHelper,
  waitForStatus,
  type EnforcerProcess,
} from '../support/enforcer-process.js';

const FILES = ['/data/hello.txt', '/data/other.txt'];

function blockPolicy(name: string, app: string, path: string): string {
  return `apiVersion: security.runtime.com/v1
kind: RuntimePolicy
metadata:
  name: ${name}
  namespace: ns-a
spec:
  selector:
    matchLabels:
      app: ${app}
  file:
    matchPaths:
    - path: ${path}
  action: Block
`;
}

describe('a policy change on the fanotify plane (rtctl enforcer run, containerd + runc + busybox)', function () {
  this.timeout(180000);
  let cd: Containerd | undefined;
  let enforcer: EnforcerProcess | undefined;
  let work = '';
  let policyDir = '';
  let stateDir = '';
  const containers = new Map<string, TestContainer>();
  const texts = new Map<string, string>();

  /** Opens `path` in the container's mount (through /proc/<pid>/root, the marked mount): allowed or not. */
  function opens(app: string, path: string): boolean {
    const c = containers.get(app);
    if (c === undefined) throw new Error(`no container ${app}`);
    try {
      closeSync(openSync(`/proc/${c.pid}/root${path}`, 'r'));
      return true;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'EPERM') return false;
      throw err;
    }
  }

  function oracle(app: string, path: string): boolean {
    const lint = lintTexts([...texts].map(([file, text]) => ({ file, text })));
    const workload: Workload = { kind: 'container', namespace: 'ns-a', labels: { app }, nodeLabels: {} };
    return decideOperation(
      lint.ruleSet,
      workload,
      { operation: Operation.File, resource: path, write: false, owner: true },
      {},
    ).allowed;
  }

  /** Every app × file decision, opened twice (the second open may meet the decision cache or an ignore mark). */
  function decisions(): Record<string, boolean> {
    const out: Record<string, boolean> = {};
    for (const app of containers.keys())
      for (const f of FILES) {
        const first = opens(app, f);
        assert.equal(opens(app, f), first, `${app} ${f}: the same answer twice`);
        assert.equal(first, oracle(app, f), `${app} ${f}: the oracle's answer`);
        out[`${app} ${f}`] = first;
      }
    return out;
  }

  async function writePolicy(file: string, text: string): Promise<void> {
    const url = enforcer?.url ?? '';
    const before = (await waitForStatus(url, () => true)).generation;
    texts.set(file, text);
    writeFileSync(join(policyDir, file), text);
    await waitForStatus(url, (s) => s.generation > before);
  }

  before(async function () {
    this.timeout(180000);
    requirePrereqs(this, containerdPrereqs());
    requireNativeArtifact(this, NativeArtifact.fanotifyHelper);
    work = mkdtempSync(join(tmpdir(), 'rtctl-change-'));
    policyDir = join(work, 'policies');
    stateDir = join(work, 'state');
    mkdirSync(policyDir);
    mkdirSync(stateDir);
    texts.set('web.yaml', blockPolicy('web-files', 'web', '/data/other.txt'));
    texts.set('db.yaml', blockPolicy('db-files', 'db', '/data/hello.txt'));
    for (const [file, text] of texts) writeFileSync(join(policyDir, file), text);
    cd = await startContainerd({ '/data/other.txt': { mode: 0o644, content: 'other\n' } });
    for (const app of ['web', 'db'])
      containers.set(
        app,
        await cd.runContainer({
          id: `${app}-change-c`,
          pod: `${app}-1`,
          namespace: 'ns-a',
          container: app,
          labels: { app },
        }),
      );
    enforcer = await startEnforcer([
      '--policy-dir',
      policyDir,
      '--data-plane',
      'fanotify',
      '--node-name',
      'change-node',
      '--containerd-socket',
      cd.socket,
      '--state-dir',
      stateDir,
      '--poll-ms',
      '200',
    ]);
    await waitForStatus(enforcer.url, (s) => s.workloads.length === 2);
  });

  after(async function () {
    this.timeout(60000);
    await enforcer?.kill('SIGTERM');
    if (stateDir) await stopHelper(join(stateDir, 'fanotify.sock'));
    await cd?.stop();
    if (work) rmSync(work, { recursive: true, force: true });
  });

  it('enforces a change to one workload from the next open and leaves the other workload as it was', async () => {
    const before = decisions();
    assert.deepEqual(before, {
      'web /data/hello.txt': true,
      'web /data/other.txt': false,
      'db /data/hello.txt': false,
      'db /data/other.txt': true,
    });
    // web's policy now blocks hello.txt instead of other.txt; db's file is untouched.
    await writePolicy('web.yaml', blockPolicy('web-files', 'web', '/data/hello.txt'));
    assert.equal(opens('web', '/data/hello.txt'), false, 'the next open after the new generation is denied');
    assert.equal(opens('web', '/data/other.txt'), true, 'and the file no longer blocked opens');
    const after = decisions();
    assert.equal(after['db /data/hello.txt'], before['db /data/hello.txt']);
    assert.equal(after['db /data/other.txt'], before['db /data/other.txt']);
    // Back again: the change undone is in force from the next open too.
    await writePolicy('web.yaml', blockPolicy('web-files', 'web', '/data/other.txt'));
    assert.equal(opens('web', '/data/hello.txt'), true);
    assert.deepEqual(decisions(), before);
  });
});
