// Inode ignore marks of the fanotify plane on a real container and the real kernel: after an "allow without
// alert" that no actor, mode or owner could change, the kernel stops asking for that file (the helper's
// decision counter does not move over a loop of opens), and a policy change after the mark takes effect on
// the very next open or exec (Block denies, Audit reports). A mark is on the inode, not the name: a file the
// workload could rename or hard-link (a writable mount) to a name the rules decide differently is never
// marked, and such a rename or link is denied at the next open; a file with several names (busybox applets
// are hard links) is never marked. Every outcome is also checked against the decision oracle.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { chmodSync, linkSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { decideOperation } from '../../../compiler/decide/decide.js';
import type { OperationRequest, Workload } from '../../../compiler/decide/decision-input.js';
import { Operation } from '../../../compiler/ir/rule-set.js';
import { lintTexts } from '../../../compiler/lint.js';
import type { DataPlane, DataPlaneStats } from '../../../enforcer/data-plane.js';
import { createFanotifyPlane } from '../../../enforcer/fanotify/fanotify-plane.js';
import { NativeArtifact, requireNativeArtifact } from '../../support/native.js';
import { REPO_ROOT } from '../../support/paths.js';
import { hasCommand, requirePrereqs } from '../../support/prereq.js';
import {
  containerdPrereqs,
  startContainerd,
  type Containerd,
  type TestContainer,
} from '../support/containerd.js';
import { stopHelper } from '../support/enforcer-process.js';
import { applyPolicies } from '../support/apply-policies.js';

/** In the image (the container's writable root file system). */
const TOOL = '/usr/local/bin/ignore-tool';
/** On a read-only bind mount: the workload can neither rename nor link what is there. */
const RO = '/ro';
const RO_HELLO = `${RO}/hello.txt`;
const RO_TOOL = `${RO}/ignore-tool`;
const LOOPS = 40;

function policy(name: string, section: string, action: string): string {
  return [
    'apiVersion: security.runtime.com/v1',
    'kind: RuntimePolicy',
    'metadata:',
    `  name: ${name}`,
    '  namespace: ns-a',
    'spec:',
    '  selector:',
    '    matchLabels:',
    '      app: web',
    section,
    `  action: ${action}`,
    '',
  ].join('\n');
}

/** File and Process rules selecting the container that match neither /data/hello.txt nor the tool. */
const UNRELATED = policy(
  'unrelated',
  '  file:\n    matchDirectories:\n    - dir: /srv/other/\n      recursive: true\n  process:\n    matchPaths:\n    - path: /opt/other/bin/x',
  'Block',
);
const BLOCK_HELLO = policy('block-hello', `  file:\n    matchPaths:\n    - path: ${RO_HELLO}`, 'Block');
const AUDIT_RO = policy('audit-ro', `  file:\n    matchDirectories:\n    - dir: ${RO}/`, 'Audit');
const BLOCK_TOOL = policy('block-tool', `  process:\n    matchPaths:\n    - path: ${RO_TOOL}`, 'Block');
/** Names a copy of /data/hello.txt can be given by a rename or a hard link in the writable root. */
const BLOCK_MOVED = policy(
  'block-moved',
  '  file:\n    matchPaths:\n    - path: /data/moved.txt\n    - path: /data/linked.txt',
  'Block',
);
/** Selects the container with network rules only: no Process or File rule, so an exec's answer is the same
 * whatever the program's name. */
const NETWORK_ONLY = policy('network-only', '  network:\n    matchProtocols:\n    - protocol: raw', 'Block');

type ImageFiles = Parameters<typeof startContainerd>[0];

/** One real container under the fanotify plane, shared by the suites below: containerd + runc + busybox with
 * `/ro` a read-only bind mount of a host folder, and the helper deciding for it. */
