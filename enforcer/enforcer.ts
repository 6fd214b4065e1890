// The enforcer's control loop: policy source → workload identity → node state (rule table + policy sets)
// → data plane; data-plane events → alert records → alert hub (and an optional NDJSON alert log).
// Reconciles on every policy change, on containerd's events (when followed) and on a workload poll; applies a
// new state only when it differs. With events the poll is a slow resync, and falls back to the poll period
// while the event stream is down.
// Start-up releases what it started when a later step fails: the data plane is stopped (and released
// unless it was already enforcing a state kept from a previous run), the policy source closed.
import type { Logger } from 'pino';
import type { PostureSettings } from '../compiler/model/posture.js';
import type { DataPlane, DataPlaneStats } from './data-plane.js';
import type { EnforcementTarget } from '../compiler/enforcement/enforcement-table.js';
import {
  summarizeEnforcement,
  type PolicyEnforcement,
} from '../compiler/enforcement/summarize-enforcement.js';
import type { ContainerLister } from './io/containerd-workloads.js';
import {
  createRefreshTrigger,
  type ContainerEvents,
  type ContainerEventStats,
} from './io/containerd-events.js';
import { buildAlertRecord, eventTimeMs } from './alerts/alert-record.js';
import type { AlertHub } from './alerts/alert-hub.js';
import type { AlertLog, AlertLogStats } from './io/alert-log.js';
import { createNodeStateBuilder, type NodeState } from './node-state.js';
import type { PolicySnapshot, PolicySource } from './policy-source.js';
import { describeHost, type Workload } from './workload.js';

/** Options of the enforcer. */
export interface EnforcerOptions {
  source: PolicySource;
  containers: ContainerLister;
  plane: DataPlane;
  /** What the running plane is in the enforcement table (`bpf-lsm`, `fanotify`): `/status` reports per policy. */
  enforcementTarget: EnforcementTarget;
  hub: AlertHub;
  clusterName: string;
  nodeName: string;
  /** Configured host and default postures (docs/semantics.md "Postures"). */
  postureSettings?: PostureSettings;
  /** Node labels when the source gives none (directory mode). */
  nodeLabels: Record<string, string>;
  /** Workload poll period, ms (without `containerEvents`, or while their stream is down). */
  pollMs: number;
  /** containerd's event stream: a container is listed when it starts, not at the next poll. */
  containerEvents?: ContainerEvents;
  /** With `containerEvents` up: the full list's period, ms (the safety net; default 30 000). */
  resyncMs?: number;
  /** Append every alert here as NDJSON (opened, and its tail replayed into the hub, by the caller). */
  alertLog?: AlertLog;
  /** Called after each reconcile with the snapshot whose state the plane has in force (the node report). */
  onStateApplied?: (snapshot: PolicySnapshot, state: NodeState) => void;
  logger: Logger;
}

/** What `GET /status` shows. */
export interface EnforcerStatus {
  node: string;
  cluster: string;
  dataPlane: string;
  generation: number;
  policies: number;
  diagnostics: number;
  workloads: { key: string; namespace: string; pod: string; container: string; policies: string[] }[];
  alerts: number;
  stats: DataPlaneStats;
  /** Per policy: the rules the running plane enforces, audits only, or cannot enforce (docs/enforcement.md). */
  enforcement: PolicyEnforcement[];
  alertLog?: AlertLogStats;
  /** containerd's event stream, when followed: up or not, clients started, events, lines refused. */
  containerEvents?: ContainerEventStats;
  /** True once enforcement was released (`rtctl uninstall`); the process stays up until deleted. */
  released?: boolean;
}

/** A running enforcer. */
export interface Enforcer {
  start(): Promise<void>;
  /** Reconciles now (tests and the poll call it); resolves when the resulting state is applied. */
  reconcile(): Promise<void>;
  status(): Promise<EnforcerStatus>;
  /**
   * Releases the data plane (what `rtctl enforcer stop` does) and stops enforcing: no reconcile applies a
   * state again. The alert server and the process stay up until stop().
   */
  release(): Promise<void>;
  /** Stops; with keepEnforcing the data plane keeps the last state in force (restart of this process). */
  stop(options: { keepEnforcing: boolean }): Promise<void>;
}

