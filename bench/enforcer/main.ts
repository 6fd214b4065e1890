// Benchmark of the fanotify data plane on a real container (containerd + runc + busybox), printing JSON:
//  - open()+close() and exec loops inside a container with 1 000 rules loaded, against the same loops with
//    no enforcer, in the same run (ratios): `openClose` opens a file of the container's writable root file
//    system, which no inode mark can serve (the workload could rename it to a ruled name); its directory,
//    a merged directory of the image's overlay that the workload cannot move, is marked after the first
//    "allow without alert" instead, and so is `/bin/` for `exec` (docs/enforcer.md "Directory ignore
//    marks"); `openCloseReadOnly` opens a file on a read-only mount, which the plane marks after its first
//    "allow without alert" (docs/enforcer.md "Ignore marks");
//  - policy-change-to-enforced latency through `rtctl enforcer run` over a policy directory: 20 changes, each
//    until a probe open in the container's mount gets the new answer (every sample, and the p99);
//  - alerts per second through the plane with an Audit rule, and the count of events lost unreported, from
//    `--alert-generators` shell loops side by side (default 4; one loop waits for each answer, so it measures
//    the round trip's latency rather than the pipeline); what the same loops reach with no enforcer
//    (alerts.generatorOnly), and the CPU per alert of the helper, the enforcer and the loops (their
//    container's cgroup), which depend less on other load than the rates;
//  - the enforcer's peak RSS (`rssMaxMB`, VmHWM reset just before the flood) under an alert flood through
//    `rtctl enforcer run` with 20 followers that never read their stream.
// Run as root: `node --import tsx bench/enforcer/main.ts [--out FILE] [--only ratios,policy,alerts]
// [--alert-generators N]`.
import {
  closeSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { connect, type Socket } from 'node:net';
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
import {
  startContainerd,
  type Containerd,
  type TestContainer,
} from '../../test/enforcer/support/containerd.js';
import { startEnforcer, getJson, stopHelper } from '../../test/enforcer/support/enforcer-process.js';
import { machineCosts } from '../support/machine-costs.js';
import { printResult } from '../support/measure.js';

const OPEN_LOOPS = 20000;
const EXEC_LOOPS = 1000;
const ALERT_LOOPS = 20000;
const ROUNDS = 5;
const POLICY_CHANGES = 20;
/**
 * Shell loops run side by side in the container for the alert flood (`--alert-generators N`, default 4):
 * one loop waits for the helper's answer to each of its opens, so one loop alone measures the round trip's
 * latency, not the pipeline's throughput (alerts.generatorOnly says what the loops reach with no enforcer).
 */
const ALERT_GENERATORS = 4;
/** Parts of the run (`--only ratios,policy,alerts`; default all): the flood runs in the enforcer of `policy`. */
const PARTS = ['ratios', 'policy', 'alerts'] as const;
type Part = (typeof PARTS)[number];

function argValue(name: string): string | undefined {
  const i = process.argv.indexOf(name);
  return i > 0 ? process.argv[i + 1] : undefined;
}

/** The parts asked for; throws on an unknown one. */
function partsOf(text: string | undefined): Set<Part> {
  if (text === undefined) return new Set(PARTS);
  const parts = text.split(',').filter((p) => p !== '');
  for (const p of parts)
    if (!(PARTS as readonly string[]).includes(p)) throw new Error(`--only: unknown part ${p}`);
  return new Set(parts as Part[]);
}

/** The flood's generator: `loops` shell loops side by side, `total` opens in all. */
function generatorScript(body: string, total: number, loops: number): string {
  const per = Math.ceil(total / loops);
  const loop = (n: number): string => `i=0; while [ $i -lt ${n} ]; do ${body}; i=$((i+1)); done`;
  if (loops <= 1) return loop(total);
  const parts: string[] = [];
  for (let k = 0; k < loops; k++) parts.push(`( ${loop(Math.min(per, total - k * per))} ) &`);
  return `${parts.join(' ')} wait`;
}

/** CPU time used so far by the processes of the container's cgroup, µs (cgroup v2 or v1 cpuacct). */
function containerCpuMicros(pid: number): number {
  const lines = readFileSync(`/proc/${pid}/cgroup`, 'utf8').split('\n');
  const v1 = lines.map((l) => l.split(':')).find((f) => f[1]?.split(',').includes('cpuacct'));
  if (v1?.[2] !== undefined) {
    const ns = readFileSync(join('/sys/fs/cgroup/cpuacct', v1[2], 'cpuacct.usage'), 'utf8');
    return Number(ns.trim()) / 1000;
  }
  const v2 = lines.find((l) => l.startsWith('0::'));
  if (v2 === undefined) return NaN;
  const root = statSafe('/sys/fs/cgroup/unified') ? '/sys/fs/cgroup/unified' : '/sys/fs/cgroup';
  const stat = readFileSync(join(root, v2.slice(3), 'cpu.stat'), 'utf8');
  const m = /^usage_usec (\d+)$/m.exec(stat);
  return m?.[1] ? Number(m[1]) : NaN;
}

/** The pid of the helper listening on `socketPath` (from the processes' command lines). */
function helperPidOf(socketPath: string): number | undefined {
  return readdirSync('/proc')
    .filter((d) => /^\d+$/.test(d))
    .map(Number)
    .find((p) => {
      try {
        return readFileSync(`/proc/${p}/cmdline`, 'utf8').split('\0').includes(socketPath);
      } catch {
        return false;
      }
    });
}

/**
 * The helper's reader thread count from its STATUS reply (0: its main loop reads the fanotify queue itself;
 * RTCTL_FANOTIFY_READERS sets it, docs/enforcer.md "Reader threads"); NaN when the helper does not say.
 */
async function helperReaders(socketPath: string): Promise<number> {
  return new Promise((resolve) => {
    const s = connect(socketPath);
    let text = '';
    const done = (n: number): void => {
      s.destroy();
      resolve(n);
    };
    s.setEncoding('utf8');
    s.on('connect', () => s.write('STATUS\n'));
    s.on('data', (d: string) => {
      text += d;
      const nl = text.indexOf('\n');
      if (nl < 0) return;
      const readers = (JSON.parse(text.slice(0, nl)) as { readers?: unknown }).readers;
      done(typeof readers === 'number' ? readers : NaN);
    });
    s.on('error', () => done(NaN));
  });
}

/** CPU time (user + system) of a process so far, µs, from /proc/<pid>/stat (clock ticks, USER_HZ 100). */
function processCpuMicros(pid: number | undefined): number {
  if (pid === undefined) return NaN;
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
  return ((Number(fields[11]) + Number(fields[12])) * 1e6) / 100;
}

function statSafe(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

function policyText(rules: number, extra = ''): string {
  const procs: string[] = [];
  const dirs: string[] = [];
  for (let i = 0; i < rules / 2; i++) {
    procs.push(`    - path: /opt/app${i}/bin/tool`);
    dirs.push(`    - dir: /srv/data${i}/\n      recursive: true`);
  }
  return [
    'apiVersion: security.runtime.com/v1',
    'kind: RuntimePolicy',
    'metadata:',
    '  name: bench-1000',
    '  namespace: bench',
    'spec:',
    '  selector:',
    '    matchLabels:',
    '      app: bench',
    '  process:',
    '    matchPaths:',
    ...procs,
    '  file:',
    '    matchDirectories:',
    ...dirs,
    '  action: Block',
    extra,
  ].join('\n');
}

/** Nearest-rank percentile. */
function percentile(values: readonly number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(p * sorted.length) - 1))] ?? NaN;
}

