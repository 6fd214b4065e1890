// BPF-LSM benchmark body, run inside the test guest by bench/enforcer/bpf-lsm.ts. The guest runs under qemu
// TCG (software emulation, no KVM): absolute times are meaningless and the host's load makes them swing, so
// the figures are ratios against the same loops with no programs attached, measured alternately in the same
// run, each side its best chunk (the least disturbed by the host). Under bpf-lsm.ts --icount the guest's
// clocks count guest instructions instead (RTCTL_BENCH_ICOUNT_SHIFT): the same loops then give
// instruction-count ratios that do not depend on the host (docs/bpf-lsm.md, "Instruction-counted"). Measures: open()+close() and exec loops in
// a workload with 1 000 rules loaded (`ratios.openClose`, `ratios.exec`; the same loops with the file_open
// decision cache off in `withoutDecisionCache`), UDP sends to an address through the socket_sendmsg hook with
// 200 address rules (`ratios.sendto`), policy-change-to-enforced latency with where the apply's time went,
// audit events per second with the drop counter, and the programs' own run time per call (`programs`:
// kernel.bpf_stats_enabled, measured apart from the timed rounds since it costs time itself). The floor: the
// open loop with only a no-op BPF-LSM program on file_open (enforcer/bpf/test-only/, never part of the plane)
// in `ratios.openCloseEmptyProgram`, and what rt_file_open adds above it in `programShare.openClose`.
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildRuleTableImage } from '../../compiler/rule-table/build-rule-table.js';
import type { RuleTableImage } from '../../compiler/rule-table/rule-table-records.js';
import { lowerDocuments } from '../../compiler/lower/lower.js';
import { lintTexts } from '../../compiler/lint.js';
import { BpfLsmPlane } from '../../enforcer/bpf/bpf-lsm-plane.js';
import type { DataPlaneEvent, Postures, WorkloadAnchor } from '../../enforcer/data-plane.js';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const OPENS = Number(process.env['RTCTL_BENCH_OPENS'] ?? '20000');
const EXECS = Number(process.env['RTCTL_BENCH_EXECS'] ?? '100');
const ROUNDS = Number(process.env['RTCTL_BENCH_ROUNDS'] ?? '4');
const CHUNKS = Number(process.env['RTCTL_BENCH_CHUNKS'] ?? '5');
const AUDITS = Number(process.env['RTCTL_BENCH_AUDITS'] ?? '5000');
const SENDS = Number(process.env['RTCTL_BENCH_SENDS'] ?? '20000');
const PROFILE_REPEATS = Number(process.env['RTCTL_BENCH_PROFILE_REPEATS'] ?? '3');
// Set by bench/enforcer/bpf-lsm.ts --icount: the guest's clocks count instructions (2^shift ns each).
const ICOUNT_SHIFT =
  process.env['RTCTL_BENCH_ICOUNT_SHIFT'] === undefined
    ? undefined
    : Number(process.env['RTCTL_BENCH_ICOUNT_SHIFT']);
// The exec loop's binary. Under icount a static one (busybox's `true` applet, copied to tmpfs): a dynamic
// binary's exec opens ld.so and libc on the host's root (9p), and while the guest waits for the host the
// virtual clock jumps to the next timer (sleep=off), which put 1.3x between the baseline's own rounds.
const EXEC_BINARY = ICOUNT_SHIFT === undefined ? '/usr/bin/true' : '/bin/busybox';
const POSTURES: Postures = { file: 'audit', network: 'audit', capabilities: 'audit' };

