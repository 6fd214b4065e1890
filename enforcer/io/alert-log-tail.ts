// Reads the last alerts of an alert log for replay on start, from the end backwards: the newest file
// first, then its rotated predecessors, never more than `maxScanBytes` in all and never a whole file in
// memory, so a log of any size (a multi-GB log from before rotation) restarts at once. Lines that are not
// JSON objects (cut by a crash) and lines longer than `maxLineBytes` are skipped.
import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import type { AlertRecord } from '../alerts/alert-record.js';
import { alertLogFiles } from './alert-log.js';

/** Options of the tail reader. */
export interface AlertLogTailOptions {
  /** Files of the log to consider, the active one included (default 5). */
  maxFiles?: number;
  /** Longest line kept, bytes (default 1 MiB). */
  maxLineBytes?: number;
  /** Bytes read at most, over all files (default 256 MiB). */
  maxScanBytes?: number;
  /**
   * Decides each alert, newest first: `keep` it (the default), `skip` it (it does not count towards `max`),
   * or `stop` reading (it and everything older are left out).
   */
  keep?: (alert: AlertRecord) => 'keep' | 'skip' | 'stop';
}

const CHUNK = 64 * 1024;

/** The last `max` alerts of the log, oldest first. Absent files are skipped. */
export function readAlertLogTail(
  path: string,
  max: number,
  options: AlertLogTailOptions = {},
): AlertRecord[] {
  const maxLineBytes = options.maxLineBytes ?? 1024 * 1024;
  let budget = options.maxScanBytes ?? 256 * 1024 * 1024;
  const newestFirst: AlertRecord[] = [];
  let stopped = false;
  const take = (line: Buffer): void => {
    if (line.length === 0 || stopped) return;
    let v: unknown;
    try {
      v = JSON.parse(line.toString('utf8'));
    } catch {
      return; // A line cut by a crash: skip it.
    }
    if (typeof v !== 'object' || v === null || Array.isArray(v)) return;
    const verdict = options.keep?.(v as AlertRecord) ?? 'keep';
    if (verdict === 'stop') stopped = true;
    else if (verdict === 'keep') newestFirst.push(v as AlertRecord);
  };
  for (const file of alertLogFiles(path, options.maxFiles ?? 5)) {
    if (newestFirst.length >= max || budget <= 0 || stopped) break;
    let fd: number;
    try {
      fd = openSync(file, 'r');
    } catch {
      continue;
    }
    try {
      let pos = fstatSync(fd).size;
      let carry = Buffer.alloc(0);
      let skipping = false;
      while (newestFirst.length < max && budget > 0 && !stopped) {
        if (pos === 0) {
          if (!skipping) take(carry);
          break;
        }
        const len = Math.min(CHUNK, pos, budget);
        const chunk = Buffer.allocUnsafe(len);
        const got = readSync(fd, chunk, 0, len, pos - len);
        if (got !== len) break; // the file shrank under us
        pos -= len;
        budget -= len;
        const buf = carry.length === 0 ? chunk : Buffer.concat([chunk, carry]);
        let end = buf.length;
        for (let i = buf.length - 1; i >= 0 && newestFirst.length < max && !stopped; i--) {
          if (buf[i] !== 0x0a) continue;
          if (skipping) skipping = false;
          else take(buf.subarray(i + 1, end));
          end = i;
        }
        carry = buf.subarray(0, end);
        if (carry.length > maxLineBytes) {
          carry = Buffer.alloc(0);
          skipping = true;
        } else {
          carry = Buffer.from(carry);
        }
      }
    } finally {
      closeSync(fd);
    }
  }
  return newestFirst.slice(0, max).reverse();
}
