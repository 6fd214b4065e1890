// The alert log (`rtctl enforcer run --alert-log FILE`): every alert appended as one NDJSON line, written in
// batches, rotated by size into FILE.1 … FILE.<files-1> (the oldest removed), created with mode 0640 and an
// optional group. Opened synchronously so that a bad path is a start-up error, before any data plane runs.
//
// Written again after a restart: the data plane resends every event not acknowledged, and an event is
// acknowledged only after its alert is written, so an enforcer killed between the two would write that alert
// twice. With `resume(identity)`, each batch that carries events' sequence numbers is preceded by a mark in
// FILE.mark (the numbering's identity, the batch's last number, the file, offset, length and a CRC-32 of its
// last bytes); on start the mark is checked against the log, and only when those bytes are there are events
// up to that number known written. A mark that cannot be checked proves nothing: those events are
// written again (at least once, never lost).
import {
  closeSync,
  constants as fsConstants,
  existsSync,
  fchmodSync,
  fchownSync,
  fstatSync,
  openSync,
  readSync,
  renameSync,
  unlinkSync,
  write,
  writeSync,
  writev,
  writevSync,
} from 'node:fs';
import { crc32 } from 'node:zlib';
import type { Logger } from 'pino';
import { encodedBuffers, type SequencedAlert } from '../alerts/alert-hub.js';

/** Options of the alert log. */
export interface AlertLogOptions {
  path: string;
  /** Rotate when the file would pass this size (default 64 MiB). */
  maxBytes?: number;
  /** Files kept, the one being written included (default 5): FILE, FILE.1 … FILE.<files-1>. */
  maxFiles?: number;
  /** File mode (default 0o640). */
  mode?: number;
  /** Group id owning the files (default: the process's). */
  gid?: number;
  /**
   * Write on the event loop's thread while writes are fast (default true); false: always in the thread
   * pool. Either way a write slower than SLOW_WRITE_MS moves the log to the thread pool for good.
   */
  writeOnThread?: boolean;
  logger: Logger;
}

/** What the log did (for /status). */
export interface AlertLogStats {
  path: string;
  bytes: number;
  rotations: number;
  /** Batches that could not be written (the alerts were still published on the stream). */
  writeErrors: number;
  /** Events resent after a restart whose alerts the log already held: not written again. */
  alreadyWritten: number;
  /** Marks (FILE.mark) that could not be written: after a restart, those events' alerts are written again. */
  markErrors: number;
}

/** An open alert log. */
export interface AlertLog {
  /**
   * Appends one line (no newline), or a hub's alert (its bytes are the hub's, encoded once for every writer);
   * `onWritten` runs once it is written (or its write failed, counted).
   */
  append(line: string | SequencedAlert, onWritten?: () => void, seq?: number): void;
  /**
   * Starts marking batches with the events' numbering `identity` (undefined: no marks) and returns the
   * highest sequence number of that numbering whose alert the log is known to hold, 0 when none. Call once,
   * before the first append with a sequence number.
   */
  resume(identity: string | undefined): number;
  /** True, and counted, when the alert of event `seq` was written before the restart (seq ≤ what resume said). */
  holds(seq: number): boolean;
  stats(): AlertLogStats;
  /** Writes what is pending and closes the file. */
  close(): Promise<void>;
}

/** A write taking longer than this (ms) moves the log's writes off the event loop's thread. */
const SLOW_WRITE_MS = 5;

/** Defaults of the alert log. */
export const ALERT_LOG_DEFAULTS = { maxBytes: 64 * 1024 * 1024, maxFiles: 5, mode: 0o640 } as const;

/** Size of FILE.mark: one JSON line padded with spaces, rewritten in place. */
const MARK_BYTES = 512;

/**
 * The CRC-32 covers the batch's last bytes, up to this many: its last lines, whose time stamps, process ids
 * and resources are this batch's alone, and the bytes a write cut short or a disk that lost them would miss.
 */
const MARK_CHECKED_BYTES = 4096;

/** What FILE.mark says: the batch written after it holds events up to `seq` of the numbering `id`. */
interface LogMark {
  id: string;
  seq: number;
  dev: number;
  ino: number;
  offset: number;
  length: number;
  /** CRC-32 of the last min(length, MARK_CHECKED_BYTES) bytes of the batch. */
  crc: number;
}

