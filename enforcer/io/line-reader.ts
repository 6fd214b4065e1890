// Reads newline-terminated lines from a stream, one at a time, as promises. Partial trailing data at the end
// of the stream is not a line (a line cut by a lost connection is not a line); `truncated()` says whether
// there was some. Optionally bounded: a line longer than `maxLineLength` characters fails the reader with a
// LineTooLongError instead of being buffered. The stream is paused while many lines wait to be taken.
import type { Readable } from 'node:stream';

/** Pulls lines from a stream. */
export interface LineReader {
  /** The next line without its newline, or undefined at end of stream; rejects once a line is too long. */
  next(): Promise<string | undefined>;
  /** True when the stream ended inside a line (bytes after the last newline). */
  truncated(): boolean;
}

/** Options of a line reader. */
export interface LineReaderOptions {
  /** Longest line accepted, in characters (default: unbounded). */
  maxLineLength?: number;
}

/** A line exceeded the reader's bound. */
export class LineTooLongError extends Error {
  constructor(readonly maxLineLength: number) {
    super(`a line longer than ${maxLineLength} characters`);
  }
}

/** Lines queued before the stream is paused. */
const HIGH_WATER_LINES = 1024;

/** Creates a line reader over a readable stream (sockets, HTTP responses, child output). */
export function createLineReader(stream: Readable, options: LineReaderOptions = {}): LineReader {
  const maxLineLength = options.maxLineLength ?? Infinity;
  const lines: string[] = [];
  const waiters: { resolve: (line: string | undefined) => void; reject: (err: Error) => void }[] = [];
  let partial = '';
  let ended = false;
  let failure: Error | undefined;
  stream.setEncoding('utf8');
  const fail = (err: Error): void => {
    failure = err;
    ended = true;
    lines.length = 0;
    partial = '';
    for (const w of waiters.splice(0)) w.reject(err);
    stream.destroy();
  };
  stream.on('data', (chunk: string) => {
    if (failure) return;
    let start = 0;
    let nl = chunk.indexOf('\n');
    while (nl !== -1) {
      const line = partial + chunk.slice(start, nl);
      partial = '';
      if (line.length > maxLineLength) {
        fail(new LineTooLongError(maxLineLength));
        return;
      }
      const w = waiters.shift();
      if (w) w.resolve(line);
      else lines.push(line);
      start = nl + 1;
      nl = chunk.indexOf('\n', start);
    }
    partial += chunk.slice(start);
    if (partial.length > maxLineLength) {
      fail(new LineTooLongError(maxLineLength));
      return;
    }
    if (lines.length >= HIGH_WATER_LINES) stream.pause();
  });
  const finish = (): void => {
    ended = true;
    for (const w of waiters.splice(0)) w.resolve(undefined);
  };
  stream.on('end', finish);
  stream.on('close', finish);
  stream.on('error', finish);
  return {
    next() {
      if (failure) return Promise.reject(failure);
      const line = lines.shift();
      if (line !== undefined) {
        if (lines.length < HIGH_WATER_LINES / 2 && stream.isPaused() && !ended) stream.resume();
        return Promise.resolve(line);
      }
      if (ended) return Promise.resolve(undefined);
      if (stream.isPaused()) stream.resume();
      return new Promise((resolve, reject) => waiters.push({ resolve, reject }));
    },
    truncated: () => partial !== '',
  };
}