function tableOf(rules: number, extra: string): RuleTableImage {
  const paths = Array.from({ length: rules }, (_, i) => `      - path: /srv/bench/d${i % 50}/f${i}\n`).join(
    '',
  );
  const dirs = Array.from(
    { length: 20 },
    (_, i) => `      - dir: /tmp/b/n${i}/\n        recursive: true\n`,
  ).join('');
  // 200 address blocks (10.<i>.<j>.0/24) and an Allow for loopback: a send to 127.0.0.1 walks the trie's
  // answer and is decided by the Allow, without an event.
  const blocks = [
    ...Array.from({ length: 200 }, (_, i) => `      - cidr: 10.${i >> 4}.${i & 15}.0/24\n`),
    '      - cidr: 127.0.0.0/8\n        action: Allow\n',
  ].join('');
  const text = `apiVersion: security.runtime.com/v1
kind: RuntimePolicy
metadata: { name: bench, namespace: bench }
spec:
  selector: { matchLabels: { app: bench } }
  file:
    matchPaths:
${paths}    matchDirectories:
${dirs}  network:
    matchAddresses:
${blocks}  action: Block
${extra}`;
  const lint = lintTexts([{ file: 'bench.yaml', text }]);
  return buildRuleTableImage(lowerDocuments(lint.documents));
}

function median(xs: readonly number[]): number {
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? 0;
}

function runIn(pid: number, shell: string, command: string): string {
  return execFileSync('nsenter', ['-t', String(pid), '-m', '--', shell, '-c', command], {
    encoding: 'utf8',
  });
}

/** Microseconds per open()+close() on one file: the best of CHUNKS chunks of OPENS/CHUNKS, timed in the
 * workload by node itself. */
function measureOpens(pid: number): number {
  const n = Math.max(1, Math.round(OPENS / CHUNKS));
  const script = `const fs=require('fs');let best=Infinity;for(let c=0;c<${CHUNKS};c++){const t=process.hrtime.bigint();for(let i=0;i<${n};i++){fs.closeSync(fs.openSync('/tmp/b/file','r'))}best=Math.min(best,Number(process.hrtime.bigint()-t)/1e3/${n})}console.log(best)`;
  return Number(runIn(pid, '/bin/sh', `node -e ${JSON.stringify(script)}`).trim());
}

/** Microseconds per fork+exec of a small binary: the best of CHUNKS chunks of EXECS/CHUNKS, timed by bash's
 * clock variable (no process started for the timing), an empty loop's time subtracted. */
function measureExecs(pid: number): number {
  const n = Math.max(1, Math.round(EXECS / CHUNKS));
  const out = runIn(
    pid,
    '/bin/bash',
    `for c in $(seq ${CHUNKS}); do s=$EPOCHREALTIME; i=0; while [ $i -lt 0 ]; do /tmp/b/true; i=$((i+1)); done; m=$EPOCHREALTIME; i=0; while [ $i -lt ${n} ]; do /tmp/b/true; i=$((i+1)); done; e=$EPOCHREALTIME; echo "$s $m $e"; done`,
  );
  let best = Infinity;
  for (const line of out.trim().split('\n')) {
    const [s, m, e] = line.split(' ').map((x) => Number(x.replace(',', '.')) * 1e6);
    if (s === undefined || m === undefined || e === undefined) continue;
    best = Math.min(best, (e - m - (m - s)) / n);
  }
  if (!Number.isFinite(best)) throw new Error(`exec loop printed no timing: ${out}`);
  return best;
}

interface ProgramRun {
  runCnt: number;
  runTimeNs: number;
  nsPerRun: number;
}

interface ProfiledRun extends ProgramRun {
  nsPerRunSamples: number[];
}

/** run_cnt and run_time_ns of every rt_* BPF program loaded now (bpftool; needs kernel.bpf_stats_enabled). */
function programRuns(): Record<string, ProgramRun> {
  const list = JSON.parse(execFileSync('bpftool', ['-j', 'prog', 'show'], { encoding: 'utf8' })) as {
    name?: string;
    run_cnt?: number;
    run_time_ns?: number;
  }[];
  const out: Record<string, ProgramRun> = {};
  for (const p of list) {
    if (p.name === undefined || !p.name.startsWith('rt_')) continue;
    const runCnt = p.run_cnt ?? 0;
    const runTimeNs = p.run_time_ns ?? 0;
    out[p.name] = { runCnt, runTimeNs, nsPerRun: runCnt > 0 ? Math.round(runTimeNs / runCnt) : 0 };
  }
  return out;
}

