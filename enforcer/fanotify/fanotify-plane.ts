// The fanotify data plane: drives the native helper (enforcer/native/fanotify-helper.c) over its unix socket.
// The helper is a daemon that outlives this process, so enforcement continues while the TypeScript enforcer
// restarts; on start we reconnect to a running helper rather than start a second one.
import { spawn } from 'node:child_process';
import { openSync, closeSync, existsSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from 'pino';
import { Action, Operation } from '../../compiler/ir/rule-set.js';
import {
  DecisionKind,
  type DataPlane,
  type DataPlaneEvent,
  type DataPlaneStats,
  type EnforcementState,
} from '../data-plane.js';
import { createLineReader, type LineReader } from '../io/line-reader.js';
import { processIdentity } from '../io/process-identity.js';
import { encodeHelperState } from './helper-protocol.js';

/** Options of the fanotify data plane. */
export interface FanotifyPlaneOptions {
  /** Path of the prebuilt helper (dist/native/rtctl-fanotify; enforcer/io/native-tools.ts finds it). */
  helperPath: string;
  /** Unix socket of the helper; one helper per node. */
  socketPath: string;
  /** Where the helper writes its own log (stderr) when this plane starts it. */
  helperLogPath: string;
  /** Size of the helper's event ring (default 16 MiB); events beyond it are dropped and counted. */
  ringBytes?: number;
  logger: Logger;
}

/** The event line the helper writes (see fanotify-helper.c `report`). */
interface HelperEvent {
  t: 'event';
  seq: number;
  workload: string;
  generation: number;
  timeNs: string;
  class: number;
  action: number;
  posture: number;
  errno: number;
  rule: number;
  policy: string;
  severity: number;
  message: string;
  tags: string[];
  pid: number;
  ppid: number;
  nspid: number;
  nsppid: number;
  uid: number;
  exe: string;
  pexe: string;
  path: string;
  syscall: string;
  args: string;
  /** No longer sent (the alert record has no cgroup); older helpers still send it. */
  cgroup?: string;
  cwd: string;
}

interface HelperStatus {
  t: 'status';
  generation: number;
  decisions: number;
  cacheHits: number;
  reported: number;
  dropped: number;
  denied: number;
  ignoreMarks: number;
  ignoreFlushes: number;
  ignoreFailed: number;
  /** Marks not set: the file could be renamed or linked to a name decided differently (a writable mount). */
  ignoreRenamable: number;
  ignoreSupported: boolean;
  /** Directory ignore marks set, refused (the directory could move), failed; absent from older helpers. */
  dirIgnoreMarks?: number;
  dirIgnoreMovable?: number;
  dirIgnoreFailed?: number;
  pid: number;
  workloads: { key: string; mounts: number }[];
}

const CLASS_OPERATIONS: readonly Operation[] = [
  Operation.Process,
  Operation.File,
  Operation.Network,
  Operation.Capabilities,
];

/** Maps one helper event line to a DataPlaneEvent; undefined when the line is not an event. */
export function parseHelperEvent(line: string): DataPlaneEvent | undefined {
  const raw = JSON.parse(line) as Partial<HelperEvent>;
  if (raw.t !== 'event' || typeof raw.workload !== 'string') return undefined;
  const operation = CLASS_OPERATIONS[raw.class ?? -1];
  if (operation === undefined) return undefined;
  const block = raw.action === 2;
  const event: DataPlaneEvent = {
    seq: raw.seq ?? 0,
    workload: raw.workload,
    timeNs: BigInt(raw.timeNs ?? '0'),
    operation,
    kind: raw.posture === 1 ? DecisionKind.Posture : block ? DecisionKind.Block : DecisionKind.Audit,
    action: block ? Action.Block : Action.Audit,
    errno: raw.errno ?? 0,
    generation: raw.generation ?? 0,
    ruleIndex: raw.rule ?? -1,
    policyName: raw.policy ?? '',
    severity: raw.severity ?? 0,
    tags: raw.tags ?? [],
    message: raw.message ?? '',
    hostPid: raw.pid ?? 0,
    hostPpid: raw.ppid ?? 0,
    pid: raw.nspid ?? 0,
    ppid: raw.nsppid ?? 0,
    uid: raw.uid ?? -1,
    processName: raw.exe ?? '',
    parentProcessName: raw.pexe ?? '',
    resource: raw.path ?? '',
    syscall: raw.syscall ?? '',
    syscallArgs: raw.args ?? '',
    cgroup: raw.cgroup ?? '',
  };
  if (raw.cwd) event.cwd = raw.cwd;
  return event;
}

/** Parsed events waiting for the consumer before the event socket is paused. */
const EVENT_QUEUE_HIGH = 4096;

async function connectSocket(path: string): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const s = connect(path);
    s.once('connect', () => {
      s.removeAllListeners('error');
      resolve(s);
    });
    s.once('error', reject);
  });
}

