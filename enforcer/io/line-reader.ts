// Reads newline-terminated lines from a stream, one at a time, as promises. Partial trailing data at the end
// of the stream is dropped (a line cut by a lost connection is not a line).
import type { Readable } from 'node:stream';

/** Pulls lines from a stream. */
export interface LineReader {
  /** The next line without its newline, or undefined at end of stream. */
  next(): Promise<string | undefined>;
}

/** Creates a line reader over a readable stream (sockets, HTTP responses, child output). */
export function createLineReader(stream: Readable): LineReader {
  const lines: string[] = [];
  const waiters: ((line: string | undefined) => void)[] = [];
  let partial = '';
  let ended = false;
  stream.setEncoding('utf8');
  stream.on('data', (chunk: string) => {
    partial += chunk;
    let nl = partial.indexOf('\n');
    while (nl !== -1) {
      const line = partial.slice(0, nl);
      partial = partial.slice(nl + 1);
      const w = waiters.shift();
      if (w) w(line);
      else lines.push(line);
      nl = partial.indexOf('\n');
    }
  });
  const finish = (): void => {
    ended = true;
    for (const w of waiters.splice(0)) w(undefined);
  };
  stream.on('end', finish);
  stream.on('close', finish);
  stream.on('error', finish);
  return {
    next() {
      const line = lines.shift();
      if (line !== undefined) return Promise.resolve(line);
      if (ended) return Promise.resolve(undefined);
      return new Promise((resolve) => waiters.push(resolve));
    },
  };
}