function setBpfStats(on: boolean): void {
  writeFileSync('/proc/sys/kernel/bpf_stats_enabled', on ? '1' : '0');
}

/** Microseconds per UDP sendto() to 127.0.0.1:9 (the guest's loopback; nothing listens): the best of
 * CHUNKS chunks of SENDS/CHUNKS, timed in the workload by python (its loop cost is in both sides). */
function measureSends(pid: number): number {
  const n = Math.max(1, Math.round(SENDS / CHUNKS));
  const script = `import socket, time
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
best = float("inf")
for c in range(${CHUNKS}):
    t = time.perf_counter_ns()
    for i in range(${n}):
        s.sendto(b"x", ("127.0.0.1", 9))
    best = min(best, (time.perf_counter_ns() - t) / 1e3 / ${n})
print(best)`;
  writeFileSync('/tmp/b/send.py', script);
  return Number(runIn(pid, '/bin/sh', 'python3 /tmp/b/send.py').trim());
}

async function main(): Promise<void> {
  mkdirSync('/tmp/b/n0', { recursive: true });
  writeFileSync('/tmp/b/file', 'x');
  writeFileSync('/tmp/b/audited', 'x');
  copyFileSync(EXEC_BINARY, '/tmp/b/true');
  copyFileSync('/usr/bin/true', '/tmp/b/newly-blocked');
  const sleeper = spawnSync(
    'sh',
    ['-c', 'unshare --mount --propagation private sleep 3600 >/dev/null 2>&1 & echo $!'],
    { encoding: 'utf8' },
  );
  const pid = Number(sleeper.stdout.trim());
  spawnSync('sleep', ['1']);
  const anchor: WorkloadAnchor = { key: 'bench', host: false, pid, cgroupPath: '' };

  // Alternating rounds (machine noise is large under TCG): the loops with no programs attached, then with
  // the plane loaded and 1 000 rules applied to the workload; each side's best round is compared.
  const loaderPath = path.join(repoRoot, 'dist/native/bpf/rtctl-bpf-loader');
  const pinDir = `/sys/fs/bpf/rtctl-bench-${process.pid}`;
  const table1000 = tableOf(1000, '');
  const base = { opens: [] as number[], execs: [] as number[], sends: [] as number[] };
  const bpf = { opens: [] as number[], execs: [] as number[], sends: [] as number[] };
  const bpfNoCache = { opens: [] as number[], execs: [] as number[] };
  const empty = { opens: [] as number[] };
  let cacheHits = 0;
  let decisions = 0;
  // The same counters over the open loops alone (the totals above include the exec and send loops' decisions).
  let openCacheHits = 0;
  let openDecisions = 0;
  const withPlane = async <T>(
    decisionCache: boolean,
    body: (p: BpfLsmPlane) => T | Promise<T>,
  ): Promise<T> => {
    const p = new BpfLsmPlane({ loaderPath, pinDir, decisionCache });
    await p.start();
    await p.apply({
      generation: 1,
      table: table1000,
      workloads: [{ anchor, policies: [0], postures: POSTURES }],
    });
    try {
      return await body(p);
    } finally {
      await p.stop({ keepEnforcing: false });
    }
  };
  // A no-op BPF-LSM program on file_open, attached by a test-only attacher for as long as its stdin is open.
  const noopDir = path.join(repoRoot, 'dist/native/bpf/test-only');
  const withEmptyProgram = async <T>(body: () => T): Promise<T> => {
    const child = spawn(
      path.join(noopDir, 'rtctl-noop-attach'),
      [path.join(noopDir, 'rtctl-noop-lsm.bpf.o')],
      {
        stdio: ['pipe', 'pipe', 'pipe'],
      },
    );
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    await new Promise<void>((resolve, reject) => {
      let out = '';
      child.stdout.on('data', (d: Buffer) => {
        out += d.toString();
        if (out.includes('attached')) resolve();
      });
      void exited.then((code) => reject(new Error(`no-op attacher exited ${code}: ${stderr}`)));
    });
    try {
      return body();
    } finally {
      child.stdin.end();
      await exited;
    }
  };
  const statsWas = readFileSync('/proc/sys/kernel/bpf_stats_enabled', 'utf8').trim();
  setBpfStats(false);
  measureOpens(pid);
  measureExecs(pid);
  measureSends(pid);
  for (let round = 0; round < ROUNDS; round++) {
    base.opens.push(measureOpens(pid));
    base.execs.push(measureExecs(pid));
    base.sends.push(measureSends(pid));
    await withPlane(true, async (p) => {
      const s0 = await p.stats();
      bpf.opens.push(measureOpens(pid));
      const s1 = await p.stats();
      openCacheHits += s1.cacheHits - s0.cacheHits;
      openDecisions += s1.decisions - s0.decisions;
      bpf.execs.push(measureExecs(pid));
      bpf.sends.push(measureSends(pid));
      const st = await p.stats();
      cacheHits += st.cacheHits;
      decisions += st.decisions;
    });
    await withPlane(false, () => {
      bpfNoCache.opens.push(measureOpens(pid));
      bpfNoCache.execs.push(measureExecs(pid));
    });
    await withEmptyProgram(() => {
      empty.opens.push(measureOpens(pid));
    });
  }
  const best = (xs: readonly number[]): number => Math.min(...xs);

  // The programs' own time per call, with and without the decision cache (bpf_stats costs two clock reads per
  // run, so it is on only here, never during the timed rounds).
  // Each is repeated PROFILE_REPEATS times and each program keeps its least time per run (the host preempting
  // the emulator inflates single samples; every sample is in nsPerRunSamples).
  const profileRuns = (body: () => void): Record<string, ProfiledRun> => {
    setBpfStats(true);
    try {
      const out: Record<string, ProfiledRun> = {};
      for (let i = 0; i < PROFILE_REPEATS; i++) {
        const before = programRuns();
        body();
        for (const [name, a] of Object.entries(programRuns())) {
          const runCnt = a.runCnt - (before[name]?.runCnt ?? 0);
          const runTimeNs = a.runTimeNs - (before[name]?.runTimeNs ?? 0);
          if (runCnt <= 0) continue;
          const ns = Math.round(runTimeNs / runCnt);
          const o = (out[name] ??= { runCnt: 0, runTimeNs: 0, nsPerRun: ns, nsPerRunSamples: [] });
          o.runCnt += runCnt;
          o.runTimeNs += runTimeNs;
          o.nsPerRun = Math.min(o.nsPerRun, ns);
          o.nsPerRunSamples.push(ns);
        }
      }
      return out;
    } finally {
      setBpfStats(false);
    }
  };
  const profile = async (decisionCache: boolean): Promise<Record<string, ProfiledRun>> =>
    withPlane(decisionCache, () =>
      profileRuns(() => {
        measureOpens(pid);
        measureExecs(pid);
      }),
    );
  const programs = {
    withDecisionCache: await profile(true),
    withoutDecisionCache: await profile(false),
    emptyProgram: await withEmptyProgram(() => profileRuns(() => void measureOpens(pid))),
    // The send loop alone, with the plane (the two above cover the open and exec loops only).
    sendLoop: await withPlane(true, () => profileRuns(() => void measureSends(pid))),
  };
  setBpfStats(statsWas === '1');

  const plane = new BpfLsmPlane({ loaderPath, pinDir });
  await plane.start();
  const events: DataPlaneEvent[] = [];
  const reader = (async () => {
    for await (const e of plane.events()) events.push(e);
  })();
  await plane.apply({
    generation: 1,
    table: table1000,
    workloads: [{ anchor, policies: [0], postures: POSTURES }],
  });

  // Policy change to enforced: apply() resolves after the slot flip; the next exec must be denied.
  const blocking = tableOf(
    1000,
    `---
apiVersion: security.runtime.com/v1
kind: RuntimePolicy
metadata: { name: bench-new, namespace: bench }
spec:
  selector: { matchLabels: { app: bench } }
  process:
    matchPaths:
      - path: /tmp/b/newly-blocked
  file:
    matchPaths:
      - path: /tmp/b/audited
        action: Audit
  action: Block
`,
  );
  const t0 = process.hrtime.bigint();
  await plane.apply({
    generation: 2,
    table: blocking,
    workloads: [{ anchor, policies: [0, 1], postures: POSTURES }],
  });
  const applyMs = Number(process.hrtime.bigint() - t0) / 1e6;
  const applyTimings = plane.applyTimings;
  const denied = runIn(pid, '/bin/sh', '/tmp/b/newly-blocked 2>/dev/null; echo $?').trim() === '126';

  // Audit events: every open of the audited file is reported; none may be lost silently.
  const before = events.length;
  const a0 = process.hrtime.bigint();
  const script = `const fs=require('fs');for(let i=0;i<${AUDITS};i++){fs.closeSync(fs.openSync('/tmp/b/audited','r'))}`;
  runIn(pid, '/bin/sh', `node -e ${JSON.stringify(script)}`);
  const deadline = Date.now() + 30_000;
  while (events.filter((e) => e.resource === '/tmp/b/audited').length < AUDITS && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 100));
  }
  const auditSeconds = Number(process.hrtime.bigint() - a0) / 1e9;
  const received = events.slice(before).filter((e) => e.resource === '/tmp/b/audited').length;
  const stats = await plane.stats();
  await plane.stop({ keepEnforcing: false });
  await reader;
  spawnSync('kill', [String(pid)]);

  const round3 = (x: number): number => +x.toFixed(3);
  const result = {
    bench: 'enforcer-bpf-lsm',
    environment:
      ICOUNT_SHIFT === undefined
        ? {
            accelerator: 'tcg',
            kernel: execFileSync('uname', ['-r'], { encoding: 'utf8' }).trim(),
            note: 'qemu TCG software emulation (no KVM), Debian 6.1 guest kernel with BPF-LSM: absolute times are meaningless and swing with the host load; compare the ratios, each side the best of alternating rounds',
          }
        : {
            accelerator: 'tcg,thread=single',
            icount: `shift=${ICOUNT_SHIFT},sleep=off,align=off`,
            kernel: execFileSync('uname', ['-r'], { encoding: 'utf8' }).trim(),
            note: `qemu TCG with instruction counting: the guest's clocks advance ${2 ** ICOUNT_SHIFT} ns per guest instruction, so every time here (programs' nsPerRun too) is an instruction count and every ratio an instruction-count ratio, independent of the host's load; it does not see cache, TLB or branch-prediction effects (every instruction costs the same)`,
          },
    rules: 1000,
    rounds: ROUNDS,
    chunks: CHUNKS,
    ratios: {
      openClose: round3(best(bpf.opens) / best(base.opens)),
      exec: round3(best(bpf.execs) / best(base.execs)),
      sendto: round3(best(bpf.sends) / best(base.sends)),
      // The open loop with only a no-op BPF-LSM program on file_open: the hook dispatch's own cost, the floor.
      openCloseEmptyProgram: round3(best(empty.opens) / best(base.opens)),
    },
    // What rt_file_open adds above that floor, as a share of the baseline: (withProgram - withEmpty) / baseline.
    programShare: {
      openClose: round3((best(bpf.opens) - best(empty.opens)) / best(base.opens)),
      medianOpenClose: round3((median(bpf.opens) - median(empty.opens)) / median(base.opens)),
    },
    // How far apart the baseline's own rounds are (best ÷ worst ≥ 1): a ratio closer to 1 than this spread
    // cannot be told from the emulator's noise in this run.
    baselineSpread: {
      openClose: round3(Math.max(...base.opens) / best(base.opens)),
      exec: round3(Math.max(...base.execs) / best(base.execs)),
      sendto: round3(Math.max(...base.sends) / best(base.sends)),
    },
    medianRatios: {
      openClose: round3(median(bpf.opens) / median(base.opens)),
      exec: round3(median(bpf.execs) / median(base.execs)),
      sendto: round3(median(bpf.sends) / median(base.sends)),
      openCloseEmptyProgram: round3(median(empty.opens) / median(base.opens)),
    },
    // The same loops with the file_open decision cache off (what every open cost before it).
    withoutDecisionCache: {
      openClose: round3(best(bpfNoCache.opens) / best(base.opens)),
      exec: round3(best(bpfNoCache.execs) / best(base.execs)),
      medianOpenClose: round3(median(bpfNoCache.opens) / median(base.opens)),
      bpfMicros: { openClose: bpfNoCache.opens.map(round3), exec: bpfNoCache.execs.map(round3) },
    },
    // decisions/cacheHits: every decision of the timed rounds (opens, execs and sends); openLoops: those of the
    // open loops alone (node's start-up opens included), where every repeated open should hit.
    decisionCache: {
      decisions,
      cacheHits,
      openLoops: { decisions: openDecisions, cacheHits: openCacheHits },
    },
    // run_cnt/run_time_ns per rt_* program (kernel.bpf_stats_enabled) over an open loop and an exec loop, repeated:
    // nsPerRun is the least of the repetitions' (nsPerRunSamples); emptyProgram: the no-op file_open program;
    // sendLoop: the send loop's programs.
    programs,
    openClose: {
      iterations: OPENS,
      baselineMicros: base.opens.map(round3),
      bpfMicros: bpf.opens.map(round3),
      emptyProgramMicros: empty.opens.map(round3),
    },
    exec: {
      iterations: EXECS,
      binary: EXEC_BINARY,
      baselineMicros: base.execs.map(round3),
      bpfMicros: bpf.execs.map(round3),
    },
    sendto: {
      iterations: SENDS,
      addressRules: 201,
      baselineMicros: base.sends.map(round3),
      bpfMicros: bpf.sends.map(round3),
    },
    policyChange: {
      applyMs: +applyMs.toFixed(1),
      deniedRightAfter: denied,
      phasesMs:
        applyTimings === undefined
          ? null
          : {
              encode: round3(applyTimings.encodeMs),
              serialize: round3(applyTimings.serializeMs),
              requestBytes: applyTimings.requestBytes,
              loaderRoundTrip: round3(applyTimings.loaderRoundTripMs),
              loader: Object.fromEntries(Object.entries(applyTimings.loader).map(([k, v]) => [k, round3(v)])),
            },
    },
    auditEvents: {
      opens: AUDITS,
      received,
      perSecond: Math.round(received / auditSeconds),
      dropped: stats.dropped,
      unreportedLoss: AUDITS - received - stats.dropped,
    },
    // For comparison (docs/bpf-lsm.md "Benchmark"): KubeArmor's maintainers give 1-8 % overhead for its BPF-LSM
    // enforcer (kubearmor/KubeArmor#1639), measured as application throughput of a microservice demo, not
    // per system call: a loop of opens or execs is the worst case of the same cost.
    kubeArmorOverheadPercent: {
      min: 1,
      max: 8,
      source: 'kubearmor/KubeArmor#1639',
      measure: 'application throughput',
    },
  };
  process.stdout.write(`${JSON.stringify(result)}\n`);
}

await main();