interface ContainerFixture {
  /** Applies these policies (and only these) to the container as the next generation. */
  apply: (...policyTexts: string[]) => Promise<void>;
  /** The decision oracle's answer for the policies last applied. */
  oracle: (op: OperationRequest) => { allowed: boolean; action: string | null };
  sh: (script: string) => Promise<{ code: number; stdout: string; stderr: string }>;
  stats: () => Promise<DataPlaneStats>;
  /** Decisions the helper took for `n` iterations of `body`, less those of the same script with none. */
  decisionsFor: (body: string, n: number) => Promise<number>;
}

/**
 * Registers the suite's `before` and `after` hooks: a private containerd, one container (labels `app: web` in
 * `ns-a`) and the plane. `prepare` fills the host folder mounted at `/ro` and returns the files added to the
 * image; `ready` runs once the plane is up.
 */
function containerFixture(spec: {
  name: string;
  timeoutMs: number;
  prereqs?: [boolean, string][];
  prepare(work: string, ro: string): ImageFiles;
  ready?(f: ContainerFixture): Promise<void>;
}): ContainerFixture {
  let cd: Containerd | undefined;
  let container: TestContainer | undefined;
  let plane: DataPlane | undefined;
  let work = '';
  let socket = '';
  let generation = 0;
  let texts: string[] = [];
  const workload: Workload = { kind: 'container', namespace: 'ns-a', labels: { app: 'web' }, nodeLabels: {} };

  const f: ContainerFixture = {
    apply: async (...policyTexts) => {
      if (!plane || !container) throw new Error('not started');
      texts = policyTexts;
      await applyPolicies(
        plane,
        policyTexts.map((text, i) => ({ file: `p${i}.yaml`, text })),
        container,
        ++generation,
      );
    },
    oracle: (op) => {
      const lint = lintTexts(texts.map((text, i) => ({ file: `p${i}.yaml`, text })));
      const d = decideOperation(lint.ruleSet, workload, op, {});
      return { allowed: d.allowed, action: d.alert?.Action ?? null };
    },
    sh: async (script) => {
      if (!cd || !container) throw new Error('not started');
      return cd.exec(container.id, ['/bin/sh', '-c', script]);
    },
    stats: async () => {
      if (!plane) throw new Error('not started');
      return plane.stats();
    },
    decisionsFor: async (body, n) => {
      const loop = (count: number): string => `i=0; while [ $i -lt ${count} ]; do ${body}; i=$((i+1)); done`;
      const a = await f.stats();
      assert.equal((await f.sh(loop(0))).code, 0);
      const b = await f.stats();
      const r = await f.sh(loop(n));
      assert.equal(r.code, 0, r.stderr);
      const c = await f.stats();
      return c.decisions - b.decisions - (b.decisions - a.decisions);
    },
  };

  before(async function () {
    this.timeout(spec.timeoutMs);
    requirePrereqs(this, [...containerdPrereqs(), ...(spec.prereqs ?? [])]);
    const helperPath = requireNativeArtifact(this, NativeArtifact.fanotifyHelper);
    work = mkdtempSync(join(tmpdir(), `rtctl-${spec.name}-`));
    socket = join(work, 'fan.sock');
    const ro = join(work, 'ro');
    mkdirSync(ro);
    chmodSync(work, 0o755);
    cd = await startContainerd(spec.prepare(work, ro));
    container = await cd.runContainer({
      id: `${spec.name}-c`,
      pod: `${spec.name}-pod`,
      namespace: 'ns-a',
      container: 'web',
      labels: { app: 'web' },
      mounts: [{ source: ro, destination: RO }],
    });
    plane = createFanotifyPlane({
      helperPath,
      socketPath: socket,
      helperLogPath: join(work, 'helper.log'),
      logger: pino({ level: 'silent' }),
    });
    await plane.start();
    await spec.ready?.(f);
  });

  after(async function () {
    this.timeout(60000);
    await plane?.stop({ keepEnforcing: false });
    if (socket) await stopHelper(socket);
    await cd?.stop();
    if (work) rmSync(work, { recursive: true, force: true });
  });

  return f;
}

