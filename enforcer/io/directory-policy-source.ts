// Policy source over a directory of YAML files (systemd mode: hosts and containers not orchestrated by
// Kubernetes). The directory is watched; a change is picked up after a short quiet period, and a periodic
// rescan catches what a watch may miss (editors that replace files, network file systems).
import { watch, type FSWatcher } from 'node:fs';
import { stat } from 'node:fs/promises';
import { relative } from 'node:path';
import type { Logger } from 'pino';
import { Code } from '../../compiler/diagnostics/codes/code.js';
import type { Diagnostic } from '../../compiler/diagnostics/diagnostic.js';
import { readSources } from '../../compiler/io/read-sources.js';
import type { SourceText } from '../../compiler/lint.js';
import { createDiagnosticLog } from '../diagnostic-log.js';
import { buildSnapshot } from '../policy-snapshot.js';
import type { PolicySnapshot, PolicySource } from '../policy-source.js';

/** Options of the directory source. */
export interface DirectorySourceOptions {
  dir: string;
  logger: Logger;
  /** Quiet period after a change before reloading, ms. */
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
  let timer: NodeJS.Timeout | undefined;
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
  const build = (texts: readonly SourceText[]): PolicySnapshot => {
    const snapshot = buildSnapshot(texts);
    logDiagnostics([...readDiagnostics, ...snapshot.diagnostics]);
    return snapshot;
  };

  return {
    async start(onChange) {
      await stat(dir);
      const first = await read();
      lastKey = first.key;
      const firstSnapshot = build(first.texts);
      const reload = (): void => {
        read().then(
          ({ texts, key }) => {
            if (key === lastKey) return;
            lastKey = key;
            const snapshot = build(texts);
            logger.info({ dir, policies: snapshot.ruleSet.policies.length }, 'policies reloaded');
            onChange(snapshot);
          },
          (err: unknown) => logger.error({ err, dir }, 'cannot read the policy directory'),
        );
      };
      const schedule = (): void => {
        if (timer) clearTimeout(timer);
        timer = setTimeout(reload, options.debounceMs ?? 100);
      };
      watcher = watch(dir, { recursive: true }, schedule);
      watcher.on('error', (err) =>
        logger.error({ err, dir }, 'policy directory watch failed; rescanning only'),
      );
      rescan = setInterval(reload, options.rescanMs ?? 5000);
      return firstSnapshot;
    },
    async stop() {
      watcher?.close();
      if (timer) clearTimeout(timer);
      if (rescan) clearInterval(rescan);
      await Promise.resolve();
    },
  };
}
