// Benchmark of the fanotify helper's CPU per reported event, A/B in one run, printing JSON: an Audit rule on
// /data/ in a real container (containerd + runc + busybox), `--alert-generators` shell loops (default 4)
// opening /data/hello.txt, every open reported and read by a data-plane client that acknowledges it. Each
// variant runs its own helper; the variants alternate round by round so that load from elsewhere hits them
// alike, and the figures are per round and their medians:
//  - helperCpuMicrosPerEvent: the helper's CPU (user + system of all its threads, from schedstat: ns, not
//    clock ticks) over the flood, per event;
//  - helperContextSwitchesPerEvent: the helper's context switches (voluntary and not, all threads);
//  - generatorCpuMicrosPerEvent: the loops' CPU (their container's cgroup) per event, which includes the
//    kernel's permission round trip and the wake-ups of loops whose answer had not come yet;
//  - perSecond: events received by the client per second of the flood;
//  - ratio: each variant's median CPU per event ÷ the first variant's.
// Variants: `current` (the built helper), `noLinkFds` (the same, RTCTL_FANOTIFY_NO_LINK_FDS=1: every /proc
// link read by name), `answerEach` (RTCTL_FANOTIFY_ANSWER_CHUNK=1: each event answered as soon as it is
// decided, not by chunk), `readers` (RTCTL_FANOTIFY_READERS=2), and `baseline` and `baselineReaders` when
// `--baseline-helper PATH` names another build (e.g. main's) to compare against.
// Run as root: `node --import tsx bench/enforcer/helper-cost.ts [--out FILE] [--rounds N] [--events N]
// [--alert-generators N] [--baseline-helper PATH]`.
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { pino } from 'pino';
import { lintTexts } from '../../compiler/lint.js';
import type { DataPlane } from '../../enforcer/data-plane.js';
import { createFanotifyPlane } from '../../enforcer/fanotify/fanotify-plane.js';
import { NativeArtifact, locateNativeArtifact } from '../../enforcer/io/native-tools.js';
import { buildNodeState } from '../../enforcer/node-state.js';
import { describeContainer } from '../../enforcer/workload.js';
import { startContainerd, type Containerd } from '../../test/enforcer/support/containerd.js';
import { stopHelper } from '../../test/enforcer/support/enforcer-process.js';
import { machineCosts } from '../support/machine-costs.js';
import { printResult } from '../support/measure.js';

const FILE = '/data/hello.txt';
const AUDIT =
  'apiVersion: security.runtime.com/v1\nkind: RuntimePolicy\nmetadata:\n  name: audit-data\n  namespace: bench\nspec:\n  selector:\n    matchLabels:\n      app: bench\n  file:\n    matchDirectories:\n    - dir: /data/\n  action: Audit\n';

interface Variant {
  name: string;
  helperPath: string;
  env: Record<string, string>;
}

function argValue(name: string): string | undefined {
  const i = process.argv.indexOf(name);
  return i > 0 ? process.argv[i + 1] : undefined;
}

function intArg(name: string, fallback: number, max: number): number {
  const v = Number(argValue(name) ?? fallback);
  if (!Number.isInteger(v) || v < 1 || v > max) throw new Error(`${name} takes 1 to ${max}`);
  return v;
}

/** CPU time of every thread of a process so far, ns (schedstat's first field: time on a CPU). */
function processCpuNanos(pid: number): number {
  let sum = 0;
  for (const t of readdirSync(`/proc/${pid}/task`))
    sum += Number(readFileSync(`/proc/${pid}/task/${t}/schedstat`, 'utf8').split(' ')[0]);
  return sum;
}

/** Context switches (voluntary and not) of every thread of a process so far. */
function processSwitches(pid: number): number {
  let sum = 0;
  for (const t of readdirSync(`/proc/${pid}/task`)) {
    const status = readFileSync(`/proc/${pid}/task/${t}/status`, 'utf8');
    for (const m of status.matchAll(/^(?:non)?voluntary_ctxt_switches:\s+(\d+)$/gm)) sum += Number(m[1]);
  }
  return sum;
}