/** Creates the fanotify data plane. */
export function createFanotifyPlane(options: FanotifyPlaneOptions): DataPlane {
  const { logger } = options;
  let control: Socket | undefined;
  let controlLines: LineReader | undefined;
  let eventsSocket: Socket | undefined;
  let stopped = false;
  let pendingAck = 0;
  let ackScheduled = false;
  let chain: Promise<unknown> = Promise.resolve();

  /** Sends one command and waits for its one-line reply (commands are serialised). */
  function request(command: Uint8Array | string): Promise<Record<string, unknown>> {
    const run = async (): Promise<Record<string, unknown>> => {
      if (control === undefined || controlLines === undefined) throw new Error('fanotify plane not started');
      control.write(command);
      const line = await controlLines.next();
      if (line === undefined) throw new Error('fanotify helper closed the connection');
      return JSON.parse(line) as Record<string, unknown>;
    };
    const p = chain.then(run, run);
    chain = p.catch(() => undefined);
    return p;
  }

  async function ensureHelper(): Promise<void> {
    try {
      const s = await connectSocket(options.socketPath);
      s.destroy();
      logger.info({ socket: options.socketPath }, 'fanotify helper already running; reusing it');
      return;
    } catch {
      // Not running (or a stale socket): start it.
    }
    const log = openSync(options.helperLogPath, 'a');
    try {
      const args = ['--socket', options.socketPath];
      if (options.ringBytes !== undefined) args.push('--ring-bytes', String(options.ringBytes));
      const child = spawn(options.helperPath, args, {
        detached: true,
        stdio: ['ignore', log, log],
      });
      child.unref();
      logger.info({ pid: child.pid, socket: options.socketPath }, 'started fanotify helper');
    } finally {
      closeSync(log);
    }
    for (let i = 0; i < 100; i++) {
      if (existsSync(options.socketPath)) {
        try {
          const s = await connectSocket(options.socketPath);
          s.destroy();
          return;
        } catch {
          // not listening yet
        }
      }
      await sleep(50);
    }
    throw new Error(`fanotify helper did not start; see ${options.helperLogPath}`);
  }

  async function status(): Promise<HelperStatus> {
    const reply = await request('STATUS\n');
    if (reply['t'] !== 'status') throw new Error(`unexpected helper reply ${JSON.stringify(reply)}`);
    return reply as unknown as HelperStatus;
  }

  return {
    name: 'Fanotify',
    auditName: 'Fanotify',
    async start() {
      await ensureHelper();
      control = await connectSocket(options.socketPath);
      controlLines = createLineReader(control);
    },
    async apply(state: EnforcementState) {
      const reply = await request(encodeHelperState(state));
      if (reply['t'] !== 'applied') {
        const message = typeof reply['message'] === 'string' ? reply['message'] : JSON.stringify(reply);
        throw new Error(`fanotify helper refused state ${state.generation}: ${message}`);
      }
    },
    async enforced() {
      const s = await status();
      return { generation: s.generation, workloads: s.workloads.map((w) => w.key) };
    },
    async *events(): AsyncIterable<DataPlaneEvent> {
      const socket = await connectSocket(options.socketPath);
      eventsSocket = socket;
      // The helper sends events in batches (many lines per read): each chunk is split and parsed at once
      // into `queue`, which the loop below drains without a promise per line; the socket is paused while
      // the queue is long (backpressure to the helper's ring).
      const queue: DataPlaneEvent[] = [];
      let head = 0;
      let partial = '';
      let ended = false;
      let wake: (() => void) | undefined;
      const onLine = (line: string): void => {
        if (line.length === 0) return;
        if (line.startsWith('{"t":"dropped"')) {
          logger.warn({ line }, 'fanotify helper dropped events');
          return;
        }
        if (line.startsWith('{"t":"error"')) {
          logger.error({ line }, 'fanotify helper refused a command on the event stream');
          return;
        }
        try {
          const event = parseHelperEvent(line);
          if (event !== undefined) queue.push(event);
        } catch (err) {
          logger.error({ err, line }, 'bad event line from the fanotify helper');
        }
      };
      socket.setEncoding('utf8');
      socket.on('data', (chunk: string) => {
        let start = 0;
        let nl = chunk.indexOf('\n');
        if (nl !== -1 && partial !== '') {
          onLine(partial + chunk.slice(0, nl));
          partial = '';
          start = nl + 1;
          nl = chunk.indexOf('\n', start);
        }
        while (nl !== -1) {
          onLine(chunk.slice(start, nl));
          start = nl + 1;
          nl = chunk.indexOf('\n', start);
        }
        partial += chunk.slice(start);
        if (queue.length - head >= EVENT_QUEUE_HIGH) socket.pause();
        wake?.();
      });
      const finish = (): void => {
        ended = true;
        wake?.();
      };
      socket.on('end', finish);
      socket.on('close', finish);
      socket.on('error', finish);
      socket.write('EVENTS\n');
      for (;;) {
        while (head < queue.length) {
          const event = queue[head++] as DataPlaneEvent;
          if (head === queue.length) {
            queue.length = 0;
            head = 0;
          }
          yield event;
        }
        if (ended) {
          if (!stopped) logger.warn('fanotify helper closed the event stream');
          return;
        }
        if (socket.isPaused()) socket.resume();
        await new Promise<void>((resolve) => {
          wake = resolve;
        });
        wake = undefined;
      }
    },
    acknowledge(seq: number) {
      pendingAck = Math.max(pendingAck, seq);
      if (ackScheduled) return;
      ackScheduled = true;
      setImmediate(() => {
        ackScheduled = false;
        if (eventsSocket !== undefined && !eventsSocket.destroyed) eventsSocket.write(`ACK ${pendingAck}\n`);
      });
    },
    async sequenceIdentity() {
      // The helper numbers its events from 1 when it starts: its own identity names the numbering.
      return processIdentity((await status()).pid);
    },
    async stats(): Promise<DataPlaneStats> {
      const s = await status();
      return {
        decisions: s.decisions,
        cacheHits: s.cacheHits,
        reported: s.reported,
        dropped: s.dropped,
        workloads: s.workloads.length,
        ignoreMarks: s.ignoreMarks,
        ignoreRenamable: s.ignoreRenamable,
        ...(s.dirIgnoreMarks === undefined ? {} : { dirIgnoreMarks: s.dirIgnoreMarks }),
        ...(s.dirIgnoreMovable === undefined ? {} : { dirIgnoreMovable: s.dirIgnoreMovable }),
        ...(s.dirIgnoreFailed === undefined ? {} : { dirIgnoreFailed: s.dirIgnoreFailed }),
      };
    },
    async stop({ keepEnforcing }) {
      stopped = true;
      if (!keepEnforcing && control !== undefined) control.write('STOP\n');
      await sleep(10);
      control?.destroy();
      eventsSocket?.destroy();
    },
  };
}
