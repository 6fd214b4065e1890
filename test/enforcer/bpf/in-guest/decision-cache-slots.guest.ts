// The decision cache's slots and the task's remembered workload (docs/bpf-lsm.md "Decision cache"). The cache is
// direct-mapped: each key has one slot, and two keys on one slot take turns. Here the plane runs with a single
// slot (`decisionCacheSlots: 1`, a test-only loader option), so every key collides with every other: an answer
// in the slot must never stand for another file, mode or decision, however the keys hash. The reads run as
// shell built-ins (`read x < file` in dash) so that nothing else opens a file between two reads.
// The workload of each task is remembered in task storage with what it was found from (the state's epoch, the
// cgroup id, the mount namespace): a task that joins a workload's cgroup or leaves its mount namespace is
// decided by where it is now from its next hook on.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import type { BpfLsmPlane } from '../../../../enforcer/bpf/bpf-lsm-plane.js';
import type { Postures } from '../../../../enforcer/data-plane.js';
import {
  EventCollector,
  buildTable,
  compileRuleSet,
  createCgroupWorkload,
  createNamespaceWorkload,
  runInNamespace,
  startPlane,
  writeTestFile,
  type CgroupWorkload,
  type NamespaceWorkload,
} from './guest-support.js';

const ROOT = '/tmp/dcs';
const POSTURES: Postures = { file: 'audit', network: 'audit', capabilities: 'audit' };

const POLICY = `apiVersion: security.runtime.com/v1
kind: RuntimePolicy
metadata:
  name: slots
  namespace: guest
spec:
  selector:
    matchLabels:
      app: slots
  file:
    matchPaths:
      - path: ${ROOT}/audited
        action: Audit
    matchDirectories:
      - dir: ${ROOT}/blocked/
      - dir: ${ROOT}/ro/
        readOnly: true
  action: Block
`;

/** A dash loop running `body` `times` times; it stops with status 1 at the first failing command. */
const loop = (times: number, body: string): string =>
  `i=0; while [ $i -lt ${times} ]; do ${body} || exit 1; i=$((i+1)); done`;

describe('BPF-LSM: a one-slot decision cache and the remembered workload of a task', function () {
  this.timeout(300_000);
  let plane: BpfLsmPlane;
  let events: EventCollector;
  let ns: NamespaceWorkload;
  let cg: CgroupWorkload;

  const run = (command: string): { status: number | null; stderr: string } =>
    runInNamespace(ns.anchor.pid, command);
  const hits = async (): Promise<number> => (await plane.stats()).cacheHits;
  /** Cache hits while `command` runs in the namespace workload; the command must succeed. */
  const hitsOf = async (command: string): Promise<number> => {
    const before = await hits();
    const r = run(command);
    assert.equal(r.status, 0, `${command}: ${r.stderr}`);
    return (await hits()) - before;
  };

  before(async () => {
    for (const f of ['a', 'b', 'audited', 'blocked/f', 'ro/f']) writeTestFile(`${ROOT}/${f}`, 'x\n');
    plane = await startPlane('dcslots', { decisionCacheSlots: 1 });
    events = new EventCollector(plane);
    ns = createNamespaceWorkload('dcslots');
    cg = createCgroupWorkload('dcslots-cg', 'dcslots');
    const { image } = buildTable(compileRuleSet({ 'policy.yaml': POLICY }));
    await plane.apply({
      generation: 1,
      table: image,
      workloads: [
        { anchor: ns.anchor, policies: [0], postures: POSTURES },
        { anchor: cg.anchor, policies: [0], postures: POSTURES },
      ],
    });
  });

  after(async () => {
    ns.stop();
    cg.remove();
    await plane.stop({ keepEnforcing: false });
    await events.finished();
  });

  it('one slot: a file read again is answered from it; two files read in turn push each other out', async () => {
    const again = await hitsOf(loop(20, `read x < ${ROOT}/a`));
    assert.ok(again >= 19, `only ${again} hits over 20 reads of one file`);
    // The same 20 reads, of two files in turn: each read finds the other file's key in the one slot.
    const inTurn = await hitsOf(loop(10, `read x < ${ROOT}/a && read x < ${ROOT}/b`));
    assert.ok(inTurn <= 2, `${inTurn} hits over 20 reads of two files taking turns in one slot`);
  });

  it("one slot: an allowed file's answer in the slot never answers for a blocked file", async () => {
    const r = run(`${loop(5, `read x < ${ROOT}/a`)}; read y < ${ROOT}/blocked/f`);
    assert.notEqual(r.status, 0, 'the blocked file was read');
    assert.match(r.stderr, /Permission denied/);
    const e = await events.waitFor((x) => x.resource === `${ROOT}/blocked/f` && x.action === 'Block');
    assert.ok(e, 'no Block event for the blocked file');
  });

  it('one slot: a cached read of a file does not answer for a write of it', async () => {
    assert.ok((await hitsOf(loop(5, `read x < ${ROOT}/ro/f`))) >= 4, 'the reads were not cached');
    const r = run(`read x < ${ROOT}/ro/f && echo x >> ${ROOT}/ro/f`);
    assert.notEqual(r.status, 0, 'the readOnly file was written');
    assert.match(r.stderr, /Permission denied/);
  });

  it('one slot: audits between cached reads are reported every time', async () => {
    const count = (): number => events.events.filter((e) => e.resource === `${ROOT}/audited`).length;
    const before = count();
    const r = run(loop(5, `read x < ${ROOT}/a && read x < ${ROOT}/audited`));
    assert.equal(r.status, 0, r.stderr);
    const got = await events.waitFor(() => count() >= before + 5);
    assert.ok(got, `${count() - before} of 5 audited reads reported`);
  });

  it("a task that joins the workload's cgroup is decided by it from its next open", () => {
    // One shell: a read outside every workload (allowed, and the task's storage says "no workload"), then the
    // move into the cgroup, then the same read again.
    const script = `read x < ${ROOT}/blocked/f || exit 3; echo $$ > /sys/fs/cgroup${cg.cgroupPath}/cgroup.procs || exit 4; read x < ${ROOT}/blocked/f`;
    const r = spawnSync('/bin/sh', ['-c', script], { encoding: 'utf8', timeout: 60_000 });
    assert.ok(r.status !== 3 && r.status !== 4, `status ${r.status}: ${r.stderr}`);
    assert.notEqual(r.status, 0, 'the blocked file was read after joining the workload');
    assert.match(r.stderr, /Permission denied/);
  });

  it("a task that leaves the workload's mount namespace is no longer decided by it", () => {
    const inside = run(`read x < ${ROOT}/blocked/f`);
    assert.notEqual(inside.status, 0, 'the blocked file was read inside the workload');
    // unshare runs in the workload, then moves itself to a new mount namespace (no workload) and execs the
    // shell: the same task, whose storage still names the workload until it is checked again.
    const left = run(`unshare --mount /bin/sh -c 'read x < ${ROOT}/blocked/f'`);
    assert.equal(left.status, 0, `read in a new mount namespace was denied: ${left.stderr}`);
  });
});