/** Creates the enforcer. */
export function createEnforcer(options: EnforcerOptions): Enforcer {
  const { logger, plane } = options;
  let snapshot: PolicySnapshot | undefined;
  let current: NodeState | undefined;
  let generation = 0;
  let poll: NodeJS.Timeout | undefined;
  /** Whether containerd's event stream is up (the poll then runs at the resync period). */
  let streamUp = false;
  let running: Promise<void> = Promise.resolve();
  const log = options.alertLog;
  let stopped = false;
  let released = false;
  /** Every workload seen, so events of a workload that just left still get its identity. */
  const known = new Map<string, Workload>();
  let eventsDone: Promise<void> = Promise.resolve();
  /** Rebuilds the table only when the policies changed, and selects only against policies not seen. */
  const buildNodeState = createNodeStateBuilder();

  let containers: Workload[] | undefined;
  let listFailing = false;

  /**
   * Lists the containers (one listing at a time, at most one queued: a caller arriving during a listing gets
   * the next one, which starts after whatever made it ask). It runs outside the build-and-apply chain, so a
   * policy change never waits behind a listing (`ctr` takes tens of milliseconds); the next apply uses the list.
   */
  let listing: Promise<void> | undefined;
  let relisting: Promise<void> | undefined;
  const listContainers = (): Promise<void> => {
    if (listing !== undefined) {
      relisting ??= listing.then(() => {
        relisting = undefined;
        return listContainers();
      });
      return relisting;
    }
    listing = (async () => {
      if (snapshot === undefined || stopped || released) return;
      const podLabels = snapshot.podLabels;
      try {
        containers = await options.containers.list(
          podLabels ? (ns, pod) => podLabels.get(`${ns}/${pod}`) : undefined,
        );
        listFailing = false;
      } catch (err) {
        // A host without a reachable container runtime (systemd mode on a plain VM) still enforces host
        // policies: keep the last known containers (none at first) and try again on the next poll.
        if (!listFailing) logger.warn({ err }, 'cannot list containers; enforcing with the last known list');
        listFailing = true;
        containers ??= [];
      }
    })().finally(() => {
      listing = undefined;
    });
    return listing;
  };

  /** Builds the state from the newest snapshot and the last container list, and applies it when it changed. */
  const reconcileOnce = async (): Promise<void> => {
    if (snapshot === undefined || stopped || released) return;
    const snap = snapshot;
    const workloads = [describeHost(), ...(containers ?? [])];
    for (const w of workloads) known.set(w.key, w);
    if (known.size > 4096) {
      const live = new Set(workloads.map((w) => w.key));
      for (const k of known.keys()) if (!live.has(k) && known.size > 2048) known.delete(k);
    }
    const next = buildNodeState(
      {
        ...(snap.ruleTable !== undefined ? { ruleTable: snap.ruleTable } : { ruleSet: snap.ruleSet }),
        workloads,
        postures: snap.postures,
        ...(options.postureSettings !== undefined ? { postureSettings: options.postureSettings } : {}),
        nodeLabels: snap.nodeLabels ?? options.nodeLabels,
      },
      generation + 1,
    );
    if (current !== undefined && next.fingerprint === current.fingerprint) {
      options.onStateApplied?.(snap, current);
      return;
    }
    await plane.apply(next.state);
    generation = next.state.generation;
    current = next;
    options.onStateApplied?.(snap, next);
    logger.info(
      {
        generation,
        policies: next.policies.length,
        workloads: next.state.workloads.map((w) => w.anchor.key),
      },
      'enforcement state applied',
    );
  };

  /** Reconciles; re-lists containers on the poll (and the first time), reuses the last list on policy changes. */
  const reconcile = (refreshContainers = true): Promise<void> => {
    const listed = refreshContainers || containers === undefined ? listContainers() : Promise.resolve();
    return listed.then(() => {
      const p = running.then(reconcileOnce, reconcileOnce);
      running = p.catch((err: unknown) => logger.error({ err }, 'reconcile failed'));
      return p;
    });
  };

  /** Event- and poll-driven reconciles: one in flight, at most one queued, whatever the rate of requests. */
  const refresh = createRefreshTrigger(
    () => reconcile(),
    (err: unknown) => logger.error({ err }, 'reconcile failed'),
  );
  const schedulePoll = (): void => {
    if (poll) clearTimeout(poll);
    if (stopped || released) return;
    const period =
      options.containerEvents !== undefined && streamUp ? (options.resyncMs ?? 30_000) : options.pollMs;
    poll = setTimeout(() => {
      refresh.request();
      schedulePoll();
    }, period);
  };

  const consumeEvents = async (): Promise<void> => {
    const context = {
      clusterName: options.clusterName,
      hostName: options.nodeName,
      enforcer: plane.name,
      auditEnforcer: plane.auditName,
    };
    // Acknowledgement is cumulative ("every event up to seq is handled"), so an event is acknowledged only
    // once every event before it is handled too: published and, with a log, written. `waiting` holds, in
    // order, the sequence number to acknowledge when each alert still in the log's hands is written (the log
    // calls back in append order); one shared callback, nothing allocated per event.
    const waiting: (number | undefined)[] = [];
    let waitingHead = 0;
    const onLogged = (): void => {
      const seq = waiting[waitingHead++];
      if (waitingHead === waiting.length) {
        waiting.length = 0;
        waitingHead = 0;
      }
      if (seq !== undefined) plane.acknowledge?.(seq);
    };
    /** Nothing to write for event `seq`: acknowledged with the last alert still being written, or now. */
    const handledWithoutWriting = (seq: number | undefined): void => {
      if (seq === undefined) return;
      if (waitingHead < waiting.length) {
        const last = waiting.length - 1;
        waiting[last] = Math.max(waiting[last] ?? 0, seq);
      } else plane.acknowledge?.(seq);
    };
    // Events resent after a restart whose alerts the log already holds (written, then killed before the
    // acknowledgement went out) are acknowledged without being published or written again: the hub replayed
    // them from the log.
    if (log && plane.sequenceIdentity) {
      const identity = await plane.sequenceIdentity().catch((err: unknown) => {
        logger.warn(
          { err },
          'cannot tell the data plane event numbering; resent alerts may be written twice',
        );
        return undefined;
      });
      log.resume(identity);
    }
    for await (const event of plane.events()) {
      const seq = event.seq;
      if (seq !== undefined && log?.holds(seq) === true) {
        handledWithoutWriting(seq);
        continue;
      }
      const workload = current?.workloads.get(event.workload) ?? known.get(event.workload);
      if (workload === undefined) {
        logger.warn({ workload: event.workload }, 'event for an unknown workload');
        handledWithoutWriting(seq);
        continue;
      }
      const alert = buildAlertRecord(event, workload, context);
      const item = options.hub.publish(alert, eventTimeMs(event));
      if (log) {
        waiting.push(seq);
        log.append(item, onLogged, seq);
      } else if (seq !== undefined) plane.acknowledge?.(seq);
    }
  };

  return {
    async start() {
      try {
        await plane.start();
      } catch (err) {
        await plane.stop({ keepEnforcing: true }).catch(() => undefined);
        throw err;
      }
      let sourceStarted = false;
      let inherited = 0;
      try {
        inherited = (await plane.enforced()).generation;
        generation = inherited;
        snapshot = await options.source.start((s) => {
          snapshot = s;
          void reconcile(false);
        });
        sourceStarted = true;
        await reconcile();
      } catch (err) {
        // Leave nothing behind that this start began: a state kept from a previous run stays in force,
        // a plane that was enforcing nothing before is released.
        stopped = true;
        logger.error({ err }, 'enforcer start failed; releasing what it started');
        if (sourceStarted) await options.source.stop().catch(() => undefined);
        await plane.stop({ keepEnforcing: inherited > 0 }).catch(() => undefined);
        throw err;
      }
      eventsDone = consumeEvents().catch((err: unknown) => logger.error({ err }, 'event stream failed'));
      schedulePoll();
      options.containerEvents?.start({
        change: () => refresh.request(),
        up: () => {
          streamUp = true;
          refresh.request();
          schedulePoll();
        },
        down: () => {
          streamUp = false;
          schedulePoll();
        },
      });
    },
    reconcile,
    async release() {
      if (released || stopped) return;
      released = true;
      if (poll) clearTimeout(poll);
      await options.containerEvents?.stop();
      // A reconcile still listing (ctr can wait 10 s for an absent containerd) applies nothing once it is done.
      await running;
      await plane.stop({ keepEnforcing: false });
      logger.info('enforcement released; staying up until stopped');
    },
    async status() {
      // A released plane has stopped: it has nothing to count.
      const stats = released
        ? { decisions: 0, cacheHits: 0, reported: 0, dropped: 0, workloads: 0 }
        : await plane.stats();
      const workloads = (current?.state.workloads ?? []).map((w) => {
        const id = current?.workloads.get(w.anchor.key);
        return {
          key: w.anchor.key,
          namespace: id?.namespace ?? '',
          pod: id?.podName ?? '',
          container: id?.containerName ?? '',
          policies: w.policies.map((i) => current?.policies[i]?.name ?? String(i)),
        };
      });
      return {
        node: options.nodeName,
        cluster: options.clusterName,
        dataPlane: plane.name,
        generation: current?.state.generation ?? generation,
        policies: snapshot?.ruleTable?.table.policyCount ?? snapshot?.ruleSet.policies.length ?? 0,
        diagnostics: snapshot?.diagnostics.length ?? 0,
        workloads,
        alerts: options.hub.count(),
        stats,
        enforcement: (snapshot?.ruleSet.policies ?? []).map((p) =>
          summarizeEnforcement(p, options.enforcementTarget, plane.unavailableForms),
        ),
        ...(log ? { alertLog: log.stats() } : {}),
        ...(options.containerEvents ? { containerEvents: options.containerEvents.stats() } : {}),
        ...(released ? { released: true } : {}),
      };
    },
    async stop({ keepEnforcing }) {
      stopped = true;
      if (poll) clearTimeout(poll);
      await options.containerEvents?.stop();
      await options.source.stop();
      await running;
      if (!released) await plane.stop({ keepEnforcing });
      await eventsDone;
      await log?.close();
    },
  };
}
