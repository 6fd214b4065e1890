// Policy source over a directory of YAML files (systemd mode: hosts and containers not orchestrated by
// Kubernetes). The directory is watched; a change is picked up after a short quiet period, and a periodic
// rescan catches what a watch may miss (editors that replace files, network file systems).
import { watch, type FSWatcher } from 'node:fs';
import { readdir, readFile, stat } from 'node:fs/promises';
import { join, relative } from 'node:path';
import type { Logger } from 'pino';
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

async function readTexts(dir: string): Promise<SourceText[]> {
  const out: SourceText[] = [];
  const walk = async (d: string): Promise<void> => {
    const entries = await readdir(d, { withFileTypes: true });
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const e of entries) {
      const p = join(d, e.name);
      if (e.isDirectory() && !e.name.startsWith('.')) await walk(p);
      else if (e.isFile() && /\.ya?ml$/.test(e.name))
        out.push({ file: relative(dir, p), text: await readFile(p, 'utf8') });
    }
  };
  await walk(dir);
  return out;
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
  const read = async (): Promise<{ texts: SourceText[]; key: string }> => {
    const texts = await readTexts(dir);
    return { texts, key: texts.map((t) => `${t.file}\u0000${t.text}`).join('\u0001') };
  };
  const build = (texts: readonly SourceText[]): PolicySnapshot => {
    const snapshot = buildSnapshot(texts);
    logDiagnostics(snapshot.diagnostics);
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
