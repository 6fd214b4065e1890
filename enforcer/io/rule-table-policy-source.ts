// Policy source over one compiled rule table (`rtctl enforcer run --rule-table build/rules/rule-table.bin`,
// written by `rtctl compile --target rules`). The table is validated on load: a corrupt table or one of
// another major version is refused with its code and byte offset. The file is polled; a valid new table
// replaces the enforced one, an invalid one is logged and the previous table stays in force.
import { unwatchFile, watchFile } from 'node:fs';
import { readFile } from 'node:fs/promises';
import type { Logger } from 'pino';
import { loadRuleTableImage, type RuleTableError } from '../../compiler/rule-table/read-rule-table.js';
import type { PolicySnapshot, PolicySource } from '../policy-source.js';

/** Options of the rule-table source. */
export interface RuleTableSourceOptions {
  file: string;
  logger: Logger;
  /** Poll period of the file, ms. */
  pollMs?: number;
  /** The first snapshot when the caller has read it already (to validate before starting a data plane). */
  initial?: PolicySnapshot;
}

/** A table that cannot be enforced: the file, the reader's code, and where in the file. */
export class RuleTableLoadError extends Error {
  constructor(
    readonly file: string,
    readonly refusal: RuleTableError,
  ) {
    const at = refusal.offset !== undefined ? ` at byte ${refusal.offset}` : '';
    super(`${file}${at}: ${refusal.code}: ${refusal.error}`);
  }
}

/** Reads and validates a compiled table into a snapshot (no namespace postures: the defaults apply). */
export async function readRuleTableSnapshot(file: string): Promise<PolicySnapshot> {
  const bytes = new Uint8Array(await readFile(file));
  const loaded = loadRuleTableImage(bytes);
  if (!loaded.ok) throw new RuleTableLoadError(file, loaded);
  return {
    ruleSet: { policies: [] },
    diagnostics: [],
    postures: new Map(),
    ruleTable: { image: loaded.image, table: loaded.table },
  };
}

/** Creates the source. */
export function createRuleTablePolicySource(options: RuleTableSourceOptions): PolicySource {
  const { file, logger } = options;
  let watching = false;
  return {
    async start(onChange) {
      const first = options.initial ?? (await readRuleTableSnapshot(file));
      watching = true;
      watchFile(file, { interval: options.pollMs ?? 2000 }, (now, before) => {
        if (now.mtimeMs === before.mtimeMs && now.size === before.size) return;
        readRuleTableSnapshot(file).then(onChange, (err: unknown) =>
          logger.error({ err }, 'rule table not reloaded; the previous table stays in force'),
        );
      });
      return first;
    },
    stop() {
      if (watching) unwatchFile(file);
      watching = false;
      return Promise.resolve();
    },
  };
}
