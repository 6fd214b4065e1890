// The status controller's loop: caches of the policies, the nodes' report ConfigMaps and the Nodes (fed by
// KubeFeeds), and, while this replica leads, each policy's status recomputed by the pure aggregation and
// written only when it differs from the status on the object, at most once per policy per
// `minWriteIntervalMs` (changes in between coalesce into the next write). Writes are per policy, never per pod
// or per report. A periodic resync moves time-based states on (a report going stale, a pending node becoming
// stale after the grace period).
import type { Logger } from 'pino';
import {
  NODE_STATUS_DATA_KEY,
  NODE_STATUS_LABEL,
  parseNodeStatusReport,
  type NodeStatusReport,
} from '../compiler/model/node-status.js';
import { isRecord } from '../compiler/model/json-value.js';
import type { KubeFeed, KubeObject } from '../enforcer/kubernetes/kube-feed.js';
import { FeedEvent } from '../enforcer/kubernetes/kube-feed.js';
import { aggregatePolicyStatus, type PolicyTarget } from './aggregate-policy-status.js';
import { isSameStatus, readPolicyStatus, type PolicyStatus } from './policy-status.js';

/** The feeds the controller reads. */
export interface ControllerFeeds {
  runtimePolicies: KubeFeed;
  runtimeHostPolicies: KubeFeed;
  /** The report ConfigMaps (label NODE_STATUS_LABEL=true) of the install namespace. */
  reports: KubeFeed;
  nodes: KubeFeed;
}

/** A policy object's identity. */
export interface PolicyRef {
  kind: 'RuntimePolicy' | 'RuntimeHostPolicy';
  namespace?: string;
  name: string;
}

/** The narrow interface that writes a policy's status subresource (controller/io/kubernetes-status-writer.ts). */
export interface PolicyStatusWriter {
  write(ref: PolicyRef, status: PolicyStatus): Promise<void>;
}

/** Options of the controller. */
export interface StatusControllerOptions {
  feeds: ControllerFeeds;
  writer: PolicyStatusWriter;
  logger: Logger;
  /** Least time between two status writes of one policy (default 5 s). */
  minWriteIntervalMs?: number;
  /** Quiet time after a change before computing (a burst of report updates gives one pass; default 200 ms). */
  debounceMs?: number;
  /** A report older than this counts as none (default 180 s: three enforcer heartbeats). */
  staleAfterMs?: number;
  /** Nodes behind a new generation are pending this long, then stale (default 60 s). */
  pendingGraceMs?: number;
  /** Everything is recomputed this often (default 30 s). */
  resyncMs?: number;
  now?: () => number;
}

/** A running controller. */
export interface StatusController {
  /** Resolves once every feed delivered its initial list. */
  start(): Promise<void>;
  /** Leading replicas write; the others only keep their caches warm. */
  setLeader(leader: boolean): void;
  /** Status writes issued so far. */
  writes(): number;
  /** Passes over the dirty policies run so far, and whether a change still waits for one. */
  passes(): { count: number; pending: boolean };
  /** Report ConfigMaps that could not be read (each logged once per content). */
  badReports(): number;
  stop(): Promise<void>;
}

const KINDS = ['RuntimePolicy', 'RuntimeHostPolicy'] as const;

function keyOf(kind: string, o: KubeObject): string {
  return `${kind}/${o.metadata?.namespace ?? ''}/${o.metadata?.name ?? ''}`;
}

function stringMap(v: unknown): Record<string, string> | undefined {
  if (!isRecord(v)) return undefined;
  const out: Record<string, string> = {};
  for (const [k, x] of Object.entries(v)) if (typeof x === 'string') out[k] = x;
  return out;
}

/** The policy as the aggregation sees it. */
function targetOf(kind: PolicyRef['kind'], o: KubeObject): PolicyTarget {
  const md = o.metadata ?? {};
  const spec = isRecord(o['spec']) ? o['spec'] : {};
  const selector = isRecord(spec['nodeSelector'])
    ? stringMap(spec['nodeSelector']['matchLabels'])
    : undefined;
  return {
    kind,
    ...(kind === 'RuntimePolicy' && md.namespace !== undefined ? { namespace: md.namespace } : {}),
    name: md.name ?? '',
    ...(md.uid === undefined ? {} : { uid: md.uid }),
    generation: typeof md.generation === 'number' ? md.generation : 0,
    ...(kind === 'RuntimeHostPolicy' && selector !== undefined ? { nodeSelector: selector } : {}),
  };
}

