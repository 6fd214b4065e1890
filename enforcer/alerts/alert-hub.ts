// In-memory alert hub: a bounded history with sequence numbers, and live subscribers. The stream server and
// the relay both serve from a hub.
import { randomUUID } from 'node:crypto';
import type { AlertRecord } from './alert-record.js';

/** One alert with its sequence number in this hub (1-based, increasing). */
export interface SequencedAlert {
  seq: number;
  alert: AlertRecord;
  line: string;
}

/** Alert hub. */
export interface AlertHub {
  /** Changes when the hub is recreated (enforcer restart): clients then restart from the beginning. */
  readonly streamId: string;
  publish(alert: AlertRecord): SequencedAlert;
  /** Alerts with seq > after, from the history. */
  since(after: number): SequencedAlert[];
  subscribe(listener: (a: SequencedAlert) => void): () => void;
  /** Total published. */
  count(): number;
}

/** Creates a hub keeping the last `capacity` alerts. */
export function createAlertHub(capacity = 10000, initial: readonly AlertRecord[] = []): AlertHub {
  const history: SequencedAlert[] = [];
  const listeners = new Set<(a: SequencedAlert) => void>();
  let seq = 0;
  const hub: AlertHub = {
    streamId: randomUUID(),
    publish(alert) {
      const item = { seq: ++seq, alert, line: JSON.stringify(alert) };
      history.push(item);
      if (history.length > capacity) history.splice(0, history.length - capacity);
      for (const l of listeners) l(item);
      return item;
    },
    since(after) {
      return history.filter((h) => h.seq > after);
    },
    subscribe(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    count: () => seq,
  };
  for (const a of initial) hub.publish(a);
  return hub;
}
