// The alert log (`rtctl enforcer run --alert-log FILE`): every alert appended as one NDJSON line, written in
// batches, rotated by size into FILE.1 … FILE.<files-1> (the oldest removed), created with mode 0640 and an
// optional group. Opened synchronously so that a bad path is a start-up error, before any data plane runs.
import {
  closeSync,
  existsSync,
  fchmodSync,
  fchownSync,
  fstatSync,
  openSync,
  renameSync,
  unlinkSync,
  write,
  writeSync,
  writev,
  writevSync,
} from 'node:fs';
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
}

/** An open alert log. */
export interface AlertLog {
  /**
   * Appends one line (no newline), or a hub's alert (its bytes are the hub's, encoded once for every writer);
   * `onWritten` runs once it is written (or its write failed, counted).
   */
  append(line: string | SequencedAlert, onWritten?: () => void): void;
  stats(): AlertLogStats;
  /** Writes what is pending and closes the file. */
  close(): Promise<void>;
}

/** A write taking longer than this (ms) moves the log's writes off the event loop's thread. */
const SLOW_WRITE_MS = 5;

/** Defaults of the alert log. */
export const ALERT_LOG_DEFAULTS = { maxBytes: 64 * 1024 * 1024, maxFiles: 5, mode: 0o640 } as const;

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
    const fd = openSync(path, 'a', mode);
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
  let rotations = 0;
  let writeErrors = 0;
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
  const writeBuffers = (bufs: Buffer[], size: number, done: (err: Error | null) => void): void => {
    if (writeOnThread) {
      const started = process.hrtime.bigint();
      let error: Error | null = null;
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
    pending = [];
    callbacks = [];
    writing = true;
    try {
      if (bytes > 0 && bytes + size > maxBytes) rotate();
    } catch (err) {
      writeErrors++;
      logger.error({ err, path }, 'alert log rotation failed; writing on');
    }
    writeBuffers(bufs, size, (err) => {
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
    append(line, onWritten) {
      if (closed) {
        onWritten?.();
        return;
      }
      pending.push(line);
      if (onWritten) callbacks.push(onWritten);
      if (!scheduled && !writing) {
        scheduled = true;
        setImmediate(flush);
      }
    },
    stats: () => ({ path, bytes, rotations, writeErrors }),
    async close() {
      if (closed) return;
      await new Promise<void>((resolve) => {
        idle.push(resolve);
        if (!writing && !scheduled) flush();
      });
      closed = true;
      idle = [];
      closeSync(fd);
    },
  };
}
