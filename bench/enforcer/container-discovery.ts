// Benchmark of how the enforcer finds containers (real containerd + runc, `rtctl enforcer run` with the
// fanotify plane), printing JSON, old poll against containerd's event stream in the same run:
//  - idle CPU: with `--containers` containers running and nothing happening, the CPU per second of the
//    enforcer (its own, plus the `ctr` processes it ran and reaped, plus a live `ctr events` client) and of
//    containerd (which serves every `ctr` call), over `--idle-seconds` (default 60: two resyncs of the event mode
//    fall inside it); a `baseline-no-discovery` mode (no list in the window) says what
//    the enforcer spends idle for other reasons;
//  - start to enforced: `ctr run -d` of a container whose first command opens a file a Block policy denies,
//    in a loop (5 ms apart) until denied; the figure is the time from `ctr run -d` returning (its process is
//    running) to the first denial's alert time (the helper stamps it), `--samples` times (default 10), p50/p99.
// Modes: `poll-200` and `poll-1000` (`--container-discovery poll --poll-ms N`, what the enforcer did before),
// `events` (the default: `--resync-ms 30000`). Run as root: `node --import tsx
// bench/enforcer/container-discovery.ts [--idle-seconds N] [--samples N] [--containers N] [--out FILE]`.
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { alertTimeMs } from '../../enforcer/alerts/alert-filter.js';
import { BUSYBOX_IMAGE, startContainerd, type Containerd } from '../../test/enforcer/support/containerd.js';
import {
  fetchAlerts,
  getJson,
  startEnforcer,
  stopHelper,
  type EnforcerProcess,
} from '../../test/enforcer/support/enforcer-process.js';
import type { EnforcerStatus } from '../../enforcer/enforcer.js';
import { printResult } from '../support/measure.js';
import { waitUntil } from '../../test/support/wait-until.js';

const argValue = (name: string): string | undefined => {
  const i = process.argv.indexOf(name);
  return i >= 0 ? process.argv[i + 1] : undefined;
};
const IDLE_SECONDS = Number(argValue('--idle-seconds') ?? 60);
const SAMPLES = Number(argValue('--samples') ?? 10);
const CONTAINERS = Number(argValue('--containers') ?? 3);

const MODES: { name: string; flags: string[]; latency: boolean }[] = [
  // What the enforcer spends idle with no container discovery at all (one list at start, none in the window):
  // the policy directory's rescan, the alert server's keep-alive. Subtract it from the others.
  {
    name: 'baseline-no-discovery',
    flags: ['--container-discovery', 'poll', '--poll-ms', '3600000'],
    latency: false,
  },
  { name: 'poll-200', flags: ['--container-discovery', 'poll', '--poll-ms', '200'], latency: true },
  { name: 'poll-1000', flags: ['--container-discovery', 'poll', '--poll-ms', '1000'], latency: true },
  {
    name: 'events',
    flags: ['--container-discovery', 'events', '--resync-ms', '30000'],
    latency: true,
  },
];

const POLICY = [
  'apiVersion: security.runtime.com/v1',
  'kind: RuntimePolicy',
  'metadata:',
  '  name: probe-block-hello',
  '  namespace: bench',
  'spec:',
  '  selector:',
  '    matchLabels:',
  '      app: probe',
  '  file:',
  '    matchPaths:',
  '    - path: /data/hello.txt',
  '  action: Block',
  '',
].join('\n');

const TICK_MICROS = 1e6 / 100;

/** CPU of a process, µs: its own (user + system) and its reaped children's. */
function cpuOf(pid: number): { self: number; children: number } {
  try {
    const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
    return {
      self: (Number(f[11]) + Number(f[12])) * TICK_MICROS,
      children: (Number(f[13]) + Number(f[14])) * TICK_MICROS,
    };
  } catch {
    return { self: 0, children: 0 };
  }
}

/** Pids whose command line has all of `parts`. */
function pidsWith(parts: readonly string[]): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const argv = readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0');
      if (parts.every((p) => argv.includes(p))) pids.push(Number(entry));
    } catch {
      // gone
    }
  }
  return pids;
}

function percentile(xs: readonly number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)] ?? NaN;
}

interface ModeResult {
  idle: {
    seconds: number;
    enforcerCpuMsPerSecond: number;
    containerdCpuMsPerSecond: number;
    totalCpuMsPerSecond: number;
  };
  startToEnforcedMs?: { samples: number[]; p50: number; p99: number; max: number };
}

