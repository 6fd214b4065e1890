// Every data plane the enforcer can run, in one array; `rtctl enforcer run --data-plane <name>` selects one,
// `auto` takes the first whose trial (rtctl probe) passes.
import { join } from 'node:path';
import type { Logger } from 'pino';
import type { DataPlane } from './data-plane.js';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { BpfLsmPlane } from './bpf/bpf-lsm-plane.js';
import { createFanotifyPlane } from './fanotify/fanotify-plane.js';
import { buildNativeTools, findNativeDir } from './io/native-tools.js';

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

const bpfLsm: DataPlaneFactory = {
  name: 'bpf-lsm',
  description:
    'BPF programs on LSM hooks deciding in the kernel (denials return EACCES); state pinned under /sys/fs/bpf',
  probe: 'bpf-lsm',
  async create() {
    // enforcer/bpf sits beside enforcer/native; its build script is idempotent.
    const bpfDir = join(findNativeDir(), '..', 'bpf');
    await promisify(execFile)('sh', [join(bpfDir, 'build.sh')]);
    return new BpfLsmPlane({ loaderPath: join(bpfDir, 'out', 'rtctl-bpf-loader') });
  },
};

/** All data planes, preferred first: BPF-LSM where a trial load works, fanotify elsewhere. */
export const DATA_PLANES: DataPlaneFactory[] = [bpfLsm, fanotify];

/** The factory of this name, if any. */
export function findDataPlane(name: string): DataPlaneFactory | undefined {
  return DATA_PLANES.find((p) => p.name === name);
}
