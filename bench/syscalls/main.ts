// System call plane benchmark (root, real kernel): what `rts_sys_enter` costs the node's system calls. Every call
// of the node runs it, so the figures are per-call ratios against the same loop without the plane, measured in
// the same run: an unwatched call (one array lookup), a call some workload watches made outside any workload
// (the cgroup walk), and a watched call of a workload (reported on the ring buffer and decided by the control
// plane), with the events per second the control plane handled and the drop counter; and a watched call that
// sys_enter also decides in the kernel (a Block rule with a path and a source: the deny part's lookups of each
// `/`-prefix and of the executable; this kernel takes no LSM programs, so the plane writes the decision entries
// through its test seam and nothing is denied, but sys_enter does the same work as on a BPF-LSM node). Median of
// the rounds.
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, rmdirSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Action, type PolicyIR } from '../../compiler/ir/rule-set.js';
import { resolvePostures } from '../../compiler/model/posture.js';
import { buildRuleTableImage } from '../../compiler/rule-table/build-rule-table.js';
import { findCgroup2Mount } from '../../enforcer/network/network-plane.js';
import { getSyscallNumber } from '../../enforcer/syscalls/syscall-arguments.js';
import { SyscallPlane } from '../../enforcer/syscalls/syscall-plane.js';
import { SysVerdict } from '../../enforcer/syscalls/sys-map-layout.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '..', '..');
const CALLS = Number(process.env['RTCTL_BENCH_CALLS'] ?? '200000');
const ROUNDS = Number(process.env['RTCTL_BENCH_ROUNDS'] ?? '5');
const REPORTED = Number(process.env['RTCTL_BENCH_REPORTED'] ?? '5000');

function median(xs: readonly number[]): number {
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? 0;
}

function policy(block = false): PolicyIR {
  const decided = block
    ? {
        path: '/nonexistent/',
        recursive: true,
        fromSource: [{ kind: 'directory' as const, dir: '/tmp/', recursive: true }],
        action: Action.Block,
      }
    : {};
  return {
    kind: 'RuntimePolicy',
    name: 'bench',
    namespace: 'bench',
    target: { kind: 'pods', namespace: 'bench', matchLabels: {}, matchExpressions: [] },
    rules: [],
    syscallRules: [
      {
        syscalls: ['unlink', 'rmdir'],
        recursive: false,
        fromSource: [],
        action: Action.Audit,
        severity: 1,
        tags: [],
        message: '',
        location: { file: 'bench.yaml', line: 1, column: 1, pointer: '/spec/syscalls/matchSyscalls/0' },
        ...decided,
      },
    ],
    presets: [],
    dnsQueryRules: [],
    deviceRules: [],
    apparmor: '',
    location: { file: 'bench.yaml', line: 1, column: 1, pointer: '' },
  };
}