/** CPU time used so far by the processes of the container's cgroup (the loops), µs (cgroup v2 or v1). */
function containerCpuMicros(pid: number): number {
  const lines = readFileSync(`/proc/${pid}/cgroup`, 'utf8').split('\n');
  const v1 = lines.map((l) => l.split(':')).find((f) => f[1]?.split(',').includes('cpuacct'));
  if (v1?.[2] !== undefined)
    return Number(readFileSync(join('/sys/fs/cgroup/cpuacct', v1[2], 'cpuacct.usage'), 'utf8').trim()) / 1000;
  const v2 = lines.find((l) => l.startsWith('0::'));
  if (v2 === undefined) return NaN;
  const root = existsSync('/sys/fs/cgroup/unified/cgroup.procs')
    ? '/sys/fs/cgroup/unified'
    : '/sys/fs/cgroup';
  const m = /^usage_usec (\d+)$/m.exec(readFileSync(join(root, v2.slice(3), 'cpu.stat'), 'utf8'));
  return m?.[1] ? Number(m[1]) : NaN;
}

/** The pid of the helper listening on `socketPath` (from the processes' command lines). */
function helperPidOf(socketPath: string): number {
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      if (readFileSync(`/proc/${d}/cmdline`, 'utf8').split('\0').includes(socketPath)) return Number(d);
    } catch {
      // gone
    }
  }
  throw new Error(`no helper on ${socketPath}`);
}

function floodScript(total: number, loops: number): string {
  const per = Math.ceil(total / loops);
  const loop = `i=0; while [ $i -lt ${per} ]; do : < ${FILE}; i=$((i+1)); done`;
  return `${Array.from({ length: loops }, () => `( ${loop} ) &`).join(' ')} wait`;
}

function median(values: readonly number[]): number {
  const s = [...values].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? (s[m] ?? NaN) : ((s[m - 1] ?? NaN) + (s[m] ?? NaN)) / 2;
}

async function round(
  cd: Containerd,
  containerId: string,
  containerPid: number,
  state: Parameters<DataPlane['apply']>[0],
  work: string,
  v: Variant,
  events: number,
  loops: number,
): Promise<{
  cpuMicrosPerEvent: number;
  switchesPerEvent: number;
  generatorCpuMicrosPerEvent: number;
  perSecond: number;
  received: number;
  dropped: number;
}> {
  const saved = { ...process.env };
  Object.assign(process.env, v.env);
  const socket = join(work, `${v.name}.sock`);
  const plane = createFanotifyPlane({
    helperPath: v.helperPath,
    socketPath: socket,
    helperLogPath: join(work, `${v.name}.log`),
    logger: pino({ level: 'warn' }, pino.destination(2)),
  });
  try {
    await plane.start();
  } finally {
    process.env = saved;
  }
  try {
    await plane.apply(state);
    let received = 0;
    let lastAt = 0n;
    const consumer = (async () => {
      for await (const e of plane.events()) {
        if (e.resource === FILE) {
          received++;
          lastAt = process.hrtime.bigint();
        }
        if (e.seq !== undefined) plane.acknowledge?.(e.seq);
      }
    })();
    // Warm-up: the loops' processes are new each time, the helper's caches and buffers are not.
    const warm = 400;
    const r0 = await cd.exec(containerId, ['/bin/sh', '-c', floodScript(warm, loops)]);
    if (r0.code !== 0) throw new Error(`flood failed: ${r0.stderr}`);
    const warmDeadline = Date.now() + 30000;
    while (received < warm && Date.now() < warmDeadline) await sleep(10);
    const pid = helperPidOf(socket);
    const before = received;
    const cpu0 = processCpuNanos(pid);
    const switches0 = processSwitches(pid);
    const generator0 = containerCpuMicros(containerPid);
    const start = process.hrtime.bigint();
    const r = await cd.exec(containerId, ['/bin/sh', '-c', floodScript(events, loops)]);
    if (r.code !== 0) throw new Error(`flood failed: ${r.stderr}`);
    const deadline = Date.now() + 60000;
    while (received - before < events && Date.now() < deadline) await sleep(10);
    const cpu = processCpuNanos(pid) - cpu0;
    const switches = processSwitches(pid) - switches0;
    const generator = containerCpuMicros(containerPid) - generator0;
    const dropped = (await plane.stats()).dropped;
    void consumer;
    const n = received - before;
    return {
      cpuMicrosPerEvent: Math.round(cpu / n / 10) / 100,
      switchesPerEvent: Math.round((switches / n) * 1000) / 1000,
      generatorCpuMicrosPerEvent: Math.round((generator / n) * 100) / 100,
      perSecond: Math.round((received - before) / (Number(lastAt - start) / 1e9)),
      received: received - before,
      dropped,
    };
  } finally {
    await plane.stop({ keepEnforcing: false });
    await stopHelper(socket);
  }
}

