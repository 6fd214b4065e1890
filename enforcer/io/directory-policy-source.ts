// Policy source over a directory of YAML files (systemd mode: hosts and containers not orchestrated by
// Kubernetes). The directory is watched; a change is picked up after a short quiet period, and a periodic
// rescan catches what a watch may miss (editors that replace files, network file systems).
import { watch, type FSWatcher } from 'node:fs';
import { readdir, readFile, stat } from 'node:fs/promises';
import { join, relative } from 'node:path';
import type { Logger } from 'pino';
import type { SourceText } from '../../compiler/lint.js';
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
  let lastKey = '';

  const load = async (): Promise<{ snapshot: PolicySnapshot; key: string }> => {
    const texts = await readTexts(dir);
    const key = texts.map((t) => `${t.file}\u0000${t.text}`).join('\u0001');
    const snapshot = buildSnapshot(texts);
    for (const d of snapshot.diagnostics) {
      logger.warn({ code: d.code, file: d.file, line: d.start?.line, column: d.start?.column }, d.message);
    }
    return { snapshot, key };
  };

  return {
    async start(onChange) {
      await stat(dir);
      const first = await load();
      lastKey = first.key;
      const reload = (): void => {
        load().then(
          ({ snapshot, key }) => {
            if (key === lastKey) return;
            lastKey = key;
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
      return first.snapshot;
    },
    async stop() {
      watcher?.close();
      if (timer) clearTimeout(timer);
      if (rescan) clearInterval(rescan);
      await Promise.resolve();
    },
  };
}
