// Every data plane the enforcer can run, in one array; `rtctl enforcer run --data-plane <name>` selects one,
// `auto` takes the first whose trial (rtctl probe) passes.
import { join } from 'node:path';
import type { Logger } from 'pino';
import type { DataPlane } from './data-plane.js';
import { createFanotifyPlane } from './fanotify/fanotify-plane.js';
import { buildNativeTools } from './io/native-tools.js';

/** What a data plane factory gets. */
export interface DataPlaneContext {
  /** Directory for sockets, logs and pinned state (`/run/rtctl`). */
  stateDir: string;
  logger: Logger;
}

/** A data plane the enforcer can run. */
export interface DataPlaneFactory {
  /** The `--data-plane` name. */
  name: string;
  description: string;
  /** Name of the `rtctl probe` check that must pass for `auto` to choose this plane. */
  probe: string;
  create(context: DataPlaneContext): Promise<DataPlane>;
}

const fanotify: DataPlaneFactory = {
  name: 'fanotify',
  description: 'fanotify permission events decided by a native helper (denials return EPERM)',
  probe: 'fanotify',
  async create({ stateDir, logger }) {
    const tools = await buildNativeTools();
    return createFanotifyPlane({
      helperPath: tools.fanotifyHelper,
      socketPath: join(stateDir, 'fanotify.sock'),
      helperLogPath: join(stateDir, 'fanotify-helper.log'),
      logger,
    });
  },
};

/** All data planes, preferred first (the BPF-LSM plane goes before fanotify). */
export const DATA_PLANES: DataPlaneFactory[] = [fanotify];

/** The factory of this name, if any. */
export function findDataPlane(name: string): DataPlaneFactory | undefined {
  return DATA_PLANES.find((p) => p.name === name);
}
