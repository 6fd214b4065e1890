// Follows containerd's event stream through one long-lived `ctr -a <socket> events` process (the I/O edge, as
// for the lister) and tells the enforcer when the container list may have changed, so a container is enforced
// when it starts rather than at the next poll. The stream is a hint, never the truth: every change is answered
// with a full list (createContainerdLister), and whenever the stream may have missed something (the client
// exited, printed what cannot be parsed) it is restarted with bounded backoff and a full list follows once it
// is back. Memory is bounded: a line longer than the limit is skipped (counted, and answered with a full list),
// and events only set a flag of the coalescing trigger (createRefreshTrigger), whatever their rate.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import type { Logger } from 'pino';

/** One event as `ctr events` prints it: `<time> <namespace> <topic> <JSON payload>`. */
export interface ContainerdEvent {
  namespace: string;
  topic: string;
  /** `container_id` (task topics) or `id` (container topics) of the payload, when it has one. */
  containerId?: string;
  /** `id` of a task topic's payload: the process (the container id for its init process, else an exec id). */
  processId?: string;
}

/** A parsed line, or why it could not be parsed. */
export type ParsedEventLine = { ok: true; event: ContainerdEvent } | { ok: false; reason: string };

/**
 * Topics after which the running containers (or what the lister reads of them) may differ. The lister lists
 * running tasks only, so `/containers/create` and `/containers/delete` (always before a task starts, after it
 * was deleted) change nothing, and it reads a container's record once, so `/containers/update` would not either.
 * A paused task is not listed (not RUNNING): pause and resume change the list.
 */
export const CONTAINER_TOPICS: readonly string[] = [
  '/tasks/start',
  '/tasks/exit',
  '/tasks/delete',
  '/tasks/paused',
  '/tasks/resumed',
  '/images/create',
  '/images/update',
  '/images/delete',
];

/** The same topics as one containerd filter regular expression (`ctr events` filters on the server). */
const TOPIC_FILTER = '^/(tasks/(start|exit|delete|paused|resumed)|images/)';

const TIME_PART = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}(\.\d+)? \S+ \S+ /;
const NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,75}$/;

/**
 * Parses one line of `ctr events` (Go's time format, then namespace, topic and the payload as JSON). Pure:
 * returns why a line is not an event instead of throwing.
 */
export function parseEventLine(line: string): ParsedEventLine {
  const time = TIME_PART.exec(line);
  if (time === null) return { ok: false, reason: 'no timestamp at the start of the line' };
  const rest = line.slice(time[0].length);
  const firstSpace = rest.indexOf(' ');
  if (firstSpace <= 0) return { ok: false, reason: 'no namespace and topic after the timestamp' };
  const namespace = rest.slice(0, firstSpace);
  if (!NAME.test(namespace)) return { ok: false, reason: 'the namespace is not a containerd namespace name' };
  const afterNamespace = rest.slice(firstSpace + 1);
  const topicEnd = afterNamespace.indexOf(' ');
  const topic = topicEnd < 0 ? afterNamespace : afterNamespace.slice(0, topicEnd);
  if (!/^\/[A-Za-z0-9/_-]{1,128}$/.test(topic)) return { ok: false, reason: 'no topic after the namespace' };
  const payload = topicEnd < 0 ? '' : afterNamespace.slice(topicEnd + 1).trim();
  const event: ContainerdEvent = { namespace, topic };
  if (payload !== '') {
    let body: unknown;
    try {
      body = JSON.parse(payload);
    } catch {
      return { ok: false, reason: `the payload of ${topic} is not JSON` };
    }
    if (typeof body !== 'object' || body === null || Array.isArray(body))
      return { ok: false, reason: `the payload of ${topic} is not a JSON object` };
    const fields = body as Record<string, unknown>;
    const containerId =
      fields['container_id'] ?? (topic.startsWith('/containers/') ? fields['id'] : undefined);
    if (typeof containerId === 'string') event.containerId = containerId;
    if (topic.startsWith('/tasks/') && typeof fields['id'] === 'string') event.processId = fields['id'];
  }
  return { ok: true, event };
}

