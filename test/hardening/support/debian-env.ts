// The hardening suites' shared set-up: the Debian image (rootfs.ts, debian-image.ts) imported into a private
// containerd, containers run from it, and `rtctl enforcer run` with the fanotify data plane over a policy
// directory the suite writes. Used by the attack, service and peer-scenario suites, so each of them starts
// and stops the same way.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Context } from 'mocha';
import { hasCommand, requirePrereqs } from '../../support/prereq.js';
import { containerdPrereqs, startContainerd, type Containerd } from '../../enforcer/support/containerd.js';
import {
  startEnforcer,
  stopHelper,
  waitForStatus,
  type EnforcerProcess,
} from '../../enforcer/support/enforcer-process.js';
import type { EnforcerStatus } from '../../../enforcer/enforcer.js';
import {
  ensureDebianImageTar,
  importDebianImage,
  removeDebianContainer,
  runDebianContainer,
  type DebianContainerSpec,
} from './debian-image.js';
import { ensureRootfs } from './rootfs.js';

/** Prerequisites of the Debian-container suites, as [ok, reason] pairs for requirePrereqs. */
export function debianPrereqs(): [boolean, string][] {
  return [...containerdPrereqs(), [hasCommand('mmdebstrap'), 'mmdebstrap not installed']];
}

/** A private containerd with the Debian image, its containers, and (once started) an enforcer. */
export interface DebianEnv {
  cd: Containerd;
  /** The temporary folder of this run (removed by stop). */
  work: string;
  policyDir: string;
  stateDir: string;
  /** The enforcer, once startEnforcer ran. */
  enforcer: EnforcerProcess | undefined;
  /** The enforcer's address ('' before it started). */
  url(): string;
  /** Runs a pod container of the Debian image (removed by stop). */
  run(spec: DebianContainerSpec): Promise<void>;
  /**
   * Mounts a bpffs below work (unmounted by stop) and returns a directory on it for RTCTL_NETWORK_PIN_DIR: the
   * cgroup network plane then attaches to the containers' cgroups, which this run's containerd created.
   */
  mountBpffs(): string;
  /** Starts `rtctl enforcer run` (fanotify) over policyDir; extra flags are appended. */
  startEnforcer(extraFlags?: readonly string[], env?: Record<string, string>): Promise<EnforcerProcess>;
  /**
   * Replaces the policy directory's content with these files (name → text) and waits until the enforcer
   * applied a new generation that satisfies the predicate.
   */
  setPolicies(files: Record<string, string>, ready?: (s: EnforcerStatus) => boolean): Promise<EnforcerStatus>;
  /** Stops the enforcer and its helper, removes the containers, stops containerd, removes work. */
  stop(): Promise<void>;
}

/**
 * Checks the prerequisites (skipping the suite when one is missing), builds or reuses the Debian image and
 * starts a private containerd with it. Call from a `before` hook with a long timeout (a cold image cache
 * downloads packages).
 */
export async function startDebianEnv(ctx: Context, prefix: string): Promise<DebianEnv> {
  requirePrereqs(ctx, debianPrereqs());
  const imageTar = await ensureDebianImageTar(await ensureRootfs());
  const work = mkdtempSync(join(tmpdir(), prefix));
  const policyDir = join(work, 'policies');
  const stateDir = join(work, 'state');
  mkdirSync(policyDir);
  mkdirSync(stateDir);
  let cd: Containerd;
  try {
    cd = await startContainerd();
    await importDebianImage(cd, imageTar);
  } catch (err) {
    rmSync(work, { recursive: true, force: true });
    throw err;
  }
  const containers: string[] = [];
  let bpffs = '';
  const env: DebianEnv = {
    cd,
    work,
    policyDir,
    stateDir,
    enforcer: undefined,
    url: () => env.enforcer?.url ?? '',
    async run(spec) {
      containers.push(spec.id);
      await runDebianContainer(cd, spec);
    },
    mountBpffs() {
      if (bpffs === '') {
        bpffs = join(work, 'bpffs');
        mkdirSync(bpffs);
        execFileSync('mount', ['-t', 'bpf', 'bpf', bpffs]);
      }
      return join(bpffs, 'net');
    },
    async startEnforcer(extraFlags = [], extraEnv = {}) {
      const flags = [
        '--policy-dir',
        policyDir,
        '--data-plane',
        'fanotify',
        '--containerd-socket',
        cd.socket,
        '--state-dir',
        stateDir,
        '--alert-log',
        join(work, 'alerts.jsonl'),
        '--poll-ms',
        '200',
        ...extraFlags,
      ];
      const saved: Record<string, string | undefined> = {};
      for (const [k, v] of Object.entries(extraEnv)) {
        saved[k] = process.env[k];
        process.env[k] = v;
      }
      try {
        env.enforcer = await startEnforcer(flags);
      } finally {
        for (const [k, v] of Object.entries(saved)) {
          if (v === undefined) delete process.env[k];
          else process.env[k] = v;
        }
      }
      return env.enforcer;
    },
    async setPolicies(files, ready = () => true) {
      const url = env.url();
      const before = (await waitForStatus(url, () => true)).generation;
      for (const f of readdirSync(policyDir)) rmSync(join(policyDir, f));
      for (const [name, text] of Object.entries(files)) writeFileSync(join(policyDir, name), text);
      return waitForStatus(url, (s) => s.generation > before && ready(s), 30000);
    },
    async stop() {
      await env.enforcer?.kill('SIGTERM');
      await stopHelper(join(stateDir, 'fanotify.sock'));
      for (const id of containers) await removeDebianContainer(cd, id).catch(() => undefined);
      await cd.stop();
      if (bpffs !== '') execFileSync('umount', [bpffs]);
      rmSync(work, { recursive: true, force: true });
    },
  };
  return env;
}
