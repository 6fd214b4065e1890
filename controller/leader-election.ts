// Leader election on a coordination.k8s.io/v1 Lease (@kubernetes/client-node has no helper for it): the
// candidate that creates the Lease or finds it expired takes it by an update carrying the resourceVersion it
// read (optimistic concurrency: of two candidates only one update succeeds), then renews it every retry
// period. Expiry is judged by the local clock from when this candidate last saw the Lease record change (as
// client-go does), so clock skew between nodes does not matter. A leader that cannot renew within the renew
// deadline stops leading before its Lease can expire, so two leaders never write at once.
import type { Logger } from 'pino';

/** The Lease fields the election reads and writes. */
export interface LeaseRecord {
  holderIdentity?: string;
  leaseDurationSeconds?: number;
  acquireTime?: string;
  renewTime?: string;
  leaseTransitions?: number;
}

/** A Lease as read: its record and resourceVersion. */
export interface StoredLease {
  record: LeaseRecord;
  resourceVersion: string;
}

/** The narrow interface to the API server's Lease (controller/io/kubernetes-lease-store.ts). */
export interface LeaseStore {
  get(): Promise<StoredLease | undefined>;
  /** Creates the Lease; false when it already exists. */
  create(record: LeaseRecord): Promise<boolean>;
  /** Replaces the Lease if still at `resourceVersion`; false on a conflict. */
  update(record: LeaseRecord, resourceVersion: string): Promise<boolean>;
}

/** Options of the election. */
export interface LeaderElectionOptions {
  store: LeaseStore;
  identity: string;
  /** How long a Lease not renewed stays valid for the others (whole seconds on the Lease; default 15 s). */
  leaseDurationMs?: number;
  /** A leader that could not renew for this long steps down (default 10 s; less than the duration). */
  renewDeadlineMs?: number;
  /** Period of acquisition attempts and renewals (default 2 s). */
  retryPeriodMs?: number;
  onStartedLeading: () => void;
  onStoppedLeading: () => void;
  logger: Logger;
  now?: () => number;
}

/** A running election. */
export interface LeaderElection {
  isLeader(): boolean;
  /** Stops; a leader gives the Lease up (empty holder) so another candidate takes over at once. */
  stop(): Promise<void>;
}

/** MicroTime as the API server writes it (RFC 3339, microseconds, UTC). */
function microTime(ms: number): string {
  return new Date(ms).toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
}

/** Starts campaigning. */
export function startLeaderElection(options: LeaderElectionOptions): LeaderElection {
  const now = options.now ?? Date.now;
  const duration = options.leaseDurationMs ?? 15000;
  const renewDeadline = options.renewDeadlineMs ?? 10000;
  const retry = options.retryPeriodMs ?? 2000;
  const durationSeconds = Math.max(1, Math.ceil(duration / 1000));
  const { logger, store, identity } = options;
  let leader = false;
  let stopped = false;
  let lastRenew = 0;
  /** The record last read and when it was first seen so (local clock). */
  let observed: { json: string; at: number } | undefined;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> = Promise.resolve();

  const setLeader = (value: boolean): void => {
    if (leader === value) return;
    leader = value;
    logger.info({ identity, leader: value }, value ? 'became the leader' : 'stopped leading');
    if (value) options.onStartedLeading();
    else options.onStoppedLeading();
  };

  const attempt = async (): Promise<boolean> => {
    const t = now();
    const current = await store.get();
    if (current === undefined) {
      const created = await store.create({
        holderIdentity: identity,
        leaseDurationSeconds: durationSeconds,
        acquireTime: microTime(t),
        renewTime: microTime(t),
        leaseTransitions: 0,
      });
      return created;
    }
    const json = JSON.stringify(current.record);
    if (observed?.json !== json) observed = { json, at: t };
    const holder = current.record.holderIdentity ?? '';
    const held = holder !== '' && holder !== identity;
    const validMs = (current.record.leaseDurationSeconds ?? durationSeconds) * 1000;
    if (held && observed.at + validMs > t) return false;
    const record: LeaseRecord = {
      holderIdentity: identity,
      leaseDurationSeconds: durationSeconds,
      acquireTime: holder === identity ? (current.record.acquireTime ?? microTime(t)) : microTime(t),
      renewTime: microTime(t),
      leaseTransitions: (current.record.leaseTransitions ?? 0) + (holder === identity ? 0 : 1),
    };
    const ok = await store.update(record, current.resourceVersion);
    if (ok) observed = { json: JSON.stringify(record), at: t };
    return ok;
  };

  const tick = async (): Promise<void> => {
    if (stopped) return;
    let ok = false;
    try {
      ok = await attempt();
    } catch (err) {
      logger.warn({ err }, 'lease request failed');
    }
    if (stopped) return;
    if (ok) {
      lastRenew = now();
      setLeader(true);
    } else if (leader && now() - lastRenew >= renewDeadline) setLeader(false);
    else if (leader && !ok) {
      // Another candidate holds the Lease now (our update conflicted and its holder is not us).
      const current = await store.get().catch(() => undefined);
      if (current !== undefined && current.record.holderIdentity !== identity) setLeader(false);
    }
    timer = setTimeout(() => {
      running = tick();
    }, retry);
  };
  running = tick();

  return {
    isLeader: () => leader,
    async stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      await running;
      if (leader) {
        try {
          const current = await store.get();
          if (current?.record.holderIdentity === identity)
            await store.update(
              { ...current.record, holderIdentity: '', leaseDurationSeconds: 1, renewTime: microTime(now()) },
              current.resourceVersion,
            );
        } catch (err) {
          logger.warn({ err }, 'cannot give up the lease');
        }
        setLeader(false);
      }
    },
  };
}