/**
 * Whether an event can change the enforcer's container list: a topic of CONTAINER_TOPICS in a listed
 * namespace, and for `/tasks/exit` the exit of a container's init process (an exec's exit changes nothing).
 */
export function isContainerChange(event: ContainerdEvent, namespaces: ReadonlySet<string>): boolean {
  if (!namespaces.has(event.namespace) || !CONTAINER_TOPICS.includes(event.topic)) return false;
  if (event.topic === '/tasks/exit' && event.processId !== undefined && event.containerId !== undefined)
    return event.processId === event.containerId;
  return true;
}

/** Counters of the follower (`stats()`). */
export interface ContainerEventStats {
  /** Whether the stream is up (containerd answered and the client has run for `settleMs`, or it printed an event). */
  up: boolean;
  /** Clients started, the first included. */
  starts: number;
  /** Events parsed. */
  events: number;
  /** Of those, the ones that can change the container list (each asked for a list). */
  changes: number;
  /** Lines that are not events (each restarted the client). */
  malformed: number;
  /** Lines longer than `maxLineBytes`, skipped (each asked for a list). */
  overlong: number;
  /** Most bytes ever held of a line not yet complete (bounded by `maxLineBytes`). */
  maxBufferedBytes: number;
}

/** What the follower reports. */
export interface ContainerEventHandlers {
  /** The container list may have changed: list again (calls are frequent; coalesce them). */
  change(): void;
  /** The stream is (back) up: events may have been missed before, list now. */
  up(): void;
  /** The stream is down (the client exited or cannot start): `reason` says why. */
  down(reason: string): void;
}

/** Options of the follower. */
export interface ContainerEventsOptions {
  socket: string;
  /** containerd namespaces whose events matter (the lister's). */
  namespaces: readonly string[];
  logger: Logger;
  /** The client's argv before `-a <socket> events <filters>` (default `['ctr']`; tests give a stand-in). */
  command?: readonly string[];
  /** A line longer than this is skipped (default 64 KiB). */
  maxLineBytes?: number;
  /**
   * The stream counts as up once the client has run this long without failing and `<client> -a <socket>
   * version` answered (containerd serves the socket), or once it printed an event (default 1000 ms).
   */
  settleMs?: number;
  /** First restart delay, doubled on every failure up to `maxBackoffMs` (defaults 250 ms, 30 s). */
  backoffMs?: number;
  maxBackoffMs?: number;
  /** A client that ran this long resets the backoff (default 30 s). */
  stableMs?: number;
}

/** A running follower. */
export interface ContainerEvents {
  start(handlers: ContainerEventHandlers): void;
  /** Kills the client, waits for it to exit, cancels a pending restart. */
  stop(): Promise<void>;
  stats(): ContainerEventStats;
}

const STDERR_KEPT = 2048;

