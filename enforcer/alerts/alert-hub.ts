// In-memory alert hub: a bounded history with sequence numbers, and live subscribers. The stream server and
// the relay both serve from a hub. The history is a ring of `capacity` alerts addressed by sequence number,
// so a reader at any position costs nothing per follower (followers keep a cursor, not a queue). The history
// holds each alert as its JSON line only (and its time): the record object is handed to the subscribers at
// publish and then let go, and `alert` of a held item is parsed from the line when asked (rarely: `since=`
// reads the time, the stream the line).
// Each line is encoded to UTF-8 once, for every writer: the first writer that asks for the bytes of an alert
// (the alert log, a stream) has every alert published since the last encoding joined and encoded in one go
// (a segment), and each alert keeps its span of that segment, so the log and every follower write views of
// the same bytes. An alert is encoded before it leaves the ring at the latest, so a writer still holding
// it (the log) always finds its bytes.
import { randomUUID } from 'node:crypto';
import { alertTimeMs } from './alert-filter.js';
import type { AlertRecord } from './alert-record.js';

/** The UTF-8 bytes of one alert line and its newline: `buffer[start, end)`, shared with its neighbours. */
export interface EncodedSpan {
  readonly buffer: Buffer;
  readonly start: number;
  readonly end: number;
}

/** One alert with its sequence number in this hub (1-based, increasing). */
export interface SequencedAlert {
  readonly seq: number;
  readonly alert: AlertRecord;
  /** The alert as one JSON line, without the newline. */
  readonly line: string;
  /** alertTimeMs(alert): ms since the epoch (NaN when the record has no time). */
  readonly timeMs: number;
  /** The line and its newline as UTF-8 (encoded once per hub, shared by every writer). */
  encoded(): EncodedSpan;
}

/** Most bytes encoded into one segment (a burst longer than this is encoded in several). */
const SEGMENT_BYTES = 256 * 1024;

/**
 * A held alert: the line until it is encoded, then its bytes only (off the JavaScript heap, so the history
 * costs the garbage collector nothing to keep), and the record only while its subscribers run.
 */
class HeldAlert implements SequencedAlert, EncodedSpan {
  buffer: Buffer = EMPTY;
  start = 0;
  end = 0;
  constructor(
    readonly seq: number,
    private text: string | undefined,
    readonly timeMs: number,
    private record: AlertRecord | undefined,
    private readonly encodeUpTo: (seq: number) => void,
  ) {}

  get line(): string {
    return this.text ?? this.buffer.toString('utf8', this.start, this.end - 1);
  }

  get alert(): AlertRecord {
    return this.record ?? (JSON.parse(this.line) as AlertRecord);
  }

  encoded(): EncodedSpan {
    if (this.buffer === EMPTY) this.encodeUpTo(this.seq);
    return this;
  }

  /** Called by the hub once the line is encoded into `buffer[start, end)`. */
  setEncoded(buffer: Buffer, start: number, end: number): void {
    this.buffer = buffer;
    this.start = start;
    this.end = end;
    this.text = undefined;
  }

  release(): void {
    this.record = undefined;
  }
}

const EMPTY = Buffer.alloc(0);

/**
 * The spans of consecutive alerts merged where they are adjacent in one segment: the bytes of `items` in
 * order, as few buffers as possible (views, nothing copied).
 */
export function encodedBuffers(items: readonly SequencedAlert[]): Buffer[] {
  const out: Buffer[] = [];
  let buffer: Buffer | undefined;
  let start = 0;
  let end = 0;
  for (const item of items) {
    const span = item.encoded();
    if (span.buffer === buffer && span.start === end) {
      end = span.end;
      continue;
    }
    if (buffer !== undefined) out.push(buffer.subarray(start, end));
    ({ buffer, start, end } = span);
  }
  if (buffer !== undefined) out.push(buffer.subarray(start, end));
  return out;
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
  /** Every alert up to this sequence number is encoded. */
  let encodedUpTo = 0;
  const firstHeld = (): number => Math.max(1, seq - capacity + 1);
  const at = (s: number): SequencedAlert | undefined =>
    Number.isInteger(s) && s >= firstHeld() && s <= seq ? ring[s % capacity] : undefined;
  /** Encodes every alert not yet encoded, through `upTo` at least (and on to the newest, in segments). */
  const encodeUpTo = (upTo: number): void => {
    while (encodedUpTo < upTo) {
      const first = encodedUpTo + 1;
      const lines: string[] = [];
      let size = 0;
      let last = first - 1;
      while (last < seq && size < SEGMENT_BYTES) {
        const item = ring[(last + 1) % capacity] as HeldAlert;
        lines.push(item.line);
        size += item.line.length + 1;
        last++;
      }
      lines.push('');
      const buffer = Buffer.from(lines.join('\n'));
      let offset = 0;
      for (let s = first; s <= last; s++) {
        const item = ring[s % capacity] as HeldAlert;
        // A JSON line holds no raw newline: the next newline byte ends it.
        const end = buffer.indexOf(10, offset) + 1;
        item.setEncoded(buffer, offset, end);
        offset = end;
      }
      encodedUpTo = last;
    }
  };
  const hub: AlertHub = {
    streamId: randomUUID(),
    publish(alert, timeMs) {
      // The alert leaving the ring is encoded first, for a writer that still holds it.
      if (seq - capacity + 1 > encodedUpTo) encodeUpTo(seq - capacity + 1);
      const item = new HeldAlert(
        ++seq,
        JSON.stringify(alert),
        timeMs ?? alertTimeMs(alert),
        alert,
        encodeUpTo,
      );
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