/** Creates the controller (call start()). */
export function createStatusController(options: StatusControllerOptions): StatusController {
  const { logger, feeds, writer } = options;
  const now = options.now ?? Date.now;
  const minInterval = options.minWriteIntervalMs ?? 5000;
  const debounce = options.debounceMs ?? 200;
  const staleAfter = options.staleAfterMs ?? 180_000;
  const grace = options.pendingGraceMs ?? 60_000;
  const resync = options.resyncMs ?? 30_000;

  const policies = new Map<string, { kind: PolicyRef['kind']; object: KubeObject }>();
  const reports = new Map<string, NodeStatusReport>();
  const nodes = new Map<string, Record<string, string>>();
  /** When each policy's current uid/generation was first seen. */
  const seen = new Map<string, { uid: string; generation: number; at: number }>();
  /** The status last written per policy (until the object shows another one). */
  const lastWritten = new Map<string, string>();
  const nextAllowed = new Map<string, number>();
  const badContent = new Map<string, string>();
  const dirty = new Set<string>();
  let leader = false;
  let started = false;
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let resyncTimer: NodeJS.Timeout | undefined;
  let pass: Promise<void> = Promise.resolve();
  let writes = 0;
  let passCount = 0;
  let bad = 0;

  let timerAt = Infinity;
  /** Runs a pass after `delay`, or sooner when one is already due sooner (changes never postpone a pass). */
  const schedule = (delay: number): void => {
    if (!leader || !started || stopped) return;
    const at = now() + Math.max(0, delay);
    if (timer && timerAt <= at) return;
    if (timer) clearTimeout(timer);
    timerAt = at;
    timer = setTimeout(
      () => {
        timer = undefined;
        timerAt = Infinity;
        pass = pass.then(run, run);
      },
      Math.max(0, delay),
    );
  };

  const markAll = (): void => {
    for (const k of policies.keys()) dirty.add(k);
    schedule(debounce);
  };

  let inPass = false;
  const run = async (): Promise<void> => {
    inPass = true;
    try {
      await runPass();
    } finally {
      inPass = false;
      passCount++;
    }
  };

  const runPass = async (): Promise<void> => {
    if (!leader || stopped) return;
    const t = now();
    let wait = Infinity;
    const nodeList = [...nodes.entries()].map(([name, labels]) => ({ name, labels }));
    const reportList = [...reports.values()];
    for (const key of [...dirty].sort()) {
      if (!leader || stopped) return;
      const allowed = nextAllowed.get(key) ?? 0;
      if (allowed > t) {
        wait = Math.min(wait, allowed - t);
        continue;
      }
      dirty.delete(key);
      const entry = policies.get(key);
      if (entry === undefined) continue;
      const target = targetOf(entry.kind, entry.object);
      const previous = readPolicyStatus(entry.object['status']);
      const s = seen.get(key);
      const status = aggregatePolicyStatus({
        policy: target,
        nodes: nodeList,
        reports: reportList,
        now: t,
        staleAfterMs: staleAfter,
        generationSeenAt: s?.at ?? t,
        pendingGraceMs: grace,
        ...(previous === undefined ? {} : { previous }),
      });
      const text = JSON.stringify(status);
      if (isSameStatus(status, previous) || lastWritten.get(key) === text) continue;
      const ref: PolicyRef = {
        kind: entry.kind,
        ...(target.namespace === undefined ? {} : { namespace: target.namespace }),
        name: target.name,
      };
      nextAllowed.set(key, t + minInterval);
      writes++;
      try {
        await writer.write(ref, status);
        lastWritten.set(key, text);
      } catch (err) {
        logger.warn({ err, policy: key }, 'cannot write the policy status; retrying');
        dirty.add(key);
        wait = Math.min(wait, minInterval);
      }
    }
    if (dirty.size > 0 && wait !== Infinity) schedule(wait);
  };

  const onPolicy = (kind: PolicyRef['kind']) => (event: FeedEvent, o: KubeObject) => {
    const key = keyOf(kind, o);
    if (event === FeedEvent.Delete) {
      policies.delete(key);
      seen.delete(key);
      lastWritten.delete(key);
      nextAllowed.delete(key);
      dirty.delete(key);
      return;
    }
    policies.set(key, { kind, object: o });
    const uid = o.metadata?.uid ?? '';
    const generation = typeof o.metadata?.generation === 'number' ? o.metadata.generation : 0;
    const had = seen.get(key);
    if (had === undefined || had.uid !== uid || had.generation !== generation)
      seen.set(key, { uid, generation, at: now() });
    // The object shows another status than the one written last: the server moved on, recompute freely.
    const onObject = readPolicyStatus(o['status']);
    const written = lastWritten.get(key);
    if (written !== undefined && JSON.stringify(onObject) !== written) lastWritten.delete(key);
    dirty.add(key);
    schedule(debounce);
  };

  const onReport = (event: FeedEvent, o: KubeObject): void => {
    const name = o.metadata?.name ?? '';
    if (o.metadata?.labels?.[NODE_STATUS_LABEL] !== 'true' || event === FeedEvent.Delete) {
      reports.delete(name);
      markAll();
      return;
    }
    const text = stringMap(o['data'])?.[NODE_STATUS_DATA_KEY] ?? '';
    const parsed = parseNodeStatusReport(text);
    if (!parsed.ok) {
      reports.delete(name);
      if (badContent.get(name) !== text) {
        badContent.set(name, text);
        bad++;
        logger.warn({ configMap: name, error: parsed.error }, 'ignoring an unreadable node report');
      }
    } else {
      badContent.delete(name);
      reports.set(name, parsed.report);
    }
    markAll();
  };

  const onNode = (event: FeedEvent, o: KubeObject): void => {
    const name = o.metadata?.name ?? '';
    if (event === FeedEvent.Delete) nodes.delete(name);
    else nodes.set(name, { ...(o.metadata?.labels ?? {}) });
    markAll();
  };

  return {
    async start() {
      await Promise.all([
        feeds.runtimePolicies.start(onPolicy(KINDS[0])),
        feeds.runtimeHostPolicies.start(onPolicy(KINDS[1])),
        feeds.reports.start(onReport),
        feeds.nodes.start(onNode),
      ]);
      started = true;
      resyncTimer = setInterval(markAll, resync);
      markAll();
    },
    setLeader(value) {
      leader = value;
      if (value) markAll();
      else if (timer) {
        clearTimeout(timer);
        timer = undefined;
        timerAt = Infinity;
      }
    },
    writes: () => writes,
    passes: () => ({ count: passCount, pending: dirty.size > 0 || timer !== undefined || inPass }),
    badReports: () => bad,
    async stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      if (resyncTimer) clearInterval(resyncTimer);
      await pass;
      await Promise.all(Object.values(feeds).map((f: KubeFeed) => f.stop()));
    },
  };
}