/** Creates the follower over `ctr events` (or the given command). */
export function createContainerEvents(options: ContainerEventsOptions): ContainerEvents {
  const { logger } = options;
  const maxLineBytes = options.maxLineBytes ?? 64 * 1024;
  const settleMs = options.settleMs ?? 1000;
  const firstBackoff = options.backoffMs ?? 250;
  const maxBackoff = options.maxBackoffMs ?? 30_000;
  const stableMs = options.stableMs ?? 30_000;
  const [command = 'ctr', ...prefix] = options.command ?? ['ctr'];
  const namespaces = new Set(options.namespaces);
  const filters = [...namespaces].map(
    (n) => `namespace==${JSON.stringify(n)},topic~=${JSON.stringify(TOPIC_FILTER)}`,
  );
  const args = [...prefix, '-a', options.socket, 'events', ...filters];
  const stats: ContainerEventStats = {
    up: false,
    starts: 0,
    events: 0,
    changes: 0,
    malformed: 0,
    overlong: 0,
    maxBufferedBytes: 0,
  };
  let handlers: ContainerEventHandlers | undefined;
  let child: ChildProcess | undefined;
  let exited: Promise<void> = Promise.resolve();
  let settleTimer: NodeJS.Timeout | undefined;
  /** The `version` call that tells whether containerd answers, while it runs. */
  let probe: ChildProcess | undefined;
  let restartTimer: NodeJS.Timeout | undefined;
  let backoff = firstBackoff;
  let stopped = false;
  /** Failures logged at warn level in a row; later ones go to debug until the stream is up again. */
  let failuresLogged = 0;

  const markUp = (): void => {
    if (settleTimer !== undefined) clearTimeout(settleTimer);
    settleTimer = undefined;
    if (stats.up || stopped) return;
    stats.up = true;
    if (failuresLogged > 0 || stats.starts > 1)
      logger.info({ starts: stats.starts }, 'containerd event stream is back');
    else logger.info('following containerd events');
    failuresLogged = 0;
    handlers?.up();
  };

  const launch = (): void => {
    restartTimer = undefined;
    if (stopped) return;
    stats.starts++;
    const startedAt = Date.now();
    let proc: ChildProcess;
    try {
      proc = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    } catch (err) {
      ended(`cannot start ${command}: ${err instanceof Error ? err.message : String(err)}`, startedAt);
      return;
    }
    child = proc;
    let done = false;
    let reason: string | undefined;
    let stderr = '';
    /** Bytes of the line being read; `skipping` while dropping the rest of an over-long line. */
    let pending: Buffer[] = [];
    let pendingBytes = 0;
    let skipping = false;

    const finish = (why: string): void => {
      if (done) return;
      done = true;
      if (settleTimer !== undefined) clearTimeout(settleTimer);
      settleTimer = undefined;
      probe?.kill('SIGKILL');
      proc.stdout?.removeAllListeners('data');
      proc.stderr?.removeAllListeners('data');
      if (child === proc) child = undefined;
      ended(reason ?? why, startedAt);
    };
    exited = new Promise<void>((resolve) => {
      proc.once('close', (code: number | null, signal: NodeJS.Signals | null) => {
        const said = stderr.trim().split('\n').pop() ?? '';
        finish(
          `${command} events exited (${signal !== null ? `signal ${signal}` : `code ${String(code)}`})${said !== '' ? `: ${said}` : ''}`,
        );
        resolve();
      });
      proc.once('error', (err: Error) => {
        // No process (ENOENT, EACCES): no 'close' follows a failed spawn in every case.
        if (proc.pid === undefined) {
          finish(`cannot start ${command}: ${err.message}`);
          resolve();
        }
      });
    });

    const restartNow = (why: string): void => {
      reason ??= why;
      proc.kill('SIGKILL');
    };

    const onLine = (line: string): void => {
      if (line.trim() === '') return;
      const parsed = parseEventLine(line);
      if (!parsed.ok) {
        stats.malformed++;
        logger.warn(
          { reason: parsed.reason, line: line.slice(0, 200) },
          'containerd event line not understood; restarting the event stream',
        );
        restartNow(`an event line was not understood (${parsed.reason})`);
        return;
      }
      stats.events++;
      markUp();
      if (isContainerChange(parsed.event, namespaces)) {
        stats.changes++;
        handlers?.change();
      }
    };

    proc.stdout?.on('data', (chunk: Buffer) => {
      if (done || reason !== undefined) return;
      let start = 0;
      while (start < chunk.length && reason === undefined) {
        const nl = chunk.indexOf(10, start);
        const end = nl < 0 ? chunk.length : nl;
        const piece = chunk.subarray(start, end);
        if (!skipping) {
          if (pendingBytes + piece.length > maxLineBytes) {
            skipping = true;
            pending = [];
            pendingBytes = 0;
            stats.overlong++;
            logger.warn(
              { maxLineBytes },
              'containerd event line longer than the limit skipped; listing the containers instead',
            );
            handlers?.change();
          } else if (piece.length > 0) {
            pending.push(Buffer.from(piece));
            pendingBytes += piece.length;
            if (pendingBytes > stats.maxBufferedBytes) stats.maxBufferedBytes = pendingBytes;
          }
        }
        if (nl < 0) break;
        if (!skipping) {
          const line = Buffer.concat(pending, pendingBytes).toString('utf8');
          pending = [];
          pendingBytes = 0;
          onLine(line);
        }
        skipping = false;
        start = nl + 1;
      }
    });
    proc.stderr?.on('data', (chunk: Buffer) => {
      stderr = (stderr + chunk.toString('utf8')).slice(-STDERR_KEPT);
    });
    // `ctr events` says nothing once subscribed, and waits up to 10 s to dial an absent containerd: alive is not
    // up. The stream counts as up once containerd answered on the socket and the client still runs.
    let settled = false;
    let reachable = false;
    const asked = execFile(
      command,
      [...prefix, '-a', options.socket, 'version'],
      { timeout: 15_000 },
      (err) => {
        if (probe === asked) probe = undefined;
        if (done || err !== null) return;
        reachable = true;
        if (settled) markUp();
      },
    );
    settleTimer = setTimeout(() => {
      settleTimer = undefined;
      settled = true;
      if (reachable) markUp();
    }, settleMs);
    probe = asked;
  };

  const ended = (reason: string, startedAt: number): void => {
    const wasUp = stats.up;
    stats.up = false;
    if (stopped) return;
    if (Date.now() - startedAt >= stableMs) backoff = firstBackoff;
    const delay = backoff;
    backoff = Math.min(backoff * 2, maxBackoff);
    const fields = { reason, restartInMs: delay, starts: stats.starts };
    if (failuresLogged === 0)
      logger.warn(fields, 'containerd event stream stopped; polling until it is back');
    else logger.debug(fields, 'containerd event stream still down');
    failuresLogged++;
    if (wasUp) handlers?.down(reason);
    restartTimer = setTimeout(launch, delay);
  };

  return {
    start(h) {
      if (handlers !== undefined) throw new Error('container events already started');
      handlers = h;
      launch();
    },
    async stop() {
      stopped = true;
      if (restartTimer !== undefined) clearTimeout(restartTimer);
      if (settleTimer !== undefined) clearTimeout(settleTimer);
      restartTimer = settleTimer = undefined;
      const proc = child;
      if (proc !== undefined && proc.exitCode === null && proc.signalCode === null) {
        proc.kill('SIGTERM');
        const killLater = setTimeout(() => proc.kill('SIGKILL'), 2000);
        await exited;
        clearTimeout(killLater);
      } else await exited;
      stats.up = false;
    },
    stats: () => ({ ...stats }),
  };
}

/**
 * Coalesces requests to run an async job: one run at a time, at most one queued behind it, so a burst of any
 * size costs at most two runs, and a request arriving alone runs at once (no quiet period).
 */
export interface RefreshTrigger {
  request(): void;
  /** Resolves when no run is in progress or queued. */
  idle(): Promise<void>;
  /** Runs started so far. */
  runs(): number;
}

/** Creates a RefreshTrigger over `job` (a rejected run is passed to `onError`; the next request runs again). */
export function createRefreshTrigger(
  job: () => Promise<void>,
  onError: (err: unknown) => void,
): RefreshTrigger {
  let inFlight: Promise<void> | undefined;
  let queued = false;
  let runs = 0;
  const run = (): void => {
    runs++;
    inFlight = job()
      .catch(onError)
      .finally(() => {
        inFlight = undefined;
        if (queued) {
          queued = false;
          run();
        }
      });
  };
  return {
    request() {
      if (inFlight !== undefined) queued = true;
      else run();
    },
    async idle() {
      while (inFlight !== undefined) await inFlight;
    },
    runs: () => runs,
  };
}