async function measureMode(
  cd: Containerd,
  work: string,
  mode: (typeof MODES)[number],
  containerdPid: number,
): Promise<ModeResult> {
  const stateDir = join(work, `state-${mode.name}`);
  let enforcer: EnforcerProcess | undefined;
  try {
    enforcer = await startEnforcer([
      '--policy-dir',
      join(work, 'policies'),
      '--data-plane',
      'fanotify',
      '--node-name',
      'bench-node',
      '--containerd-socket',
      cd.socket,
      '--state-dir',
      stateDir,
      ...mode.flags,
    ]);
    const url = enforcer.url;
    await waitUntil(
      'the idle containers listed',
      async () => {
        const s = await getJson<EnforcerStatus>(`${url}/status`);
        return s.workloads.length >= CONTAINERS ? true : undefined;
      },
      60000,
      10,
    );
    if (mode.name === 'events')
      await waitUntil(
        'the event stream up',
        async () => {
          const s = await getJson<EnforcerStatus>(`${url}/status`);
          return s.containerEvents?.up === true ? true : undefined;
        },
        30000,
        10,
      );
    await sleep(1000);
    // Idle CPU.
    const pid = enforcer.child.pid ?? 0;
    const clients = (): number =>
      pidsWith(['-a', cd.socket, 'events']).reduce((sum, p) => sum + cpuOf(p).self, 0);
    const e0 = cpuOf(pid);
    const c0 = cpuOf(containerdPid);
    const k0 = clients();
    const t0 = process.hrtime.bigint();
    await sleep(IDLE_SECONDS * 1000);
    const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
    const e1 = cpuOf(pid);
    const c1 = cpuOf(containerdPid);
    const k1 = clients();
    const enforcerMicros = e1.self - e0.self + (e1.children - e0.children) + (k1 - k0);
    const containerdMicros = c1.self - c0.self;
    // Start to enforced.
    const samples: number[] = [];
    for (let i = 0; mode.latency && i < SAMPLES; i++) {
      const id = `probe-${mode.name}-${i}`;
      const args = ['run', '-d', '--runc-root', join(cd.dir, 'runc')];
      const labels = {
        app: 'probe',
        'io.kubernetes.pod.name': id,
        'io.kubernetes.pod.namespace': 'bench',
        'io.kubernetes.container.name': 'probe',
      };
      for (const [k, v] of Object.entries(labels)) args.push('--label', `${k}=${v}`);
      args.push(
        BUSYBOX_IMAGE,
        id,
        '/bin/sh',
        '-c',
        'while cat /data/hello.txt >/dev/null 2>&1; do sleep 0.005; done; exec sleep 100000',
      );
      const r = await cd.ctr(args);
      const started = Date.now();
      if (r.code !== 0) throw new Error(`ctr run ${id}: ${r.stderr}`);
      const alert = await waitUntil(
        `the first denial in ${id}`,
        async () =>
          (await fetchAlerts(url)).find((a) => a.ContainerID === id && a.PolicyName === 'probe-block-hello'),
        30000,
        10,
      );
      samples.push(alertTimeMs(alert) - started);
      await cd.removeContainer(id);
      await sleep(300);
    }
    return {
      idle: {
        seconds: Number(seconds.toFixed(2)),
        enforcerCpuMsPerSecond: Number((enforcerMicros / 1000 / seconds).toFixed(2)),
        containerdCpuMsPerSecond: Number((containerdMicros / 1000 / seconds).toFixed(2)),
        totalCpuMsPerSecond: Number(((enforcerMicros + containerdMicros) / 1000 / seconds).toFixed(2)),
      },
      ...(mode.latency
        ? {
            startToEnforcedMs: {
              samples,
              p50: percentile(samples, 50),
              p99: percentile(samples, 99),
              max: Math.max(...samples),
            },
          }
        : {}),
    };
  } finally {
    await enforcer?.kill('SIGTERM');
    await stopHelper(join(stateDir, 'fanotify.sock'));
  }
}

async function main(): Promise<void> {
  const work = mkdtempSync(join(tmpdir(), 'rtctl-bench-discovery-'));
  mkdirSync(join(work, 'policies'));
  writeFileSync(join(work, 'policies', 'probe.yaml'), POLICY);
  const cd = await startContainerd();
  const loadAtStart = loadavg();
  const modes: Record<string, ModeResult> = {};
  try {
    const [containerdPid] = pidsWith(['--config', join(cd.dir, 'config.toml')]);
    if (containerdPid === undefined) throw new Error('containerd process not found');
    for (let i = 0; i < CONTAINERS; i++)
      await cd.runContainer({
        id: `idle-${i}`,
        pod: `idle-${i}`,
        namespace: 'bench',
        container: 'idle',
        labels: { app: 'probe' },
      });
    for (const mode of MODES) {
      process.stderr.write(`container-discovery: ${mode.name}...\n`);
      modes[mode.name] = await measureMode(cd, work, mode, containerdPid);
    }
  } finally {
    await cd.stop();
    rmSync(work, { recursive: true, force: true });
  }
  printResult(
    {
      bench: 'enforcer-container-discovery',
      containers: CONTAINERS,
      idleSeconds: IDLE_SECONDS,
      samples: SAMPLES,
      loadAverage: { start: loadAtStart, end: loadavg() },
      modes,
    },
    argValue('--out'),
  );
}

await main();