async function timeExec(cd: Containerd, id: string, script: string): Promise<number> {
  const start = process.hrtime.bigint();
  const r = await cd.exec(id, ['/bin/sh', '-c', script]);
  if (r.code !== 0) throw new Error(`bench loop failed: ${r.stderr}`);
  return Number(process.hrtime.bigint() - start) / 1e6;
}

/**
 * The best (least disturbed) times of one loop on one side, with N iterations and with none. The
 * per-iteration cost is (best t(N) - best t(0)) / N, the fixed cost of `ctr exec` subtracted: the best of
 * each, not the best difference, which one disturbed empty run could make negative.
 */
class LoopTimes {
  private full = Infinity;
  private empty = Infinity;
  constructor(private readonly n: number) {}

  async measure(cd: Containerd, id: string, body: string): Promise<void> {
    const loop = (count: number): string => `i=0; while [ $i -lt ${count} ]; do ${body}; i=$((i+1)); done`;
    this.empty = Math.min(this.empty, await timeExec(cd, id, loop(0)));
    this.full = Math.min(this.full, await timeExec(cd, id, loop(this.n)));
  }

  micros(): number {
    return ((this.full - this.empty) * 1000) / this.n;
  }
}

async function main(): Promise<void> {
  const out = argValue('--out');
  const parts = partsOf(argValue('--only'));
  const generators = Number(argValue('--alert-generators') ?? ALERT_GENERATORS);
  if (!Number.isInteger(generators) || generators < 1 || generators > 64)
    throw new Error('--alert-generators takes 1 to 64');
  const logger = pino({ level: 'warn' }, pino.destination(2));
  const work = mkdtempSync(join(tmpdir(), 'rtctl-bench-'));
  const loadAtStart = loadavg();
  // Measured first, before containerd and the flood load the machine.
  const machine = machineCosts();
  const cd = await startContainerd();
  let plane: DataPlane | undefined;
  try {
    const roDir = join(work, 'ro');
    mkdirSync(roDir);
    writeFileSync(join(roDir, 'hello.txt'), 'hello from a read-only mount\n');
    const c: TestContainer = await cd.runContainer({
      id: 'bench-c',
      pod: 'bench-1',
      namespace: 'bench',
      container: 'bench',
      labels: { app: 'bench' },
      mounts: [{ source: roDir, destination: '/ro' }],
    });
    const openBody = ': < /data/hello.txt';
    const openReadOnlyBody = ': < /ro/hello.txt';
    const execBody = '/bin/true';
    const floodScript = generatorScript(openBody, ALERT_LOOPS, generators);

    // 1 000 rules selecting the container, none matching the loops: every open and exec is decided.
    // Baseline and enforced runs alternate (the helper enforcing nothing vs the 1 000-rule state), best of
    // ROUNDS each, so that load from elsewhere on the machine hits both alike.
    const helper = locateNativeArtifact(NativeArtifact.fanotifyHelper);
    if (!helper.ok) throw new Error(helper.error);
    const socket = join(work, 'fan.sock');
    plane = createFanotifyPlane({
      helperPath: helper.path,
      socketPath: socket,
      helperLogPath: join(work, 'helper.log'),
      logger,
    });
    await plane.start();
    const readers = await helperReaders(socket);
    const lint = lintTexts([{ file: 'bench.yaml', text: policyText(1000) }]);
    const rules = lint.ruleSet.policies.reduce((n, p) => n + p.rules.length, 0);
    const workload = describeContainer({
      id: c.id,
      labels: { app: 'bench', 'io.kubernetes.pod.namespace': 'bench' },
      image: '',
      pid: c.pid,
      cgroupPath: '',
    });
    const node = buildNodeState(
      { ruleSet: lint.ruleSet, workloads: [workload], postures: new Map(), nodeLabels: {} },
      1,
    );
    const times = {
      baseline: {
        openClose: new LoopTimes(OPEN_LOOPS),
        openCloseReadOnly: new LoopTimes(OPEN_LOOPS),
        exec: new LoopTimes(EXEC_LOOPS),
      },
      enforced: {
        openClose: new LoopTimes(OPEN_LOOPS),
        openCloseReadOnly: new LoopTimes(OPEN_LOOPS),
        exec: new LoopTimes(EXEC_LOOPS),
      },
    };
    let applyMs = 0;
    let baselineDecisions = 0;
    let generation = 1;
    let enforcedDecisions = 0;
    let enforcedHits = 0;
    for (let round = 0; parts.has('ratios') && round < ROUNDS; round++) {
      await plane.apply({ generation: ++generation, table: node.state.table, workloads: [] });
      const b0 = await plane.stats();
      await times.baseline.openClose.measure(cd, c.id, openBody);
      await times.baseline.openCloseReadOnly.measure(cd, c.id, openReadOnlyBody);
      await times.baseline.exec.measure(cd, c.id, execBody);
      const b1 = await plane.stats();
      baselineDecisions += b1.decisions - b0.decisions;
      const applyStart = process.hrtime.bigint();
      await plane.apply({ ...node.state, generation: ++generation });
      applyMs = Math.max(applyMs, Number(process.hrtime.bigint() - applyStart) / 1e6);
      const e0 = await plane.stats();
      await times.enforced.openClose.measure(cd, c.id, openBody);
      await times.enforced.openCloseReadOnly.measure(cd, c.id, openReadOnlyBody);
      await times.enforced.exec.measure(cd, c.id, execBody);
      const e1 = await plane.stats();
      enforcedDecisions += e1.decisions - e0.decisions;
      enforcedHits += e1.cacheHits - e0.cacheHits;
    }
    const baseline = {
      openCloseMicros: times.baseline.openClose.micros(),
      openCloseReadOnlyMicros: times.baseline.openCloseReadOnly.micros(),
      execMicros: times.baseline.exec.micros(),
    };
    const enforced = {
      openCloseMicros: times.enforced.openClose.micros(),
      openCloseReadOnlyMicros: times.enforced.openCloseReadOnly.micros(),
      execMicros: times.enforced.exec.micros(),
    };

    // The generator alone: the flood's loops with no enforcer marking the container (the helper enforces
    // nothing), best of 3: what the loops reach by themselves, and their own CPU per open.
    const generatorOnly = { perSecond: NaN, cpuMicrosPerOpen: NaN, loops: generators };
    if (parts.has('alerts')) {
      await plane.apply({ generation: ++generation, table: node.state.table, workloads: [] });
      for (let round = 0; round < 3; round++) {
        const cpu0 = containerCpuMicros(c.pid);
        const ms = await timeExec(cd, c.id, floodScript);
        const cpu = (containerCpuMicros(c.pid) - cpu0) / ALERT_LOOPS;
        const perSecond = ALERT_LOOPS / (ms / 1000);
        if (!(perSecond < generatorOnly.perSecond)) generatorOnly.perSecond = perSecond;
        if (!(cpu > generatorOnly.cpuMicrosPerOpen)) generatorOnly.cpuMicrosPerOpen = cpu;
      }
    }

    // Alerts per second through the plane alone (helper → data-plane client): an Audit rule on /data/,
    // every open reported.
    const audit = lintTexts([
      {
        file: 'audit.yaml',
        text: 'apiVersion: security.runtime.com/v1\nkind: RuntimePolicy\nmetadata:\n  name: audit-data\n  namespace: bench\nspec:\n  selector:\n    matchLabels:\n      app: bench\n  file:\n    matchDirectories:\n    - dir: /data/\n  action: Audit\n',
      },
    ]);
    const auditNode = buildNodeState(
      { ruleSet: audit.ruleSet, workloads: [workload], postures: new Map(), nodeLabels: {} },
      2,
    );
    let received = 0;
    let alertSeconds = NaN;
    let planeDropped = 0;
    let planeHelperCpu = NaN;
    if (parts.has('alerts')) {
      await plane.apply({ ...auditNode.state, generation: ++generation });
      let lastAt = 0n;
      const p = plane;
      const consumer = (async () => {
        for await (const e of p.events()) {
          if (e.resource === '/data/hello.txt') {
            received++;
            lastAt = process.hrtime.bigint();
            if (e.seq !== undefined) p.acknowledge?.(e.seq);
            if (received >= ALERT_LOOPS) break;
          }
        }
      })();
      await sleep(200);
      const helperPid = helperPidOf(socket);
      const helperCpu0 = processCpuMicros(helperPid);
      const alertStart = process.hrtime.bigint();
      await timeExec(cd, c.id, floodScript);
      const deadline = Date.now() + 60000;
      while (received < ALERT_LOOPS && Date.now() < deadline) await sleep(50);
      planeHelperCpu = (processCpuMicros(helperPid) - helperCpu0) / ALERT_LOOPS;
      planeDropped = (await plane.stats()).dropped;
      alertSeconds = Number(lastAt - alertStart) / 1e9;
      void consumer;
    }
    await plane.stop({ keepEnforcing: false });
    plane = undefined;

    // Policy change to enforced, through the real enforcer process over a policy directory.
    const policyDir = join(work, 'policies');
    mkdirSync(policyDir);
    writeFileSync(join(policyDir, 'base.yaml'), policyText(1000));
    const stateDir = join(work, 'state');
    const alertLogPath = join(work, 'alerts.jsonl');
    const latencies: number[] = [];
    let rssMaxMB = NaN;
    let floodAlerts = 0;
    let rssBeforeFloodMB = NaN;
    let rssMaxMBBeforeFlood = NaN;
    const e2e = {
      seconds: NaN,
      wallSeconds: NaN,
      published: 0,
      logged: 0,
      helperDropped: 0,
      helperCpuMicrosPerAlert: NaN,
      enforcerCpuMicrosPerAlert: NaN,
      enforcerIdleCpuMicrosPerSecond: NaN,
      enforcerNetCpuMicrosPerAlert: NaN,
      generatorCpuMicrosPerAlert: NaN,
      loadAverage: [] as number[],
    };
    if (parts.has('policy') || parts.has('alerts')) {
      const enforcer = await startEnforcer([
        '--policy-dir',
        policyDir,
        '--data-plane',
        'fanotify',
        '--node-name',
        'bench-node',
        '--containerd-socket',
        cd.socket,
        '--state-dir',
        stateDir,
        '--alert-log',
        alertLogPath,
        '--poll-ms',
        '200',
      ]);
      try {
        await sleep(1500);
        // 20 changes, alternately adding a Block on a probe file and removing it. Each sample runs from the
        // write (or unlink) of the policy file until a probe open of that file in the container's mount
        // (through /proc/<pid>/root, the same marked mount) gets the new answer from the kernel.
        const probe = `/proc/${c.pid}/root/data/hello.txt`;
        const probeOpen = (): boolean => {
          try {
            closeSync(openSync(probe, 'r'));
            return true;
          } catch (err) {
            if ((err as NodeJS.ErrnoException).code === 'EPERM') return false;
            throw err;
          }
        };
        if (!probeOpen()) throw new Error('probe file denied before any change');
        for (let round = 0; parts.has('policy') && round < POLICY_CHANGES; round++) {
          const blocked = round % 2 === 0;
          const t0 = process.hrtime.bigint();
          if (blocked) {
            writeFileSync(
              join(policyDir, 'change.yaml'),
              `apiVersion: security.runtime.com/v1\nkind: RuntimePolicy\nmetadata:\n  name: change-${round}\n  namespace: bench\nspec:\n  selector:\n    matchLabels:\n      app: bench\n  file:\n    matchPaths:\n    - path: /data/hello.txt\n  action: Block\n`,
            );
          } else {
            rmSync(join(policyDir, 'change.yaml'));
          }
          const deadline = Date.now() + 10_000;
          while (probeOpen() === blocked) {
            if (Date.now() > deadline) throw new Error(`change ${round} not enforced within 10 s`);
            await sleep(1);
          }
          latencies.push(Number(process.hrtime.bigint() - t0) / 1e6);
          await sleep(100); // the enforcer settles (its own reload, the helper's answer) before the next change
        }
        if (parts.has('alerts')) {
          // Alert flood with 20 followers that never read: the enforcer's peak RSS.
          writeFileSync(
            join(policyDir, 'flood.yaml'),
            'apiVersion: security.runtime.com/v1\nkind: RuntimePolicy\nmetadata:\n  name: flood-audit\n  namespace: bench\nspec:\n  selector:\n    matchLabels:\n      app: bench\n  file:\n    matchDirectories:\n    - dir: /data/\n  action: Audit\n',
          );
          await sleep(1500);
          const { port } = new URL(enforcer.url);
          const followers: Socket[] = Array.from({ length: 20 }, () => {
            const s = connect(Number(port), '127.0.0.1');
            s.write('GET /alerts?after=0&follow=1 HTTP/1.1\r\nHost: x\r\n\r\n');
            s.pause();
            s.on('error', () => undefined);
            return s;
          });
          const pid = enforcer.child.pid ?? 0;
          const hwm = (): number => {
            const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
            return m?.[1] ? Number(m[1]) / 1024 : 0;
          };
          const published = async (): Promise<number> =>
            (await getJson<{ alerts: number }>(`${enforcer.url}/status`)).alerts;
          const before = await published();
          const rssBefore = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
          rssBeforeFloodMB = rssBefore?.[1] ? Number(rssBefore[1]) / 1024 : 0;
          // rssMaxMB is the peak under the flood: the high-water mark is reset to the current RSS here
          // (clear_refs 5), so the peaks of start-up and of the 20 policy changes above (their own measure) are
          // not counted; the whole run's peak so far is kept as flood.rssMaxMBBeforeFlood.
          rssMaxMBBeforeFlood = hwm();
          writeFileSync(`/proc/${pid}/clear_refs`, '5');
          const statusNow = (): Promise<{ alerts: number; stats: { dropped: number } }> =>
            getJson<{ alerts: number; stats: { dropped: number } }>(`${enforcer.url}/status`);
          const droppedBefore = (await statusNow()).stats.dropped;
          const loggedLines = (): number => {
            const text = readFileSync(alertLogPath, 'utf8');
            let n = 0;
            for (let i = text.indexOf('\n'); i !== -1; i = text.indexOf('\n', i + 1)) n++;
            return n;
          };
          const loggedBefore = loggedLines();
          // CPU time of the enforcer, of the helper and of the generator (the container's cgroup) over the
          // flood (user + system): per alert, figures that depend little on other load on the machine.
          const helperPid = helperPidOf(join(stateDir, 'fanotify.sock'));
          const cpuMicros = processCpuMicros;
          // What the enforcer spends with no alert in the same time: its container discovery (containerd's
          // event stream by default; --poll-ms 200 lists only while the stream is down) and the /status polls
          // below (every 50 ms), over one second; enforcerCpuMicrosPerAlert includes this,
          // enforcerNetCpuMicrosPerAlert not.
          const idleCpu0 = cpuMicros(pid);
          const idleStart = process.hrtime.bigint();
          while (process.hrtime.bigint() - idleStart < 1_000_000_000n) {
            await statusNow();
            await sleep(50);
          }
          e2e.enforcerIdleCpuMicrosPerSecond =
            (cpuMicros(pid) - idleCpu0) / (Number(process.hrtime.bigint() - idleStart) / 1e9);
          const enforcerCpu0 = cpuMicros(pid);
          const helperCpu0 = cpuMicros(helperPid);
          const generatorCpu0 = containerCpuMicros(c.pid);
          // End to end: from the first open until every alert is on the stream (the hub) and in the log, or
          // counted dropped by the helper.
          const floodStart = process.hrtime.bigint();
          await timeExec(cd, c.id, floodScript);
          e2e.generatorCpuMicrosPerAlert = (containerCpuMicros(c.pid) - generatorCpu0) / ALERT_LOOPS;
          const floodDeadline = Date.now() + 120_000;
          for (;;) {
            const st = await statusNow();
            e2e.published = st.alerts - before;
            e2e.helperDropped = st.stats.dropped - droppedBefore;
            if (e2e.published + e2e.helperDropped >= ALERT_LOOPS) {
              e2e.logged = loggedLines() - loggedBefore;
              if (e2e.logged >= e2e.published) break;
            }
            if (Date.now() > floodDeadline) break;
            // Not more often: each /status costs the enforcer about a millisecond of CPU (the enforcement
            // summary of the 1 000-rule policy), taken from the pipeline measured.
            await sleep(50);
          }
          e2e.wallSeconds = Number(process.hrtime.bigint() - floodStart) / 1e9;
          e2e.logged = loggedLines() - loggedBefore;
          e2e.enforcerCpuMicrosPerAlert = (cpuMicros(pid) - enforcerCpu0) / ALERT_LOOPS;
          e2e.enforcerNetCpuMicrosPerAlert =
            e2e.enforcerCpuMicrosPerAlert -
            (e2e.enforcerIdleCpuMicrosPerSecond * e2e.wallSeconds) / ALERT_LOOPS;
          e2e.helperCpuMicrosPerAlert = (cpuMicros(helperPid) - helperCpu0) / ALERT_LOOPS;
          e2e.loadAverage = loadavg();
          // The alert path's time: from the first flood alert's event (the earliest UpdatedTime, the helper's
          // clock when the open was asked) to the last write of the alert log (its mtime), so the start-up
          // of `ctr exec` (tens of ms, not part of the path) is not counted; wallSeconds includes it.
          const floodLines = readFileSync(alertLogPath, 'utf8').split('\n').slice(loggedBefore, -1);
          let firstEventMs = Infinity;
          for (const line of floodLines.slice(0, 1000)) {
            const t = Date.parse((JSON.parse(line) as { UpdatedTime: string }).UpdatedTime);
            if (t < firstEventMs) firstEventMs = t;
          }
          e2e.seconds = (statSync(alertLogPath).mtimeMs - firstEventMs) / 1000;
          await sleep(500);
          rssMaxMB = hwm();
          floodAlerts = (await published()) - before;
          for (const s of followers) s.destroy();
        }
      } finally {
        await enforcer.kill('SIGTERM');
        await stopHelper(join(stateDir, 'fanotify.sock'));
      }
    }

    const result = {
      benchmark: 'enforcer-fanotify',
      date: new Date().toISOString(),
      parts: [...parts],
      // The machine's 1, 5 and 15 minute load averages when the run started and ended: timings swing with it.
      loadAverage: { start: loadAtStart, end: loadavg() },
      // What this machine charges for a system call, a /proc link read, an open+close and a wake-up round
      // trip (bench/support/machine-costs.ts): the flood's figures follow these from one machine to another.
      machine,
      rules,
      // The helper's reader threads (RTCTL_FANOTIFY_READERS; 0 = one loop reads the queue).
      fanotifyReaders: readers,
      container: { openCloseLoops: OPEN_LOOPS, execLoops: EXEC_LOOPS, rounds: ROUNDS, baselineDecisions },
      baseline,
      enforced,
      ratios: {
        openClose: enforced.openCloseMicros / baseline.openCloseMicros,
        openCloseReadOnly: enforced.openCloseReadOnlyMicros / baseline.openCloseReadOnlyMicros,
        exec: enforced.execMicros / baseline.execMicros,
      },
      decisions: enforcedDecisions,
      cacheHitRate: enforcedHits / Math.max(1, enforcedDecisions),
      applyMillis: applyMs,
      policyChangeToEnforcedMillis: latencies,
      policyChangeToEnforcedP99Millis: percentile(latencies, 0.99),
      // End to end through `rtctl enforcer run` (helper → control plane → stream → log), during the flood
      // with 20 followers that never read; `plane*` is the helper → data-plane client leg alone. The flood
      // is `generators` shell loops side by side in the container; generatorOnly is the same loops with no
      // enforcer (their ceiling), and generatorCpuMicrosPerAlert their CPU per open under the flood.
      alerts: {
        expected: ALERT_LOOPS,
        generators,
        perSecond: e2e.logged / e2e.seconds,
        wallSeconds: e2e.wallSeconds,
        helperCpuMicrosPerAlert: e2e.helperCpuMicrosPerAlert,
        enforcerCpuMicrosPerAlert: e2e.enforcerCpuMicrosPerAlert,
        // The enforcer's CPU with no alerts (container discovery and /status polls), per second, and the CPU per alert
        // without it (enforcerCpuMicrosPerAlert less that rate over the flood's wall time).
        enforcerIdleCpuMicrosPerSecond: e2e.enforcerIdleCpuMicrosPerSecond,
        enforcerNetCpuMicrosPerAlert: e2e.enforcerNetCpuMicrosPerAlert,
        generatorCpuMicrosPerAlert: e2e.generatorCpuMicrosPerAlert,
        generatorOnly,
        // perSecond ÷ generatorOnly.perSecond: the share of the loops' own ceiling the flood reaches.
        perSecondOfGeneratorOnly: e2e.logged / e2e.seconds / generatorOnly.perSecond,
        loadAverage: e2e.loadAverage,
        published: e2e.published,
        logged: e2e.logged,
        droppedCountedByHelper: e2e.helperDropped,
        // null (NaN) when the alerts part was not run (--only): never a count that was not measured.
        unreportedLoss: parts.has('alerts') ? ALERT_LOOPS - e2e.logged - e2e.helperDropped : NaN,
        seconds: e2e.seconds,
        planePerSecond: received / alertSeconds,
        planeHelperCpuMicrosPerAlert: planeHelperCpu,
        planeReceived: received,
        planeDroppedCounted: planeDropped,
        planeUnreportedLoss: parts.has('alerts') ? ALERT_LOOPS - received - planeDropped : NaN,
      },
      rssMaxMB,
      flood: {
        followers: 20,
        opens: ALERT_LOOPS,
        alertsPublished: floodAlerts,
        rssBeforeFloodMB,
        rssMaxMBBeforeFlood,
      },
    };
    printResult(result, out);
  } finally {
    if (plane) await plane.stop({ keepEnforcing: false });
    await cd.stop();
    rmSync(work, { recursive: true, force: true });
  }
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(1);
  },
);