describe('fanotify inode ignore marks on a real container (containerd + runc + busybox)', function () {
  this.timeout(120000);
  const { apply, oracle, sh, stats, decisionsFor } = containerFixture({
    name: 'ignore',
    timeoutMs: 120000,
    prepare: (_work, ro) => {
      writeFileSync(join(ro, 'hello.txt'), 'hello from a read-only mount\n');
      writeFileSync(join(ro, 'ignore-tool'), '#!/bin/sh\necho tool-ran\n', { mode: 0o755 });
      return { [TOOL]: { mode: 0o755, content: '#!/bin/sh\necho tool-ran\n' } };
    },
  });

  it('after an allow without alert on a read-only mount, the kernel stops asking for the file (no decision over a loop of opens)', async () => {
    await apply(UNRELATED);
    const op: OperationRequest = {
      operation: Operation.File,
      resource: RO_HELLO,
      write: false,
      owner: true,
    };
    assert.deepEqual(oracle(op), { allowed: true, action: null });
    const before = await stats();
    const first = await sh(`cat ${RO_HELLO}`);
    assert.equal(first.stdout, 'hello from a read-only mount\n');
    const after = await stats();
    assert.ok(
      (after?.ignoreMarks ?? 0) > (before?.ignoreMarks ?? 0),
      `an ignore mark was set (${JSON.stringify(after)})`,
    );
    const asked = await decisionsFor(`: < ${RO_HELLO}`, LOOPS);
    assert.ok(asked < 3, `the kernel asked ${asked} times for ${LOOPS} opens of a marked file`);
  });

  it('a Block after the mark denies the very next open (the state flushes every mark)', async () => {
    await apply(UNRELATED);
    const s0 = await stats();
    assert.equal((await sh(`cat ${RO_HELLO}`)).code, 0);
    const s1 = await stats();
    assert.ok((s1?.ignoreMarks ?? 0) > (s0?.ignoreMarks ?? 0), 'the file was marked');
    await apply(UNRELATED, BLOCK_HELLO);
    const op: OperationRequest = {
      operation: Operation.File,
      resource: RO_HELLO,
      write: false,
      owner: true,
    };
    assert.deepEqual(oracle(op), { allowed: false, action: 'Block' });
    const r = await sh(`cat ${RO_HELLO}`);
    assert.notEqual(r.code, 0, 'the open is denied');
    assert.match(r.stderr, /Operation not permitted/);
    // And back: allowed again, on the next open.
    await apply(UNRELATED);
    assert.equal((await sh(`cat ${RO_HELLO}`)).code, 0);
  });

  it('an Audit after the mark reports the very next open, and the file is not marked while audited', async () => {
    await apply(UNRELATED);
    assert.equal((await sh(`cat ${RO_HELLO}`)).code, 0);
    await apply(UNRELATED, AUDIT_RO);
    const op: OperationRequest = {
      operation: Operation.File,
      resource: RO_HELLO,
      write: false,
      owner: true,
    };
    assert.deepEqual(oracle(op), { allowed: true, action: 'Audit' });
    const s0 = await stats();
    assert.equal((await sh(`cat ${RO_HELLO}`)).code, 0);
    const s1 = await stats();
    assert.ok((s1?.reported ?? 0) > (s0?.reported ?? 0), 'the open was reported');
    const asked = await decisionsFor(`: < ${RO_HELLO}`, LOOPS);
    assert.ok(asked >= LOOPS, `every audited open is asked (${asked} of ${LOOPS})`);
  });

  it('exec: a script marked after an allow is denied on the next exec once a Block names it', async () => {
    await apply(UNRELATED);
    assert.equal((await sh(RO_TOOL)).stdout, 'tool-ran\n');
    // Each run still execs the interpreter, /bin/sh (a hard link of busybox, never marked): the same runs of
    // `/bin/sh -c :` are subtracted. What is left is the script's exec and its read by the interpreter.
    const asked =
      (await decisionsFor(`${RO_TOOL} >/dev/null`, LOOPS)) - (await decisionsFor('/bin/sh -c :', LOOPS));
    assert.ok(asked < 3, `the script is no longer asked for (${asked} decisions over ${LOOPS} runs)`);
    await apply(UNRELATED, BLOCK_TOOL);
    const op: OperationRequest = {
      operation: Operation.Process,
      resource: RO_TOOL,
      write: false,
      owner: true,
    };
    assert.deepEqual(oracle(op), { allowed: false, action: 'Block' });
    const r = await sh(`${RO_TOOL}; echo "exit=$?"`);
    assert.doesNotMatch(r.stdout, /tool-ran/);
    assert.match(r.stdout, /exit=126/);
  });

  it('a file on a writable mount is not marked while its class has rules: a rename or hard link to a blocked name is denied at the next open', async () => {
    await apply(UNRELATED, BLOCK_MOVED);
    const file = (resource: string): OperationRequest => ({
      operation: Operation.File,
      resource,
      write: false,
      owner: true,
    });
    assert.deepEqual(oracle(file('/data/copy.txt')), { allowed: true, action: null });
    assert.deepEqual(oracle(file('/data/moved.txt')), { allowed: false, action: 'Block' });
    assert.deepEqual(oracle(file('/data/linked.txt')), { allowed: false, action: 'Block' });
    assert.equal(
      (await sh('cp /data/hello.txt /data/copy.txt && cp /data/hello.txt /data/copy2.txt')).code,
      0,
    );
    const s0 = await stats();
    assert.equal((await sh('cat /data/copy.txt /data/copy2.txt')).code, 0);
    const s1 = await stats();
    assert.equal(s1?.ignoreMarks, s0?.ignoreMarks, 'no mark on a file the workload can rename');
    assert.ok((s1?.ignoreRenamable ?? 0) > (s0?.ignoreRenamable ?? 0), `counted (${JSON.stringify(s1)})`);
    // Denied and reported by the helper (the shell's message is not relied on: `ctr tasks exec` has been seen
    // to lose a quickly exiting process's stderr).
    for (const [what, script] of [
      ['renamed', 'mv /data/copy.txt /data/moved.txt && cat /data/moved.txt'],
      ['linked', 'ln /data/copy2.txt /data/linked.txt && cat /data/linked.txt'],
    ] as const) {
      const before = await stats();
      const r = await sh(script);
      const after = await stats();
      assert.notEqual(r.code, 0, `the ${what} file is denied: ${JSON.stringify(r)}`);
      assert.doesNotMatch(r.stdout, /hello/);
      assert.equal(
        (after?.reported ?? 0) - (before?.reported ?? 0),
        1,
        `one Block reported for the ${what} file`,
      );
    }
    // The read-only mount is why its files may be marked: the workload cannot rename them.
    const rename = await sh(`mv ${RO_HELLO} ${RO}/moved.txt`);
    assert.notEqual(rename.code, 0);
    assert.match(rename.stderr, /Read-only file system/);
    await sh('rm -f /data/moved.txt /data/linked.txt /data/copy2.txt');
  });

  it('where no rule of the class can match any name, a file on a writable mount is marked (network rules only: exec)', async () => {
    await apply(NETWORK_ONLY);
    assert.deepEqual(oracle({ operation: Operation.Process, resource: TOOL, write: false, owner: true }), {
      allowed: true,
      action: null,
    });
    const s0 = await stats();
    assert.equal((await sh(TOOL)).stdout, 'tool-ran\n');
    const s1 = await stats();
    assert.ok((s1?.ignoreMarks ?? 0) > (s0?.ignoreMarks ?? 0), `the tool was marked (${JSON.stringify(s1)})`);
    const asked =
      (await decisionsFor(`${TOOL} >/dev/null`, LOOPS)) - (await decisionsFor('/bin/sh -c :', LOOPS));
    assert.ok(asked < 3, `the tool is no longer asked for (${asked} decisions over ${LOOPS} runs)`);
  });

  it('a file with several names (busybox applets are hard links) gets no inode mark: its directory is marked instead', async () => {
    await apply(UNRELATED);
    const s0 = await stats();
    assert.equal((await sh('/bin/true')).code, 0);
    const asked = await decisionsFor('/bin/true', LOOPS);
    const s1 = await stats();
    assert.equal(s1?.ignoreMarks, s0?.ignoreMarks, `no inode mark on /bin/true (${JSON.stringify(s1)})`);
    assert.ok(
      (s1?.dirIgnoreMarks ?? 0) > (s0?.dirIgnoreMarks ?? 0),
      `/bin/ was marked (${JSON.stringify(s1)})`,
    );
    assert.ok(asked < 3, `the exec of /bin/true is no longer asked for (${asked} of ${LOOPS})`);
  });
});

