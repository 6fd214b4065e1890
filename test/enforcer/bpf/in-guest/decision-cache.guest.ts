// The file_open and exec decision cache of the BPF-LSM plane (docs/bpf-lsm.md "Decision cache"): an "allow without
// alert" answer is reused only while nothing it depends on has changed. Each test first makes the kernel
// cache an answer (and checks through the plane's counters that later opens were answered from the
// cache), then changes one thing the answer depends on (the policy, the acting executable, the access mode,
// the file's owner, the file's path by a rename or a mount move, a second name) and checks that the very
// next open is decided afresh: denied or reported where the rules say so. Exec answers (bprm_check_security)
// are cached by the same rules: the exec tests run a copy of the static busybox, which opens no file, so
// every cache hit of its loop is an exec's.
import assert from 'node:assert/strict';
import { chownSync, copyFileSync, linkSync, mkdirSync, renameSync } from 'node:fs';
import type { BpfLsmPlane } from '../../../../enforcer/bpf/bpf-lsm-plane.js';
import type { Postures } from '../../../../enforcer/data-plane.js';
import {
  EventCollector,
  buildTable,
  compileRuleSet,
  createNamespaceWorkload,
  runInNamespace,
  startPlane,
  writeTestFile,
  type NamespaceWorkload,
} from './guest-support.js';

const ROOT = '/tmp/dc';
const POSTURES: Postures = { file: 'audit', network: 'audit', capabilities: 'audit' };

function policy(name: string, file: string, process = ''): string {
  return `apiVersion: security.runtime.com/v1
kind: RuntimePolicy
metadata:
  name: ${name}
  namespace: guest
spec:
  selector:
    matchLabels:
      app: cache
  file:
${file}
${process}  action: Block
`;
}

const BASE = policy(
  'cache-base',
  `    matchPaths:
      - path: ${ROOT}/src/f
        fromSource:
          - path: /usr/bin/cat
      - path: ${ROOT}/own/f
        ownerOnly: true
      - path: ${ROOT}/audited
        action: Audit
      - path: ${ROOT}/lp/listed
        fromSource:
          - path: /usr/bin/tac
        action: Allow
    matchDirectories:
      - dir: ${ROOT}/ro/
        readOnly: true
      - dir: ${ROOT}/r-blocked/
        recursive: true
      - dir: ${ROOT}/blocked-m/
        recursive: true
      - dir: ${ROOT}/links-blocked/
      - dir: ${ROOT}/moved-blocked/`,
  `  process:
    matchPaths:
      - path: ${ROOT}/px/true
        fromSource:
          - path: /usr/bin/bash
    matchDirectories:
      - dir: ${ROOT}/px-blocked/
`,
);

const CHANGED = policy(
  'cache-changed',
  `    matchPaths:
      - path: ${ROOT}/free/f
      - path: ${ROOT}/src/f
        fromSource:
          - path: /usr/bin/cat`,
  // The fromSource rule keeps the actor in the key as under BASE: only the stamp tells the two states apart.
  `  process:
    matchPaths:
      - path: ${ROOT}/true
`,
);

