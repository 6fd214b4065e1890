// In-memory alert hub: a bounded history with sequence numbers, and live subscribers. The stream server and
// the relay both serve from a hub. The history is a ring of `capacity` alerts addressed by sequence number,
// so a reader at any position costs nothing per follower (followers keep a cursor, not a queue). The history
// holds each alert as its JSON line only (and its time): the record object is handed to the subscribers at
// publish and then let go, and `alert` of a held item is parsed from the line when asked (rarely: `since=`
// reads the time, the stream the line).
import { randomUUID } from 'node:crypto';
import { alertTimeMs } from './alert-filter.js';
import type { AlertRecord } from './alert-record.js';

/** One alert with its sequence number in this hub (1-based, increasing). */
export interface SequencedAlert {
  readonly seq: number;
  readonly alert: AlertRecord;
  /** The alert as one JSON line, without the newline. */
  readonly line: string;
  /** alertTimeMs(alert): ms since the epoch (NaN when the record has no time). */
  readonly timeMs: number;
}

/** A held alert: the line, and the record only while its subscribers run. */
class HeldAlert implements SequencedAlert {
  constructor(
    readonly seq: number,
    readonly line: string,
    readonly timeMs: number,
    private record: AlertRecord | undefined,
  ) {}

  get alert(): AlertRecord {
    return this.record ?? (JSON.parse(this.line) as AlertRecord);
  }

  release(): void {
    this.record = undefined;
  }
}

/** Alert hub. */
export interface AlertHub {
  /** Changes when the hub is recreated (enforcer restart): clients then restart from the beginning. */
  readonly streamId: string;
  /** `timeMs`, when the caller has it, is alertTimeMs(alert) (saves reading it back from the record). */
  publish(alert: AlertRecord, timeMs?: number): SequencedAlert;
  /** Alerts with seq > after, from the history. */
  since(after: number): SequencedAlert[];
  /** The held alert with this sequence number, if it is still held. */
  at(seq: number): SequencedAlert | undefined;
  /** Sequence number of the oldest alert held (`count() + 1` when none is held). */
  firstHeld(): number;
  /** Called after every publish, with the alert just published. */
  subscribe(listener: (a: SequencedAlert) => void): () => void;
  /** Total published (the sequence number of the newest alert). */
  count(): number;
}

/** Creates a hub keeping the last `capacity` alerts. */
export function createAlertHub(capacity = 10000, initial: readonly AlertRecord[] = []): AlertHub {
  if (!Number.isInteger(capacity) || capacity < 1) throw new RangeError('hub capacity must be >= 1');
  const ring: (HeldAlert | undefined)[] = new Array<HeldAlert | undefined>(capacity);
  const listeners = new Set<(a: SequencedAlert) => void>();
  let seq = 0;
  const firstHeld = (): number => Math.max(1, seq - capacity + 1);
  const at = (s: number): SequencedAlert | undefined =>
    Number.isInteger(s) && s >= firstHeld() && s <= seq ? ring[s % capacity] : undefined;
  const hub: AlertHub = {
    streamId: randomUUID(),
    publish(alert, timeMs) {
      const item = new HeldAlert(++seq, JSON.stringify(alert), timeMs ?? alertTimeMs(alert), alert);
      ring[item.seq % capacity] = item;
      try {
        for (const l of listeners) l(item);
      } finally {
        item.release();
      }
      return item;
    },
    since(after) {
      const out: SequencedAlert[] = [];
      for (let s = Math.max(after + 1, firstHeld()); s <= seq; s++) {
        const item = ring[s % capacity];
        if (item) out.push(item);
      }
      return out;
    },
    at,
    firstHeld,
    subscribe(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    count: () => seq,
  };
  for (const a of initial) hub.publish(a);
  return hub;
}