/** Blocks everything below /secret/ and one path; a Process rule elsewhere: /data/, /bin/ and the lower
 * directories of the image have every child name allowed without alert. */
const SECRET = policy(
  'secret',
  '  file:\n    matchDirectories:\n    - dir: /secret/\n      recursive: true\n    matchPaths:\n    - path: /etc/blocked.txt\n  process:\n    matchPaths:\n    - path: /opt/other/bin/x',
  'Block',
);
const BLOCK_DATA_HELLO = policy(
  'block-data-hello',
  '  file:\n    matchPaths:\n    - path: /data/hello.txt',
  'Block',
);
const BLOCK_TRUE = policy('block-true', '  process:\n    matchPaths:\n    - path: /bin/true', 'Block');
/** In the image: one rename(2) without a copy fallback (busybox mv copies on EXDEV). */
const RENAME = '/usr/local/bin/rename-probe';

describe('fanotify directory ignore marks on a real container (overlay root: containerd + runc + busybox)', function () {
  this.timeout(180000);
  const {
    apply,
    sh,
    stats,
    decisionsFor,
    oracle: decide,
  } = containerFixture({
    name: 'dirmarks',
    timeoutMs: 180000,
    prereqs: [[hasCommand('cc'), 'cc (gcc)']],
    prepare: (work, ro) => {
      const probe = join(work, 'rename-probe');
      execFileSync('cc', [
        '-static',
        '-O2',
        '-Wall',
        '-o',
        probe,
        join(REPO_ROOT, 'test/enforcer/e2e/rename-probe.c'),
      ]);
      // A read-only mount holding one file under two names (a hard link): never an inode mark.
      writeFileSync(join(ro, 'one.txt'), 'one file, two names\n');
      linkSync(join(ro, 'one.txt'), join(ro, 'two.txt'));
      return {
        [RENAME]: { mode: 0o755, content: readFileSync(probe) },
        // Directories of the image's (lower) layer, each for one test that changes it.
        '/moved/f.txt': 'in a lower directory\n',
        '/remade/f.txt': 'in a lower directory\n',
      };
    },
    ready: async (f) => {
      assert.equal((await f.sh('mkdir -p /secret')).code, 0);
    },
  });

  /** The oracle's answer for a read of `resource` by its owner. */
  function oracle(
    resource: string,
    operation: Operation = Operation.File,
  ): { allowed: boolean; action: string | null } {
    return decide({ operation, resource, write: false, owner: true });
  }

  /** `cat` of `file` is denied by the helper: a non-zero exit, no content, one Block reported. */
  async function assertDenied(file: string, what: string): Promise<void> {
    assert.deepEqual(oracle(file), { allowed: false, action: 'Block' }, `the oracle blocks ${file}`);
    const before = await stats();
    const r = await sh(`cat ${file}`);
    const after = await stats();
    assert.notEqual(r.code, 0, `${what}: ${JSON.stringify(r)}`);
    assert.equal(r.stdout, '', `${what}: nothing read`);
    assert.equal(after.reported - before.reported, 1, `${what}: one Block reported`);
  }

  it('after the first open in a merged directory, opens of its files and of a new file in it are not asked', async () => {
    await apply(SECRET);
    assert.deepEqual(oracle('/data/hello.txt'), { allowed: true, action: null });
    const s0 = await stats();
    assert.equal((await sh('cat /data/hello.txt')).stdout, 'hello from the image\n');
    const s1 = await stats();
    assert.ok(
      (s1.dirIgnoreMarks ?? 0) > (s0.dirIgnoreMarks ?? 0),
      `/data/ was marked (${JSON.stringify(s1)})`,
    );
    assert.equal(s1.ignoreMarks, s0.ignoreMarks, 'no inode mark on the writable root');
    const asked = await decisionsFor(': < /data/hello.txt', LOOPS);
    assert.ok(asked < 3, `the kernel asked ${asked} times for ${LOOPS} opens in a marked directory`);
    assert.equal((await sh('echo new > /data/new.txt')).code, 0);
    const askedNew = await decisionsFor(': < /data/new.txt', LOOPS);
    assert.ok(askedNew < 3, `a new file of the marked directory: asked ${askedNew} times for ${LOOPS} opens`);
  });

  it('a file of a marked directory renamed or hard-linked into a blocked directory is denied there; its old name still opens', async () => {
    await apply(SECRET);
    assert.equal(
      (await sh('cat /data/hello.txt && cp /data/hello.txt /data/m.txt && cp /data/hello.txt /data/l.txt'))
        .code,
      0,
    );
    const s0 = await stats();
    assert.ok((s0.dirIgnoreMarks ?? 0) > 0, 'the directory is marked');
    assert.equal((await sh('cat /data/m.txt /data/l.txt')).code, 0);
    assert.equal((await sh('mv /data/m.txt /secret/x')).code, 0);
    await assertDenied('/secret/x', 'renamed into /secret/');
    assert.equal((await sh('ln /data/l.txt /secret/l')).code, 0);
    await assertDenied('/secret/l', 'linked into /secret/');
    assert.equal(
      (await sh('cat /data/l.txt')).stdout,
      'hello from the image\n',
      'the /data name still opens',
    );
    await sh('rm -f /secret/x /secret/l /data/l.txt');
  });

  it('a marked merged directory cannot be renamed (EXDEV from the kernel); a copy under /secret/ is denied', async () => {
    await apply(SECRET);
    assert.equal((await sh('cat /moved/f.txt')).code, 0);
    const s0 = await stats();
    assert.ok((s0.dirIgnoreMarks ?? 0) > 0);
    const r = await sh(`${RENAME} /moved /secret/moved`);
    assert.match(r.stdout, /^EXDEV/, `overlayfs refuses to move a merged directory: ${JSON.stringify(r)}`);
    // busybox mv copies instead: the copy's files are new files under /secret/, asked and denied (their
    // creation too), so nothing of the directory can be read under /secret/.
    assert.deepEqual(oracle('/secret/moved/f.txt'), { allowed: false, action: 'Block' });
    const before = await stats();
    const mv = await sh('mv /moved /secret/');
    const after = await stats();
    assert.notEqual(mv.code, 0, `the copy into /secret/ is denied: ${JSON.stringify(mv)}`);
    assert.ok(after.reported > before.reported, 'the denied creation was reported');
    const copy = await sh('cat /secret/moved/f.txt');
    assert.notEqual(copy.code, 0);
    assert.equal(copy.stdout, '');
    assert.equal((await sh('cat /moved/f.txt')).stdout, 'in a lower directory\n', 'still in place');
  });

  it('a directory made in the container (pure upper) is not marked, and once moved under /secret/ its file is denied', async () => {
    await apply(SECRET);
    // The programs of /bin/ first, so that its mark is not counted below.
    assert.equal((await sh('mkdir -p /tmp && rm -f /tmp/none && cat /data/hello.txt')).code, 0);
    const s0 = await stats();
    assert.equal((await sh('mkdir /fresh && echo fresh > /fresh/f.txt')).code, 0);
    assert.equal((await sh('cat /fresh/f.txt')).stdout, 'fresh\n');
    const s1 = await stats();
    assert.equal(s1.dirIgnoreMarks, s0.dirIgnoreMarks, `no mark on /fresh/ (${JSON.stringify(s1)})`);
    assert.ok((s1.dirIgnoreMovable ?? 0) > (s0.dirIgnoreMovable ?? 0), 'counted as movable');
    const asked = await decisionsFor(': < /fresh/f.txt', 10);
    assert.ok(asked >= 10, `every open in /fresh/ is asked (${asked} of 10)`);
    assert.match((await sh(`${RENAME} /fresh /secret/fresh`)).stdout, /^OK/, 'a pure upper directory moves');
    await assertDenied('/secret/fresh/f.txt', 'a moved pure upper directory');
  });

  it('a lower directory removed and made again (opaque, pure upper) is not marked, and once moved its file is denied', async () => {
    await apply(SECRET);
    // The programs of /bin/ first, so that its mark is not counted below.
    assert.equal((await sh('mkdir -p /tmp && rm -f /tmp/none && cat /data/hello.txt')).code, 0);
    const s0 = await stats();
    assert.equal((await sh('rm -rf /remade && mkdir /remade && echo again > /remade/f.txt')).code, 0);
    assert.equal((await sh('cat /remade/f.txt')).stdout, 'again\n');
    const s1 = await stats();
    assert.equal(
      s1.dirIgnoreMarks,
      s0.dirIgnoreMarks,
      `no mark on the remade /remade/ (${JSON.stringify(s1)})`,
    );
    assert.ok((s1.dirIgnoreMovable ?? 0) > (s0.dirIgnoreMovable ?? 0), 'counted as movable');
    assert.match((await sh(`${RENAME} /remade /secret/remade`)).stdout, /^OK/, 'the opaque directory moves');
    await assertDenied('/secret/remade/f.txt', 'a moved opaque directory');
  });

  it('a Block on a file of a marked directory is in force at the next open (the state flushes directory marks)', async () => {
    await apply(SECRET);
    assert.equal((await sh('cat /data/hello.txt')).code, 0);
    const s0 = await stats();
    assert.ok((s0.dirIgnoreMarks ?? 0) > 0);
    assert.ok((await decisionsFor(': < /data/hello.txt', 10)) < 3, 'marked');
    await apply(SECRET, BLOCK_DATA_HELLO);
    await assertDenied('/data/hello.txt', 'a Block after the mark');
    assert.ok(
      (await decisionsFor(': < /data/new.txt', 10)) >= 10,
      'the directory is no longer marked (a path rule in it)',
    );
    await apply(SECRET);
    assert.equal((await sh('cat /data/hello.txt')).code, 0, 'allowed again');
  });

  it('an exec of /bin/true (several names) is marked by its directory; a Block on /bin/true is in force at the next exec', async () => {
    await apply(SECRET);
    const s0 = await stats();
    assert.equal((await sh('/bin/true')).code, 0);
    const s1 = await stats();
    assert.ok(
      (s1.dirIgnoreMarks ?? 0) > (s0.dirIgnoreMarks ?? 0),
      `/bin/ was marked (${JSON.stringify(s1)})`,
    );
    const asked = await decisionsFor('/bin/true', LOOPS);
    assert.ok(asked < 3, `execs of /bin/true asked ${asked} times in ${LOOPS}`);
    await apply(SECRET, BLOCK_TRUE);
    assert.deepEqual(oracle('/bin/true', Operation.Process), { allowed: false, action: 'Block' });
    const r = await sh('/bin/true; echo "exit=$?"');
    assert.match(r.stdout, /exit=126/, JSON.stringify(r));
    assert.equal((await sh('/bin/echo still')).stdout, 'still\n', 'another name of the same file still runs');
  });

  it('on a read-only mount, a file with two names (no inode mark) is covered by its directory mark', async () => {
    await apply(SECRET);
    const s0 = await stats();
    assert.equal((await sh(`cat ${RO}/one.txt`)).stdout, 'one file, two names\n');
    const s1 = await stats();
    assert.equal(s1.ignoreMarks, s0.ignoreMarks, 'no inode mark on a file with two names');
    assert.ok(
      (s1.dirIgnoreMarks ?? 0) > (s0.dirIgnoreMarks ?? 0),
      `${RO}/ was marked (${JSON.stringify(s1)})`,
    );
    const asked = await decisionsFor(`: < ${RO}/two.txt`, LOOPS);
    assert.ok(asked < 3, `opens of the other name asked ${asked} times in ${LOOPS}`);
  });
});