describe('BPF-LSM: the file_open and exec decision cache', function () {
  this.timeout(300_000);
  let plane: BpfLsmPlane;
  let events: EventCollector;
  let ns: NamespaceWorkload;
  let generation = 0;

  const apply = async (text: string): Promise<void> => {
    const { image } = buildTable(compileRuleSet({ 'policy.yaml': text }));
    generation++;
    await plane.apply({
      generation,
      table: image,
      workloads: [{ anchor: ns.anchor, policies: [0], postures: POSTURES }],
    });
  };
  const run = (command: string): { status: number | null; stderr: string } =>
    runInNamespace(ns.anchor.pid, command);
  const hits = async (): Promise<number> => (await plane.stats()).cacheHits;
  /** Runs `command` `times` times in one shell; every run must succeed. */
  const warm = (command: string, times = 10): void => {
    const r = run(`for i in $(seq ${times}); do ${command} >/dev/null || exit 1; done`);
    assert.equal(r.status, 0, `warm-up failed: ${r.stderr}`);
  };
  /** Warms the cache with `command` and checks that the cache answered at least `times - 1` opens. */
  const warmAndCheck = async (command: string, times = 10): Promise<void> => {
    const before = await hits();
    warm(command, times);
    const after = await hits();
    assert.ok(
      after - before >= times - 1,
      `only ${after - before} cache hits over ${times} runs of ${command}`,
    );
  };
  const denied = (command: string): void => {
    const r = run(command);
    assert.notEqual(r.status, 0, `${command} was allowed`);
    assert.match(r.stderr, /Permission denied/, `${command}: ${r.stderr}`);
  };
  const allowed = (command: string): void => {
    const r = run(command);
    assert.equal(r.status, 0, `${command} was denied: ${r.stderr}`);
  };

  before(async () => {
    for (const f of [
      'free/f',
      'src/f',
      'own/f',
      'audited',
      'lp/listed',
      'lp/other',
      'ro/f',
      'r-ok/f',
      'links-ok/g',
      'moved-ok/h',
    ])
      writeTestFile(`${ROOT}/${f}`, 'x\n');
    mkdirSync(`${ROOT}/links-blocked`, { recursive: true });
    mkdirSync(`${ROOT}/moved-blocked`, { recursive: true });
    mkdirSync(`${ROOT}/m1`, { recursive: true });
    mkdirSync(`${ROOT}/blocked-m`, { recursive: true });
    copyFileSync('/usr/bin/cat', `${ROOT}/mycat`);
    // The static busybox (named true: it runs the applet its name says) opens no file: a loop of its execs has
    // only exec decisions.
    mkdirSync(`${ROOT}/px`, { recursive: true });
    mkdirSync(`${ROOT}/px-ok`, { recursive: true });
    for (const f of ['true', 'px/true', 'px-ok/true']) copyFileSync('/bin/busybox', `${ROOT}/${f}`);
    plane = await startPlane('dcache');
    events = new EventCollector(plane);
    ns = createNamespaceWorkload('dcache');
    await apply(BASE);
  });

  after(async () => {
    ns.stop();
    await plane.stop({ keepEnforcing: false });
    await events.finished();
  });

  it('answers repeated opens of an unlisted file from the cache, without alerts', async () => {
    await warmAndCheck(`cat ${ROOT}/free/f`, 20);
    assert.equal(events.events.filter((e) => e.resource === `${ROOT}/free/f`).length, 0);
  });

  it('a policy change after cached allows is in force from the next open (and back)', async () => {
    await warmAndCheck(`cat ${ROOT}/free/f`);
    await apply(CHANGED);
    try {
      denied(`cat ${ROOT}/free/f`);
      const e = await events.waitFor((x) => x.resource === `${ROOT}/free/f` && x.generation === generation);
      assert.ok(e, 'no Block event after the change');
      assert.equal(e.action, 'Block');
      assert.equal(e.policyName, 'cache-changed');
    } finally {
      // The other tests run under the base policy, whatever happened here.
      await apply(BASE);
    }
    allowed(`cat ${ROOT}/free/f`);
    await warmAndCheck(`cat ${ROOT}/free/f`);
  });

  it('fromSource: a cached allow for one executable does not answer for another', async () => {
    // The rule blocks /usr/bin/cat only: the copy of cat at another path reads freely (and is cached).
    await warmAndCheck(`${ROOT}/mycat ${ROOT}/src/f`);
    denied(`cat ${ROOT}/src/f`);
    allowed(`${ROOT}/mycat ${ROOT}/src/f`);
    denied(`cat ${ROOT}/src/f`);
  });

  it('least-permissive fromSource: a cached silent allow for one actor is not reused for the listed one', async () => {
    // tac has an allow list (lp/listed only): its other opens are posture decisions (audit), reported each time.
    await warmAndCheck(`cat ${ROOT}/lp/other`);
    const before = events.events.filter((e) => e.resource === `${ROOT}/lp/other`).length;
    assert.equal(before, 0, 'cat must not be reported for lp/other');
    for (let i = 1; i <= 3; i++) {
      allowed(`tac ${ROOT}/lp/other`);
      const got = await events.waitFor(
        () =>
          events.events.filter((e) => e.resource === `${ROOT}/lp/other` && e.processName === '/usr/bin/tac')
            .length >= i,
      );
      assert.ok(got, `tac's open ${i} of lp/other was not reported`);
    }
    const reported = events.events.filter((e) => e.resource === `${ROOT}/lp/other`);
    assert.ok(reported.every((e) => e.processName === '/usr/bin/tac' && e.policyName === 'DefaultPosture'));
  });

  it('readOnly: cached reads do not let a write through', async () => {
    await warmAndCheck(`cat ${ROOT}/ro/f`);
    denied(`echo x >> ${ROOT}/ro/f`);
    allowed(`cat ${ROOT}/ro/f`);
    denied(`echo x >> ${ROOT}/ro/f`);
  });

  it("ownerOnly: the owner's cached reads do not answer for another user, nor after a chown", async () => {
    await warmAndCheck(`cat ${ROOT}/own/f`);
    const asUser = `setpriv --reuid 1000 --regid 1000 --clear-groups cat ${ROOT}/own/f`;
    denied(asUser);
    allowed(`cat ${ROOT}/own/f`);
    chownSync(`${ROOT}/own/f`, 1000, 1000);
    denied(`cat ${ROOT}/own/f`);
    allowed(asUser);
    chownSync(`${ROOT}/own/f`, 0, 0);
    allowed(`cat ${ROOT}/own/f`);
  });

  it('audits are never cached: every open is reported', async () => {
    const count = (): number => events.events.filter((e) => e.resource === `${ROOT}/audited`).length;
    const before = count();
    warm(`cat ${ROOT}/audited`, 5);
    const got = await events.waitFor(() => count() >= before + 5);
    assert.ok(got, `${count() - before} of 5 audited opens reported`);
  });

  it('a rename of a directory above a cached file is in force from the next open', async () => {
    await warmAndCheck(`cat ${ROOT}/r-ok/f`);
    renameSync(`${ROOT}/r-ok`, `${ROOT}/r-blocked`);
    denied(`cat ${ROOT}/r-blocked/f`);
  });

  it('a rename of a cached file itself into a blocked directory is in force from the next open', async () => {
    await warmAndCheck(`cat ${ROOT}/moved-ok/h`);
    const r = run(`mv ${ROOT}/moved-ok/h ${ROOT}/moved-blocked/h && cat ${ROOT}/moved-blocked/h`);
    assert.notEqual(r.status, 0, 'the renamed file was read');
    assert.match(r.stderr, /Permission denied/);
  });

  it('a second name (hard link) is decided by its own path; the first is no longer cached', async () => {
    await warmAndCheck(`cat ${ROOT}/links-ok/g`);
    linkSync(`${ROOT}/links-ok/g`, `${ROOT}/links-blocked/g`);
    denied(`cat ${ROOT}/links-blocked/g`);
    allowed(`cat ${ROOT}/links-ok/g`);
    denied(`cat ${ROOT}/links-blocked/g`);
  });

  it('answers repeated execs from the cache, without alerts', async () => {
    const before = await hits();
    const r = run(`i=0; while [ $i -lt 30 ]; do ${ROOT}/true || exit 1; i=$((i+1)); done`);
    assert.equal(r.status, 0, r.stderr);
    const got = (await hits()) - before;
    // 30 execs, the first decided and stored: 29 hits at least (the shell's own start-up opens add a few).
    assert.ok(got >= 29, `only ${got} cache hits over 30 execs`);
    assert.equal(events.events.filter((e) => e.resource === `${ROOT}/true`).length, 0);
  });

  it('exec: a policy change after cached execs is in force from the next exec (and back)', async () => {
    await warmAndCheck(`${ROOT}/true`);
    await apply(CHANGED);
    try {
      denied(`${ROOT}/true`);
      const e = await events.waitFor((x) => x.resource === `${ROOT}/true` && x.generation === generation);
      assert.ok(e, 'no Block event after the change');
      assert.equal(e.action, 'Block');
      assert.equal(e.policyName, 'cache-changed');
    } finally {
      await apply(BASE);
    }
    allowed(`${ROOT}/true`);
  });

  it('exec fromSource: a cached exec by one executable does not answer for another', async () => {
    // The rule blocks px/true when bash runs it; sh (dash) runs it freely, and its answer is cached.
    await warmAndCheck(`${ROOT}/px/true`);
    denied(`bash -c '${ROOT}/px/true'`);
    allowed(`${ROOT}/px/true`);
    denied(`bash -c '${ROOT}/px/true'`);
  });

  it('exec: a rename of the directory of a cached binary is in force from the next exec', async () => {
    // The binary's dentry and its parent's stay the same: only the rename count tells the paths apart.
    await warmAndCheck(`${ROOT}/px-ok/true`);
    const r = run(`mv ${ROOT}/px-ok ${ROOT}/px-blocked && ${ROOT}/px-blocked/true`);
    assert.notEqual(r.status, 0, 'the renamed binary ran');
    assert.match(r.stderr, /Permission denied/);
  });

  it('a mount moved under a blocked directory is in force from the next open', async () => {
    const r1 = run(`mount -t tmpfs rtctl-dc ${ROOT}/m1 && echo x > ${ROOT}/m1/f`);
    assert.equal(r1.status, 0, r1.stderr);
    await warmAndCheck(`cat ${ROOT}/m1/f`);
    const r2 = run(`mount --move ${ROOT}/m1 ${ROOT}/blocked-m && cat ${ROOT}/blocked-m/f`);
    assert.notEqual(r2.status, 0, 'the file of the moved mount was read');
    assert.match(r2.stderr, /Permission denied/);
    run(`umount ${ROOT}/blocked-m`);
  });
});
