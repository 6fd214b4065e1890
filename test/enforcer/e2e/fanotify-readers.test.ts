// The fanotify helper's reader threads (docs/enforcer.md "Reader threads") on a real container and the real
// kernel: several processes pinned to several CPUs open a generated mix (fixed seed) of blocked, audited and
// allowed files at once, and every open gets its verdict, every Block and Audit exactly one report, and the
// helper's STATUS counters add up; a new state applied while the readers are busy is in force on the very
// next open. Each case runs with RTCTL_FANOTIFY_READERS=8 (one reader per CPU, at most 8) and with the default
// (the single loop), which must behave the same.
import '../../support/property-seed.js';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { closeSync, existsSync, mkdtempSync, openSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { pino } from 'pino';
import type { DataPlane, DataPlaneEvent } from '../../../enforcer/data-plane.js';
import { createFanotifyPlane } from '../../../enforcer/fanotify/fanotify-plane.js';
import { NativeArtifact, requireNativeArtifact } from '../../support/native.js';
import { isRoot, requirePrereqs } from '../../support/prereq.js';
import { waitUntil } from '../../support/wait-until.js';
import {
  containerdPrereqs,
  startContainerd,
  type Containerd,
  type TestContainer,
} from '../support/containerd.js';
import { stopHelper } from '../support/enforcer-process.js';
import { applyPolicies } from '../support/apply-policies.js';

const DIRS = ['a', 'b', 'o'] as const; // audited, blocked, allowed
const FILES_PER_DIR = 4;

function policy(name: string, dir: string, action: 'Audit' | 'Block', kind = 'matchDirectories'): string {
  return `apiVersion: security.runtime.com/v1
kind: RuntimePolicy
metadata:
  name: ${name}
  namespace: ns-a
spec:
  selector:
    matchLabels:
      app: web
  file:
    ${kind}:
    - ${kind === 'matchPaths' ? 'path' : 'dir'}: ${dir}
  action: ${action}
`;
}

const BASE = [
  { file: 'audit.yaml', text: policy('audit-a', '/data/a/', 'Audit') },
  { file: 'block.yaml', text: policy('block-b', '/data/b/', 'Block') },
];
const BLOCK_O1 = { file: 'block-o1.yaml', text: policy('block-o1', '/data/o/f1', 'Block', 'matchPaths') };

interface HelperStatus {
  decisions: number;
  cacheHits: number;
  reported: number;
  dropped: number;
  denied: number;
  readers: number;
}

/** The helper's STATUS reply, read on a connection of its own (the plane's stats() leave `readers` out). */
async function helperStatus(socket: string): Promise<HelperStatus> {
  return new Promise((resolve, reject) => {
    const s = connect(socket);
    let text = '';
    s.setEncoding('utf8');
    s.on('connect', () => s.write('STATUS\n'));
    s.on('data', (d: string) => {
      text += d;
      const nl = text.indexOf('\n');
      if (nl >= 0) {
        s.destroy();
        resolve(JSON.parse(text.slice(0, nl)) as HelperStatus);
      }
    });
    s.on('error', reject);
  });
}

/** The CPUs this process (and the helper it starts) may run on: sched_getaffinity, as the helper counts them. */
function cpuCount(): number {
  return Math.max(1, availableParallelism());
}

for (const mode of ['8', 'default'] as const) {
  describe(`fanotify helper reader threads, RTCTL_FANOTIFY_READERS=${mode} (containerd + runc + busybox, real kernel)`, function () {
    this.timeout(240000);
    let cd: Containerd | undefined;
    let container: TestContainer | undefined;
    let work = '';
    let socket = '';
    let plane: DataPlane | undefined;
    const got: DataPlaneEvent[] = [];
    let reading: Promise<void> | undefined;
    const logger = pino({ level: 'silent' });
    const extraFiles: Record<string, string> = {};
    for (const d of DIRS)
      for (let i = 0; i < FILES_PER_DIR; i++) extraFiles[`/data/${d}/f${i}`] = `${d}${i}\n`;

    async function apply(texts: { file: string; text: string }[], generation: number): Promise<void> {
      if (!plane || !container) throw new Error('not started');
      await applyPolicies(plane, texts, container, generation);
    }

    before(async function () {
      this.timeout(120000);
      requirePrereqs(this, containerdPrereqs());
      const helperPath = requireNativeArtifact(this, NativeArtifact.fanotifyHelper);
      work = mkdtempSync(join(tmpdir(), 'rtctl-readers-'));
      socket = join(work, 'fan.sock');
      cd = await startContainerd(extraFiles);
      container = await cd.runContainer({
        id: `readers-${mode}`,
        pod: 'web-1',
        namespace: 'ns-a',
        container: 'web',
        labels: { app: 'web' },
      });
      // The helper inherits the environment of the process that starts it.
      const saved = process.env['RTCTL_FANOTIFY_READERS'];
      if (mode === 'default') delete process.env['RTCTL_FANOTIFY_READERS'];
      else process.env['RTCTL_FANOTIFY_READERS'] = mode;
      plane = createFanotifyPlane({
        helperPath,
        socketPath: socket,
        helperLogPath: join(work, 'helper.log'),
        logger,
      });
      try {
        await plane.start();
      } finally {
        if (saved === undefined) delete process.env['RTCTL_FANOTIFY_READERS'];
        else process.env['RTCTL_FANOTIFY_READERS'] = saved;
      }
      const p = plane;
      reading = (async () => {
        for await (const e of p.events()) {
          got.push(e);
          if (e.seq !== undefined) p.acknowledge?.(e.seq);
        }
      })();
      await apply(BASE, 1);
    });

    after(async () => {
      await plane?.stop({ keepEnforcing: false });
      await reading;
      if (socket) await stopHelper(socket);
      await cd?.stop();
      if (work) rmSync(work, { recursive: true, force: true });
    });

    it('runs the reader count asked for: one per CPU (at most 8) for 8, none (the single loop) by default', async () => {
      const st = await helperStatus(socket);
      const cpus = cpuCount();
      const expected = mode === 'default' || cpus < 2 ? 0 : Math.min(cpus, 8);
      assert.equal(st.readers, expected, `${cpus} CPUs`);
    });

    it('concurrent opens from processes on several CPUs: each its verdict, each Block and Audit exactly one report, and STATUS adds up', async () => {
      if (!cd || !container) throw new Error('not started');
      const c = container;
      const d = cd;
      const cpus = cpuCount();
      const WORKERS = 4;
      const pick = fc.record({
        dir: fc.constantFrom(...DIRS),
        n: fc.integer({ min: 0, max: FILES_PER_DIR - 1 }),
      });
      await fc.assert(
        fc.asyncProperty(
          fc.array(fc.array(pick, { minLength: 10, maxLength: 40 }), {
            minLength: WORKERS,
            maxLength: WORKERS,
          }),
          async (plans) => {
            const before = await helperStatus(socket);
            const from = got.length;
            // Each worker is its own shell pinned to a CPU (busybox taskset), printing its pid and, per open,
            // whether it was allowed; the workers run side by side.
            const script = plans
              .map((plan, i) => {
                const body = plan
                  .map(({ dir, n }) => {
                    const f = `/data/${dir}/f${n}`;
                    return `if true < ${f} 2>/dev/null; then echo "$$ ok ${f}"; else echo "$$ no ${f}"; fi`;
                  })
                  .join('; ');
                return `/bin/busybox taskset -c ${i % cpus} /bin/sh -c '${body}' &`;
              })
              .join('\n');
            const r = await d.exec(c.id, ['/bin/sh', '-c', `${script}\nwait`]);
            assert.equal(r.code, 0, r.stderr);
            const lines = r.stdout.trim().split('\n');
            const opens = plans.reduce((n, p) => n + p.length, 0);
            assert.equal(lines.length, opens, 'one line per open');
            // The verdicts: every open under /data/b/ denied, every other allowed.
            const expectedEvents: string[] = [];
            const perPid = new Map<string, string[]>();
            for (const line of lines) {
              const [pid, verdict, path] = line.split(' ') as [string, string, string];
              assert.equal(verdict, path.startsWith('/data/b/') ? 'no' : 'ok', line);
              perPid.set(pid, [...(perPid.get(pid) ?? []), path]);
              if (!path.startsWith('/data/o/'))
                expectedEvents.push(`${pid} ${path} ${path.startsWith('/data/b/') ? 'Block' : 'Audit'}`);
            }
            assert.equal(perPid.size, WORKERS, 'one pid per worker');
            // Each worker's opens in its plan's order.
            const seqOf = [...perPid.values()].map((paths) => paths.join(',')).sort();
            const planned = plans.map((p) => p.map(({ dir, n }) => `/data/${dir}/f${n}`).join(',')).sort();
            assert.deepEqual(seqOf, planned);
            await waitUntil(
              'the reports of the run',
              () => got.length >= from + expectedEvents.length,
              30000,
            );
            const after = await helperStatus(socket);
            const blocked = expectedEvents.filter((e) => e.endsWith(' Block')).length;
            assert.equal(
              after.reported - before.reported,
              expectedEvents.length,
              'reported: one per Block and Audit',
            );
            assert.equal(after.denied - before.denied, blocked, 'denied: one per blocked open');
            assert.equal(after.dropped - before.dropped, 0, 'nothing dropped');
            // Every audited or blocked open is decided; the allowed ones of /data/o/ (a directory of the image
            // where every name is allowed without alert) stop being asked once its directory is marked.
            assert.ok(
              after.decisions - before.decisions >= expectedEvents.length,
              'every audited or blocked open decided',
            );
            assert.ok(after.cacheHits - before.cacheHits <= after.decisions - before.decisions);
            const events = got.slice(from);
            assert.equal(events.length, expectedEvents.length, 'no report beyond those counted');
            assert.deepEqual(
              events.map((e) => `${e.pid} ${e.resource} ${e.action}`).sort(),
              expectedEvents.sort(),
              'exactly one report per blocked or audited open, for its process',
            );
            assert.deepEqual(
              events.map((e) => e.seq),
              Array.from({ length: events.length }, (_, i) => (events[0]?.seq ?? 0) + i),
              'sequence numbers without gaps or repeats',
            );
          },
        ),
        { numRuns: 5 },
      );
    });

    it('a state applied while the readers are busy is in force on the very next open, both ways, every time', async () => {
      if (!cd || !container) throw new Error('not started');
      const c = container;
      const d = cd;
      const cpus = cpuCount();
      // Busy readers: a worker per CPU opening allowed files (and /data/o/f1, the file the change blocks) in a
      // loop until told to stop; /data/a/ (audited) is asked at every open, whatever mark /data/o/ gets.
      const loops = Array.from({ length: Math.max(2, cpus) }, (_, i) =>
        d.exec(c.id, [
          '/bin/busybox',
          'taskset',
          '-c',
          String(i % cpus),
          '/bin/sh',
          '-c',
          'while [ ! -e /tmp/stop ]; do true < /data/o/f0; true < /data/o/f1 2>/dev/null; true < /data/a/f2; done',
        ]),
      );
      try {
        const start = (await helperStatus(socket)).decisions;
        await waitUntil(
          'the workers keep the readers busy',
          async () => (await helperStatus(socket)).decisions > start + 500,
          30000,
        );
        const target = `/proc/${c.pid}/root/data/o/f1`;
        const opens = (): boolean => {
          try {
            closeSync(openSync(target, 'r'));
            return true;
          } catch (err) {
            if ((err as NodeJS.ErrnoException).code === 'EPERM') return false;
            throw err;
          }
        };
        let generation = 10;
        for (let round = 0; round < 10; round++) {
          await apply([...BASE, BLOCK_O1], ++generation);
          assert.equal(opens(), false, `round ${round}: blocked at the first open after the state`);
          await apply(BASE, ++generation);
          assert.equal(opens(), true, `round ${round}: allowed at the first open after the state`);
        }
        const during = (await helperStatus(socket)).decisions;
        assert.ok(during > start + 500, 'the workers ran throughout');
      } finally {
        await d.exec(c.id, ['/bin/busybox', 'touch', '/tmp/stop']);
        const results = await Promise.all(loops);
        for (const r of results) assert.equal(r.code, 0, r.stderr);
        await d.exec(c.id, ['/bin/busybox', 'rm', '-f', '/tmp/stop']);
      }
    });
  });
}

describe('fanotify helper reader count (RTCTL_FANOTIFY_READERS)', function () {
  this.timeout(60000);

  for (const bad of ['x', '-1', '65', '2x', ' 2']) {
    it(`refuses ${JSON.stringify(bad)} with a clear error and exit code 2, before opening anything`, function () {
      const helper = requireNativeArtifact(this, NativeArtifact.fanotifyHelper);
      const dir = mkdtempSync(join(tmpdir(), 'rtctl-readers-bad-'));
      try {
        const r = spawnSync(helper, ['--socket', join(dir, 's.sock')], {
          env: { ...process.env, RTCTL_FANOTIFY_READERS: bad },
          encoding: 'utf8',
          timeout: 10000,
        });
        assert.equal(r.status, 2, r.stderr);
        assert.match(r.stderr, /RTCTL_FANOTIFY_READERS must be a count from 0 to 64/);
        assert.equal(existsSync(join(dir, 's.sock')), false, 'it never listened');
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });
  }

  it('runs one reader per CPU at most, whatever count is asked for', async function () {
    requirePrereqs(this, [[isRoot(), 'root (the helper opens a fanotify group)']]);
    const helper = requireNativeArtifact(this, NativeArtifact.fanotifyHelper);
    const dir = mkdtempSync(join(tmpdir(), 'rtctl-readers-count-'));
    const socket = join(dir, 's.sock');
    const child = spawn(helper, ['--socket', socket], {
      env: { ...process.env, RTCTL_FANOTIFY_READERS: '64' },
      stdio: 'ignore',
    });
    try {
      await waitUntil('the helper listens', () => existsSync(socket), 10000);
      const st = await helperStatus(socket);
      const cpus = cpuCount();
      assert.equal(st.readers, cpus < 2 ? 0 : Math.min(cpus, 64));
    } finally {
      await stopHelper(socket);
      child.kill();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
