// Policy source over a directory of YAML files (systemd mode: hosts and containers not orchestrated by
// Kubernetes). The directory is watched (inotify through fs.watch): a change is read at once, with no quiet
// period; changes that arrive while a reload runs are coalesced into one more reload after it. Only a changed
// file that reads as cut short (empty, or not ending in a newline: a writer mid-way) is read again: at the
// writer's next event, or after a short settle time when none comes, until two reads agree (a file that was
// emptied: for the whole settle budget, 10 reads). Only files whose text changed are linted again.
// A periodic rescan catches what a watch may miss (editors that replace files, network file systems).
import { watch, type FSWatcher } from 'node:fs';
import { stat } from 'node:fs/promises';
import { relative } from 'node:path';
import type { Logger } from 'pino';
import { Code } from '../../compiler/diagnostics/codes/code.js';
import type { Diagnostic } from '../../compiler/diagnostics/diagnostic.js';
import { readSources } from '../../compiler/io/read-sources.js';
import type { SourceText } from '../../compiler/lint.js';
import { createDiagnosticLog } from '../diagnostic-log.js';
import { createSnapshotBuilder } from '../policy-snapshot.js';
import type { PolicySnapshot, PolicySource } from '../policy-source.js';

/** Options of the directory source. */
export interface DirectorySourceOptions {
  dir: string;
  logger: Logger;
  /**
   * Settle time before reading again a changed file that reads as cut short (empty, or without its final
   * newline), ms; a change that reads whole is applied without waiting. Default 20.
   */
  settleMs?: number;
  /** Former name of `settleMs` (there is no quiet period any more). */
  debounceMs?: number;
  /** Rescan period, ms. */
  rescanMs?: number;
}

/**
 * Reads the policy files below `dir` through lint's reader (the same size bound, strict UTF-8, symbolic links
 * followed, hidden names passed over); file names are relative to `dir`. An empty directory is no finding here
 * (no policies yet); what cannot be read is.
 */
async function readTexts(dir: string): Promise<{ texts: SourceText[]; diagnostics: Diagnostic[] }> {
  const read = await readSources([dir]);
  return {
    texts: read.sources.map((s) => ({ file: relative(dir, s.file), text: s.text })),
    diagnostics: read.diagnostics
      .filter((d) => d.code !== Code.noPolicyFiles)
      .map((d) => ({ ...d, file: relative(dir, d.file) || '.' })),
  };
}

/** Creates the directory source. */
export function createDirectoryPolicySource(options: DirectorySourceOptions): PolicySource {
  const { dir, logger } = options;
  let watcher: FSWatcher | undefined;
  let rescan: NodeJS.Timeout | undefined;
  let lastKey: string | undefined;
  const logDiagnostics = createDiagnosticLog(logger);

  // Texts unchanged since the last load are not linted again (the rescan runs every few seconds), and the
  // diagnostics are logged only when their set changes.
  // What could not be read is part of the key, so a file turning unreadable is logged once too.
  let readDiagnostics: Diagnostic[] = [];
  const read = async (): Promise<{ texts: SourceText[]; key: string }> => {
    const { texts, diagnostics } = await readTexts(dir);
    readDiagnostics = diagnostics;
    const key = [
      ...texts.map((t) => `${t.file}\u0000${t.text}`),
      ...diagnostics.map((d) => `${d.code}\u0000${d.file}\u0000${d.message}`),
    ].join('\u0001');
    return { texts, key };
  };
  // Only the files whose text changed are parsed, checked and lowered again (the cross checks see all).
  const buildSnapshot = createSnapshotBuilder();
  const build = (texts: readonly SourceText[]): PolicySnapshot => {
    const snapshot = buildSnapshot(texts);
    logDiagnostics([...readDiagnostics, ...snapshot.diagnostics]);
    return snapshot;
  };

  /** Files whose text changed since the last snapshot and read as a writer mid-way. */
  const looksCut = (texts: readonly SourceText[]): boolean =>
    texts.some((t) => (t.text === '' || !t.text.endsWith('\n')) && lastTexts.get(t.file) !== t.text);
  /** Files that had text at the last snapshot and read empty now. */
  const emptied = (texts: readonly SourceText[]): boolean =>
    texts.some((t) => t.text === '' && (lastTexts.get(t.file) ?? '') !== '');
  let lastTexts = new Map<string, string>();
  let stopped = false;
  let busy = false;
  let dirty = false;
  const settleMs = options.settleMs ?? options.debounceMs ?? 20;
  /** The reload loop waiting for the next watch event (true) or its settle time (false). */
  let waiter: ((changed: boolean) => void) | undefined;
  const nextChangeWithin = (ms: number): Promise<boolean> =>
    new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => {
        waiter = undefined;
        resolve(false);
      }, ms);
      waiter = (changed) => {
        clearTimeout(timer);
        resolve(changed);
      };
    });

  return {
    async start(onChange) {
      await stat(dir);
      const first = await read();
      lastKey = first.key;
      lastTexts = new Map(first.texts.map((t) => [t.file, t.text]));
      const firstSnapshot = build(first.texts);
      // One reload at a time; a change during it (a burst) makes exactly one more after it.
      const reloadLoop = async (): Promise<void> => {
        busy = true;
        try {
          while (dirty && !stopped) {
            dirty = false;
            // The events of one write (truncate, write) arrive in the same turn: read after them.
            await new Promise<void>((resolve) => setImmediate(resolve));
            let r = await read();
            for (let i = 0; i < 10 && looksCut(r.texts) && !stopped; i++) {
              // The writer's next event (its write after the create or truncate) ends the wait at once;
              // only a writer that stays silent costs the settle time.
              if (await nextChangeWithin(settleMs)) {
                dirty = false; // this read covers every change so far
                r = await read();
                continue;
              }
              const again = await read();
              // Two reads agree: settled, except a file emptied (a writer between truncating and writing,
              // which may be descheduled for a while): that one is read again for the whole settle budget.
              if (again.key === r.key && !emptied(again.texts)) break;
              r = again;
            }
            if (stopped || r.key === lastKey) continue;
            lastKey = r.key;
            lastTexts = new Map(r.texts.map((t) => [t.file, t.text]));
            const snapshot = build(r.texts);
            logger.info({ dir, policies: snapshot.ruleSet.policies.length }, 'policies reloaded');
            onChange(snapshot);
          }
        } catch (err: unknown) {
          logger.error({ err, dir }, 'cannot read the policy directory');
        } finally {
          busy = false;
        }
      };
      const changed = (): void => {
        dirty = true;
        const wake = waiter;
        waiter = undefined;
        if (wake) wake(true);
        else if (!busy) void reloadLoop();
      };
      watcher = watch(dir, { recursive: true }, changed);
      watcher.on('error', (err) =>
        logger.error({ err, dir }, 'policy directory watch failed; rescanning only'),
      );
      rescan = setInterval(changed, options.rescanMs ?? 5000);
      return firstSnapshot;
    },
    async stop() {
      stopped = true;
      const wake = waiter;
      waiter = undefined;
      wake?.(false);
      watcher?.close();
      if (rescan) clearInterval(rescan);
      await Promise.resolve();
    },
  };
}