/** The mark file of a log. */
export function alertLogMarkPath(path: string): string {
  return `${path}.mark`;
}

function parseMark(text: string): LogMark | undefined {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (typeof v !== 'object' || v === null) return undefined;
  const m = v as Record<string, unknown>;
  const counts = ['seq', 'dev', 'ino', 'offset', 'length', 'crc'] as const;
  if (
    typeof m['id'] !== 'string' ||
    !counts.every((k) => Number.isSafeInteger(m[k]) && (m[k] as number) >= 0)
  ) {
    return undefined;
  }
  return m as unknown as LogMark;
}

/** CRC-32 of `length` bytes (at most MARK_CHECKED_BYTES) of `fd` from `offset`, or undefined when the file is shorter. */
function crcOfRange(fd: number, offset: number, length: number): number | undefined {
  const bytes = Buffer.alloc(length);
  for (let done = 0; done < length;) {
    const n = readSync(fd, bytes, done, length - done, offset + done);
    if (n === 0) return undefined;
    done += n;
  }
  return crc32(bytes);
}

/** Whether the batch a mark describes is in one of the log's files: long enough, and its last bytes as marked. */
function markHolds(mark: LogMark, files: readonly string[]): boolean {
  for (const file of files) {
    let fd: number;
    try {
      fd = openSync(file, 'r');
    } catch {
      continue;
    }
    try {
      const st = fstatSync(fd);
      if (st.dev !== mark.dev || st.ino !== mark.ino) continue;
      const checked = Math.min(mark.length, MARK_CHECKED_BYTES);
      const from = mark.offset + mark.length - checked;
      return st.size >= mark.offset + mark.length && crcOfRange(fd, from, checked) === mark.crc;
    } finally {
      closeSync(fd);
    }
  }
  return false;
}

/** The byte at `size - 1` of the open log; a newline when it cannot be read (then nothing is added). */
function lastByteOf(fd: number, size: number): number {
  const one = Buffer.alloc(1);
  try {
    return readSync(fd, one, 0, 1, size - 1) === 1 ? (one[0] as number) : 0x0a;
  } catch {
    return 0x0a;
  }
}

/** The names of the files of a log, newest first: FILE, FILE.1, …, FILE.<files-1>. */
export function alertLogFiles(path: string, maxFiles: number): string[] {
  return Array.from({ length: Math.max(1, maxFiles) }, (_, i) => (i === 0 ? path : `${path}.${i}`));
}