async function main(): Promise<void> {
  const out = argValue('--out');
  const rounds = intArg('--rounds', 3, 50);
  const events = intArg('--events', 20000, 1_000_000);
  const loops = intArg('--alert-generators', 4, 64);
  const helper = locateNativeArtifact(NativeArtifact.fanotifyHelper);
  if (!helper.ok) throw new Error(helper.error);
  const variants: Variant[] = [];
  const baseline = argValue('--baseline-helper');
  if (baseline) variants.push({ name: 'baseline', helperPath: baseline, env: {} });
  variants.push({ name: 'current', helperPath: helper.path, env: {} });
  variants.push({ name: 'noLinkFds', helperPath: helper.path, env: { RTCTL_FANOTIFY_NO_LINK_FDS: '1' } });
  variants.push({ name: 'answerEach', helperPath: helper.path, env: { RTCTL_FANOTIFY_ANSWER_CHUNK: '1' } });
  variants.push({ name: 'readers', helperPath: helper.path, env: { RTCTL_FANOTIFY_READERS: '2' } });
  if (baseline)
    variants.push({ name: 'baselineReaders', helperPath: baseline, env: { RTCTL_FANOTIFY_READERS: '2' } });
  const loadAtStart = loadavg();
  // Measured before the rounds load the machine (bench/support/machine-costs.ts).
  const machine = machineCosts();
  const work = mkdtempSync(join(tmpdir(), 'rtctl-helper-cost-'));
  const cd = await startContainerd();
  try {
    const c = await cd.runContainer({
      id: 'helper-cost',
      pod: 'helper-cost-1',
      namespace: 'bench',
      container: 'bench',
      labels: { app: 'bench' },
    });
    const workload = describeContainer({
      id: c.id,
      labels: { app: 'bench', 'io.kubernetes.pod.namespace': 'bench' },
      image: '',
      pid: c.pid,
      cgroupPath: '',
    });
    const audit = lintTexts([{ file: 'audit.yaml', text: AUDIT }]);
    const state = buildNodeState(
      { ruleSet: audit.ruleSet, workloads: [workload], postures: new Map(), nodeLabels: {} },
      1,
    ).state;
    const samples = new Map<
      string,
      { cpu: number[]; switches: number[]; generator: number[]; perSecond: number[]; lost: number }
    >(variants.map((v) => [v.name, { cpu: [], switches: [], generator: [], perSecond: [], lost: 0 }]));
    for (let i = 0; i < rounds; i++) {
      for (const v of variants) {
        const r = await round(cd, c.id, c.pid, state, work, v, events, loops);
        const s = samples.get(v.name);
        if (!s) continue;
        s.cpu.push(r.cpuMicrosPerEvent);
        s.switches.push(r.switchesPerEvent);
        s.generator.push(r.generatorCpuMicrosPerEvent);
        s.perSecond.push(r.perSecond);
        s.lost += events - r.received - r.dropped;
      }
    }
    const first = median(samples.get(variants[0]?.name ?? '')?.cpu ?? []);
    const result = {
      benchmark: 'enforcer-helper-cost',
      date: new Date().toISOString(),
      loadAverage: { start: loadAtStart, end: loadavg() },
      machine,
      events,
      generators: loops,
      rounds,
      variants: Object.fromEntries(
        [...samples].map(([name, s]) => [
          name,
          {
            helperCpuMicrosPerEvent: median(s.cpu),
            helperCpuMicrosPerEventSamples: s.cpu,
            helperContextSwitchesPerEvent: median(s.switches),
            generatorCpuMicrosPerEvent: median(s.generator),
            generatorCpuMicrosPerEventSamples: s.generator,
            perSecond: median(s.perSecond),
            perSecondSamples: s.perSecond,
            unreportedLoss: s.lost,
            ratio: Math.round((median(s.cpu) / first) * 1000) / 1000,
          },
        ]),
      ),
    };
    printResult(result, out);
  } finally {
    await cd.stop();
    rmSync(work, { recursive: true, force: true });
  }
}

await main();
