// The fanotify helper's per-process identity cache (enforcer/native/proc-identity.c) on a real container:
// a pid reused by another process, and an exec in the same pid, get the new process's identity in their
// events, never the cached one of the process before. The processes are made by a small C program
// (identity-probe.c, built here with cc) that enters the container's mount namespace, so its opens are the
// container's: process A is pid 1 of a new pid namespace, and once it is reaped, B gets A's host pid with
// clone3(set_tid) in the host pid namespace; their `pid` in their own namespace differs (1 vs the host pid).
// The helper answers a reported event before it formats the report, but reads every fact first, while the
// process still waits: a process that changes its cwd, or exits, right after its open is described as it was
// at the open (the last two tests; an answer before the reads fails them).
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import type { DataPlane, DataPlaneEvent } from '../../../enforcer/data-plane.js';
import { createFanotifyPlane } from '../../../enforcer/fanotify/fanotify-plane.js';
import { NativeArtifact, requireNativeArtifact } from '../../support/native.js';
import { hasCommand, isRoot, requirePrereqs } from '../../support/prereq.js';
import { waitUntil } from '../../support/wait-until.js';
import {
  containerdPrereqs,
  startContainerd,
  type Containerd,
  type TestContainer,
} from '../support/containerd.js';
import { applyPolicies } from '../support/apply-policies.js';
import { REPO_ROOT, stopHelper } from '../support/enforcer-process.js';

const AUDIT = `apiVersion: security.runtime.com/v1
kind: RuntimePolicy
metadata:
  name: audit-data
  namespace: ns-id
spec:
  selector:
    matchLabels:
      app: ident
  file:
    matchDirectories:
    - dir: /data/
  action: Audit
`;

const FILE = '/data/hello.txt';

// Two modes: the helper as started by the plane (its open-file limit raised to 16 384, each process's /proc
// links kept open from their second read on), and under an open-file limit of 8 192 (prlimit), too low
// for the kept links beside a full read of the queue: the helper says so and reads every link by name.
const MODES = [
  { name: 'links kept', nofile: undefined },
  { name: 'links read by name (open-file limit 8 192)', nofile: 8192 },
] as const;