async function main(): Promise<void> {
  if (process.getuid?.() !== 0) throw new Error('needs root (BPF programs and cgroups)');
  const work = mkdtempSync(path.join(tmpdir(), 'rtctl-bench-sys-'));
  const loop = path.join(work, 'sys-loop');
  execFileSync('cc', ['-O2', '-o', loop, path.join(here, 'sys-loop.c')]);
  const bpffs = path.join(work, 'bpffs');
  mkdirSync(bpffs);
  execFileSync('mount', ['-t', 'bpf', 'bpf', bpffs]);
  const cgRoot = findCgroup2Mount();
  const cg = path.join(cgRoot, `rtctl-bench-sys-${process.pid}`);
  mkdirSync(cg);
  const getppid = String(getSyscallNumber('getppid'));
  const unlink = String(getSyscallNumber('unlink'));
  const run = (nr: string, count: number, inWorkload = false): number => {
    const argv = [loop, nr, String(count)].map((a) => `'${a}'`).join(' ');
    const r = spawnSync(
      'sh',
      ['-c', `${inWorkload ? `echo $$ > '${cg}/cgroup.procs' && ` : ''}exec ${argv}`],
      {
        encoding: 'utf8',
      },
    );
    return Number(r.stdout.trim()) / count;
  };
  let events = 0;
  let denyVerdicts = 0;
  const plane = new SyscallPlane({
    loaderPath: path.join(root, 'dist/native/syscalls/rtctl-sys-loader'),
    objectPath: path.join(root, 'dist/native/syscalls/rtctl-sys.bpf.o'),
    pinDir: path.join(bpffs, 'sys'),
    stateDir: work,
    cgroupRoot: cgRoot,
    decideWithoutLsm: true,
    onVerdict: (v) => {
      if (v.verdict === SysVerdict.deny) denyVerdicts++;
    },
  });
  try {
    await plane.start();
    void (async () => {
      for await (const e of plane.events()) if (e.operation === 'Syscall') events++;
    })();
    let generation = 0;
    const watch = async (on: boolean, block = false): Promise<void> =>
      plane.apply({
        generation: ++generation,
        table: buildRuleTableImage({ policies: on ? [policy(block)] : [] }),
        workloads: [
          {
            anchor: { key: 'bench', host: false, pid: 0, cgroupPath: cg.slice(cgRoot.length) },
            policies: on ? [0] : [],
            postures: resolvePostures({}),
          },
        ],
      });
    // Rounds alternate between the plane detached (no call watched: sys_enter is not attached) and attached, so
    // that a change of the machine's load falls on both sides.
    const base = { unwatched: [] as number[], watched: [] as number[] };
    const on = { unwatched: [] as number[], watchedElsewhere: [] as number[], reported: [] as number[] };
    for (let i = 0; i < ROUNDS; i++) {
      await watch(false);
      if (await plane.sysEnterAttached()) throw new Error('sys_enter attached without watched calls');
      base.unwatched.push(run(getppid, CALLS));
      base.watched.push(run(unlink, CALLS));
      await watch(true);
      on.unwatched.push(run(getppid, CALLS));
      on.watchedElsewhere.push(run(unlink, CALLS));
    }
    // A burst of watched calls in the workload: the ring buffer (4 MiB) takes what it can, the rest is
    // counted as dropped; the rate is what the control plane handled, from the burst's start to its last event.
    const rates: number[] = [];
    const drops: number[] = [];
    for (let i = 0; i < ROUNDS; i++) {
      const before = events;
      const s0 = await plane.stats();
      const t = process.hrtime.bigint();
      on.reported.push(run(unlink, REPORTED, true));
      const s1 = await plane.stats();
      const expected = before + (s1.reported - s0.reported);
      const deadline = Date.now() + 60_000;
      while (events < expected && Date.now() < deadline) await new Promise((r) => setTimeout(r, 5));
      rates.push((events - before) / (Number(process.hrtime.bigint() - t) / 1e9));
      drops.push(s1.dropped - s0.dropped);
    }
    // The same burst, decided in the kernel as well (the loop runs from the work directory under /tmp: the
    // source matches, the path matches, the rule is Block).
    const decided: number[] = [];
    await watch(true, true);
    for (let i = 0; i < ROUNDS; i++) {
      const before = events;
      const s0 = await plane.stats();
      decided.push(run(unlink, REPORTED, true));
      const s1 = await plane.stats();
      const deadline = Date.now() + 60_000;
      while (events < before + (s1.reported - s0.reported) && Date.now() < deadline)
        await new Promise((r) => setTimeout(r, 5));
    }
    const stats = await plane.stats();
    const out = {
      bench: 'syscalls',
      calls: CALLS,
      rounds: ROUNDS,
      baselineNsPerCall: Math.round(median(base.unwatched) * 10) / 10,
      unwatchedRatio: Math.round((median(on.unwatched) / median(base.unwatched)) * 100) / 100,
      watchedOutsideWorkloadsRatio:
        Math.round((median(on.watchedElsewhere) / median(base.watched)) * 100) / 100,
      reportedRatio: Math.round((median(on.reported) / median(base.watched)) * 100) / 100,
      reportedEventsPerSec: Math.round(median(rates)),
      decidedRatio: Math.round((median(decided) / median(base.watched)) * 100) / 100,
      // Events of the decided bursts that sys_enter decided to deny (all of them, or the scenario is not measured).
      decidedDenyVerdicts: denyVerdicts,
      decidedOverReportedRatio: Math.round((median(decided) / median(on.reported)) * 100) / 100,
      burst: REPORTED,
      droppedPerBurst: median(drops),
      reported: stats.reported,
      dropped: stats.dropped,
      loadavg1: Math.round((loadavg()[0] ?? 0) * 100) / 100,
    };
    process.stdout.write(`${JSON.stringify(out)}\n`);
  } finally {
    await plane.stop({ keepEnforcing: false }).catch(() => undefined);
    rmdirSync(cg);
    execFileSync('umount', [bpffs]);
    rmSync(work, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  process.stdout.write(
    `${JSON.stringify({ bench: 'syscalls', error: err instanceof Error ? err.message : String(err) })}\n`,
  );
  process.exitCode = 1;
});