/** Opens (creating) the log; throws the file system's error (ENOENT, EACCES, …) at once. */
export function openAlertLog(options: AlertLogOptions): AlertLog {
  const maxBytes = options.maxBytes ?? ALERT_LOG_DEFAULTS.maxBytes;
  const maxFiles = options.maxFiles ?? ALERT_LOG_DEFAULTS.maxFiles;
  const mode = options.mode ?? ALERT_LOG_DEFAULTS.mode;
  const { path, logger } = options;
  const openFile = (): number => {
    // Appending (O_APPEND governs writes only), and readable for the one look at the last byte at start.
    const fd = openSync(path, 'a+', mode);
    try {
      // An existing file keeps the mode it was created with: set ours.
      fchmodSync(fd, mode);
      if (options.gid !== undefined) fchownSync(fd, -1, options.gid);
    } catch (err) {
      closeSync(fd);
      throw err;
    }
    return fd;
  };
  let fd = openFile();
  let bytes = fstatSync(fd).size;
  if (bytes > 0 && lastByteOf(fd, bytes) !== 0x0a) {
    // A write cut short by a crash left a partial last line: end it, so the next line stays whole (readers
    // skip the partial one).
    writeSync(fd, '\n');
    bytes++;
  }
  let rotations = 0;
  let writeErrors = 0;
  let alreadyWritten = 0;
  let markErrors = 0;
  /** Marking: the numbering's identity, FILE.mark's descriptor, and the highest number known written. */
  let markId: string | undefined;
  let markFd: number | undefined;
  let heldUpTo = 0;
  let pendingSeq = 0;
  /** Device and inode of the file being written (read once per file). */
  let fileId: { dev: number; ino: number } | undefined;
  const markBuf = Buffer.alloc(MARK_BYTES);
  let writeOnThread = options.writeOnThread ?? true;
  let pending: (string | SequencedAlert)[] = [];
  let callbacks: (() => void)[] = [];
  let writing = false;
  let scheduled = false;
  let closed = false;
  let idle: (() => void)[] = [];

  const rotate = (): void => {
    closeSync(fd);
    const files = alertLogFiles(path, maxFiles);
    const oldest = files[files.length - 1];
    if (oldest !== undefined && existsSync(oldest)) unlinkSync(oldest);
    for (let i = files.length - 2; i >= 0; i--) {
      const from = files[i];
      const to = files[i + 1];
      if (from !== undefined && to !== undefined && existsSync(from)) renameSync(from, to);
    }
    fd = openFile();
    bytes = 0;
    fileId = undefined;
    rotations++;
    logger.info({ path, rotations }, 'alert log rotated');
  };

  const writeAll = (buf: Buffer, offset: number, done: (err: Error | null) => void): void => {
    write(fd, buf, offset, buf.length - offset, null, (err, n) => {
      if (err) done(err);
      else if (offset + n < buf.length) writeAll(buf, offset + n, done);
      else done(null);
    });
  };

  /**
   * Writes the buffers in order, in one call when the file takes them whole: on this thread while the file
   * system takes a batch in under SLOW_WRITE_MS (a local disk's page cache: one system call, where the
   * thread pool costs two thread switches per batch), else, from the first slow write on, in the thread
   * pool, so that a slow or network file system does not hold up the event loop again.
   */
  const writeBuffers = (
    bufs: Buffer[],
    size: number,
    mark: Buffer | undefined,
    done: (err: Error | null) => void,
  ): void => {
    if (writeOnThread) {
      const started = process.hrtime.bigint();
      let error: Error | null = null;
      if (mark !== undefined) writeMark(mark);
      try {
        let n = bufs.length === 1 ? writeSync(fd, bufs[0] as Buffer) : writevSync(fd, bufs);
        if (n < size) {
          const rest = Buffer.concat(bufs, size);
          while (n < size) n += writeSync(fd, rest, n, size - n);
        }
      } catch (err) {
        error = err as Error;
      }
      const ms = Number(process.hrtime.bigint() - started) / 1e6;
      if (ms > SLOW_WRITE_MS) {
        writeOnThread = false;
        logger.warn({ path, ms }, 'alert log write was slow; writing in the thread pool from now on');
      }
      done(error);
      return;
    }
    if (mark !== undefined && markFd !== undefined) {
      // In the thread pool too, the mark is written before the batch.
      write(markFd, mark, 0, mark.length, 0, (err) => {
        if (err) markFailed(err);
        writeBuffers(bufs, size, undefined, done);
      });
      return;
    }
    if (bufs.length === 1) {
      writeAll(bufs[0] as Buffer, 0, done);
      return;
    }
    writev(fd, bufs, null, (err, n) => {
      if (err) done(err);
      else if (n < size) writeAll(Buffer.concat(bufs, size), n, done);
      else done(null);
    });
  };

  const markFailed = (err: unknown): void => {
    if (markErrors++ === 0) {
      logger.warn(
        { err, path },
        'alert log mark write failed; after a restart those alerts may be written twice',
      );
    }
  };

  const writeMark = (mark: Buffer): void => {
    if (markFd === undefined) return;
    try {
      writeSync(markFd, mark, 0, mark.length, 0);
    } catch (err) {
      markFailed(err);
    }
  };

  /** The mark for a batch of `bufs` (holding events up to `seq`) about to be written at the end of the file. */
  const markFor = (bufs: readonly Buffer[], size: number, seq: number): Buffer | undefined => {
    if (markFd === undefined || markId === undefined || seq === 0) return undefined;
    // The batch's last bytes, from its last buffers.
    let first = bufs.length;
    let skip = 0;
    for (let covered = 0; first > 0 && covered < MARK_CHECKED_BYTES;) {
      const b = bufs[--first] as Buffer;
      covered += b.length;
      skip = Math.max(0, covered - MARK_CHECKED_BYTES);
    }
    let crc = 0;
    for (let i = first; i < bufs.length; i++) {
      const b = bufs[i] as Buffer;
      crc = crc32(i === first && skip > 0 ? b.subarray(skip) : b, crc);
    }
    fileId ??= fstatSync(fd);
    const mark: LogMark = {
      id: markId,
      seq,
      dev: fileId.dev,
      ino: fileId.ino,
      offset: bytes,
      length: size,
      crc,
    };
    markBuf.fill(0x20);
    markBuf.write(JSON.stringify(mark), 0, 'utf8');
    markBuf[MARK_BYTES - 1] = 0x0a;
    return markBuf;
  };

  /** The pending lines as bytes, in order: strings encoded together, alerts as the hub's bytes. */
  const bytesOf = (lines: readonly (string | SequencedAlert)[]): Buffer[] => {
    const out: Buffer[] = [];
    let strings: string[] = [];
    let alerts: SequencedAlert[] = [];
    for (const l of lines) {
      if (typeof l === 'string') {
        if (alerts.length > 0) out.push(...encodedBuffers(alerts));
        alerts = [];
        strings.push(l);
      } else {
        if (strings.length > 0) out.push(Buffer.from(`${strings.join('\n')}\n`));
        strings = [];
        alerts.push(l);
      }
    }
    if (alerts.length > 0) out.push(...encodedBuffers(alerts));
    if (strings.length > 0) out.push(Buffer.from(`${strings.join('\n')}\n`));
    return out;
  };

  const flush = (): void => {
    scheduled = false;
    if (writing) return;
    if (pending.length === 0) {
      for (const f of idle.splice(0)) f();
      return;
    }
    const bufs = bytesOf(pending);
    let size = 0;
    for (const b of bufs) size += b.length;
    const done = callbacks;
    const seq = pendingSeq;
    pending = [];
    callbacks = [];
    pendingSeq = 0;
    writing = true;
    try {
      if (bytes > 0 && bytes + size > maxBytes) rotate();
    } catch (err) {
      writeErrors++;
      logger.error({ err, path }, 'alert log rotation failed; writing on');
    }
    let mark: Buffer | undefined;
    try {
      mark = markFor(bufs, size, seq);
    } catch (err) {
      markFailed(err);
    }
    writeBuffers(bufs, size, mark, (err) => {
      writing = false;
      if (err) {
        writeErrors++;
        logger.error(
          { err, path, lines: done.length },
          'alert log write failed; those alerts are only on the stream',
        );
      } else bytes += size;
      for (const f of done) f();
      flush();
    });
  };

  return {
    append(line, onWritten, seq) {
      if (closed) {
        onWritten?.();
        return;
      }
      pending.push(line);
      if (seq !== undefined && seq > pendingSeq) pendingSeq = seq;
      if (onWritten) callbacks.push(onWritten);
      if (!scheduled && !writing) {
        scheduled = true;
        setImmediate(flush);
      }
    },
    resume(identity) {
      if (markFd !== undefined || identity === undefined) return heldUpTo;
      const markPath = alertLogMarkPath(path);
      try {
        markFd = openSync(markPath, fsConstants.O_RDWR | fsConstants.O_CREAT, mode);
        fchmodSync(markFd, mode);
        if (options.gid !== undefined) fchownSync(markFd, -1, options.gid);
      } catch (err) {
        if (markFd !== undefined) closeSync(markFd);
        markFd = undefined;
        logger.warn(
          { err, path: markPath },
          'cannot open the alert log mark; after a restart alerts may be written twice',
        );
        return 0;
      }
      markId = identity;
      const text = Buffer.alloc(MARK_BYTES);
      const n = readSync(markFd, text, 0, MARK_BYTES, 0);
      const mark = parseMark(text.subarray(0, n).toString('utf8').trim());
      if (mark !== undefined && mark.id === identity && markHolds(mark, alertLogFiles(path, maxFiles))) {
        heldUpTo = mark.seq;
        logger.info(
          { path, seq: heldUpTo },
          'alert log holds the events up to this number; resent ones are not written again',
        );
      }
      return heldUpTo;
    },
    holds(seq) {
      if (seq > heldUpTo) return false;
      alreadyWritten++;
      return true;
    },
    stats: () => ({ path, bytes, rotations, writeErrors, alreadyWritten, markErrors }),
    async close() {
      if (closed) return;
      await new Promise<void>((resolve) => {
        idle.push(resolve);
        if (!writing && !scheduled) flush();
      });
      closed = true;
      idle = [];
      closeSync(fd);
      if (markFd !== undefined) closeSync(markFd);
      markFd = undefined;
    },
  };
}