for (const mode of MODES)
  describe(`fanotify helper: process identity in events (real container, reused pids, exec; ${mode.name})`, function () {
    this.timeout(120000);
    let cd: Containerd | undefined;
    let container: TestContainer | undefined;
    let plane: DataPlane | undefined;
    let work = '';
    let socket = '';
    let probe = '';
    const events: DataPlaneEvent[] = [];

    before(async function () {
      this.timeout(120000);
      requirePrereqs(this, [
        ...containerdPrereqs(),
        [isRoot(), 'root'],
        [hasCommand('cc'), 'cc (gcc)'],
        [hasCommand('prlimit'), 'prlimit (util-linux)'],
      ]);
      const helper = requireNativeArtifact(this, NativeArtifact.fanotifyHelper);
      work = mkdtempSync(join(tmpdir(), 'rtctl-identity-'));
      let helperPath = helper;
      if (mode.nofile !== undefined) {
        helperPath = join(work, 'helper-limited');
        writeFileSync(
          helperPath,
          `#!/bin/sh\nexec prlimit --nofile=${mode.nofile}:${mode.nofile} ${helper} "$@"\n`,
          { mode: 0o755 },
        );
      }
      socket = join(work, 'fan.sock');
      probe = join(work, 'identity-probe');
      execFileSync('cc', [
        '-O2',
        '-Wall',
        '-o',
        probe,
        join(REPO_ROOT, 'test/enforcer/fanotify/identity-probe.c'),
      ]);
      cd = await startContainerd();
      container = await cd.runContainer({
        id: 'identity-c',
        pod: 'ident-1',
        namespace: 'ns-id',
        container: 'ident',
        labels: { app: 'ident' },
      });
      plane = createFanotifyPlane({
        helperPath,
        socketPath: socket,
        helperLogPath: join(work, 'helper.log'),
        logger: pino({ level: 'silent' }),
      });
      await plane.start();
      await applyPolicies(plane, [{ file: 'audit.yaml', text: AUDIT }], container, 1, {
        app: 'ident',
        'io.kubernetes.pod.namespace': 'ns-id',
      });
      const p = plane;
      void (async () => {
        for await (const e of p.events()) {
          if (e.resource === FILE) events.push(e);
          if (e.seq !== undefined) p.acknowledge?.(e.seq);
        }
      })();
    });

    after(async () => {
      await plane?.stop({ keepEnforcing: false });
      if (socket) await stopHelper(socket);
      await cd?.stop();
      if (work) rmSync(work, { recursive: true, force: true });
    });

    function runProbe(args: string[]): string {
      if (!container) throw new Error('not started');
      const r = spawnSync(probe, [args[0] ?? '', String(container.pid), ...args.slice(1)], {
        encoding: 'utf8',
      });
      if (r.status !== 0)
        throw Object.assign(new Error(`probe ${args.join(' ')}: ${r.stderr}`), { code: r.status });
      return r.stdout.trim();
    }

    it('keeps the links, or says that it reads them by name, as its open-file limit allows', () => {
      const log = readFileSync(join(work, 'helper.log'), 'utf8');
      // The helper raises its soft limit to 16 384 when its hard limit (this process's) allows.
      const hard = /^Max open files\s+\S+\s+(\S+)/m.exec(readFileSync('/proc/self/limits', 'utf8'))?.[1];
      const room = mode.nofile === undefined && (hard === 'unlimited' || Number(hard) >= 16384);
      if (room) assert.doesNotMatch(log, /links read by name/);
      else assert.match(log, /per-process \/proc links read by name, not kept/);
    });

    it('a pid reused by another process gets that process’s identity, not the cached one', async () => {
      // Several rounds: each makes a new pair (A, then B with A's host pid).
      for (let round = 0; round < 3; round++) {
        let out = '';
        for (let attempt = 0; attempt < 20 && out === ''; attempt++) {
          try {
            out = runProbe(['reuse', FILE]);
          } catch (err) {
            if ((err as { code?: number }).code !== 3) throw err; // 3: the pid was taken meanwhile, retry
          }
        }
        const m = /^reuse (\d+)$/.exec(out);
        assert.ok(m?.[1], `probe output ${out}`);
        const pid = Number(m[1]);
        const mine = (): DataPlaneEvent[] => events.filter((e) => e.hostPid === pid);
        await waitUntil(`two events of host pid ${pid}`, () => mine().length >= 2, 30000);
        const [a, b] = mine().slice(-2);
        assert.ok(a && b);
        // A: pid 1 of its own pid namespace; B: the same host pid, in the host pid namespace.
        assert.equal(a.pid, 1, 'A is pid 1 in its namespace');
        assert.equal(b.pid, pid, 'B reports its own namespace pid, not the cached one of A');
        assert.equal(b.hostPid, a.hostPid);
        assert.ok(b.seq !== undefined && a.seq !== undefined && b.seq > a.seq);
        assert.equal(b.hostPpid, a.hostPpid, 'both are children of the probe');
        assert.match(b.processName, /identity-probe$/);
      }
    });

    it('an exec in the same pid gets the new executable', async () => {
      // Two opens before the exec and two after: the helper keeps a process's exe link from its second
      // read on (proc-identity.c), and that kept link must read the new executable after the exec.
      const out = runProbe(['exec', FILE]);
      const m = /^exec (\d+)$/.exec(out);
      assert.ok(m?.[1], `probe output ${out}`);
      const pid = Number(m[1]);
      const mine = (): DataPlaneEvent[] => events.filter((e) => e.hostPid === pid);
      await waitUntil(`four events of host pid ${pid}`, () => mine().length >= 4, 30000);
      const all = mine().sort((a, b) => (a.seq ?? 0) - (b.seq ?? 0));
      assert.equal(all.length, 4);
      const [first, before, after, last] = all;
      assert.ok(first && before && after && last);
      assert.match(first.processName, /identity-probe$/, 'before the exec: the probe');
      assert.match(before.processName, /identity-probe$/, 'before the exec: the probe');
      for (const e of [after, last])
        assert.equal(
          e.processName,
          '/bin/sh',
          'after the exec: the container’s shell (busybox, linked as /bin/sh), not the kept name',
        );
      assert.equal(after.pid, before.pid, 'the same process');
      assert.equal(after.hostPpid, before.hostPpid);
    });

    it('a parent that enters the container’s mount namespace is named as one inside it from then on', async () => {
      // The helper names a container process's parent outside the container's mount namespace by its base
      // name only, and reads both processes' ns/mnt links at every event through links it keeps: the parent's
      // move must show at the child's next open, not the answer kept from before.
      const n = 4;
      const out = runProbe(['nsmove', FILE, String(n)]);
      const m = /^nsmove (\d+)$/.exec(out);
      assert.ok(m?.[1], `probe output ${out}`);
      const pid = Number(m[1]);
      const mine = (): DataPlaneEvent[] => events.filter((e) => e.hostPid === pid);
      await waitUntil(`${2 * n} events of host pid ${pid}`, () => mine().length >= 2 * n, 30000);
      const parents = mine()
        .sort((a, b) => (a.seq ?? 0) - (b.seq ?? 0))
        .map((e) => e.parentProcessName);
      assert.deepEqual(
        parents,
        [...Array<string>(n).fill('/identity-probe'), ...Array<string>(n).fill(probe)],
        'outside: the base name; inside the same mount namespace: its executable’s path',
      );
    });

    it('a cwd changed right after the open is reported as it was at the open', async () => {
      const n = 40;
      const out = runProbe(['chdir', FILE, '/data', String(n)]);
      const m = /^chdir (\d+)$/.exec(out);
      assert.ok(m?.[1], `probe output ${out}`);
      const pid = Number(m[1]);
      const mine = (): DataPlaneEvent[] => events.filter((e) => e.hostPid === pid);
      await waitUntil(`${n} events of host pid ${pid}`, () => mine().length >= n, 30000);
      const cwds = mine()
        .sort((a, b) => (a.seq ?? 0) - (b.seq ?? 0))
        .map((e) => e.cwd);
      assert.deepEqual(
        cwds,
        Array.from({ length: n }, (_, i) => (i % 2 === 0 ? '/' : '/data')),
        'each open’s cwd, not the one chdir set right after it',
      );
    });

    it('a process that exits right after its open is still described whole', async () => {
      const n = 30;
      const out = runProbe(['exit', FILE, String(n)]);
      const pids = out.split(' ').slice(1).map(Number);
      assert.equal(pids.length, n, `probe output ${out}`);
      const of = (pid: number): DataPlaneEvent | undefined => events.find((e) => e.hostPid === pid);
      await waitUntil(`events of ${n} short-lived processes`, () => pids.every((p) => of(p)), 30000);
      const parents = new Set<number>();
      for (const pid of pids) {
        const e = of(pid);
        assert.ok(e);
        assert.match(e.processName, /identity-probe$/, `pid ${pid}: its executable`);
        assert.match(e.parentProcessName, /identity-probe$/, `pid ${pid}: its parent's executable`);
        assert.equal(e.pid, pid, 'in the host pid namespace: its own pid');
        assert.equal(e.cwd, '/', `pid ${pid}: its cwd`);
        assert.equal(e.uid, 0);
        assert.ok(e.hostPpid > 0);
        assert.match(e.syscallArgs, /flags=O_RDONLY/, `pid ${pid}: the open's arguments`);
        parents.add(e.hostPpid);
      }
      assert.equal(parents.size, 1, 'every child has the probe as its parent');
    });
  });
