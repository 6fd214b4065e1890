// Helpers of the install/uninstall tests against the stand-in API server: run the CLI as a child process
// (asynchronously: the stand-in answers from this process), or the runs in-process with a fast poll.
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { RunContext } from '../../../install/cluster/run-context.js';
import { createKubeClient, loadKubeConfig } from '../../../install/io/kube-client.js';
import {
  startStandInApiServer,
  type StandInApiServer,
  type StandInOptions,
  type StandInRequest,
} from '../support/stand-in-api-server.js';

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');

/** The result of one CLI run. */
export interface CliResult {
  status: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `rtctl …` (tsx) without blocking this process's event loop; bounded by `timeoutMs`. */
export function rtctl(
  args: readonly string[],
  timeoutMs = 60_000,
  env: Record<string, string> = { KUBECONFIG: '/nonexistent' },
): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'bin/rtctl.ts', ...args], {
      cwd: REPO,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, ...env },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('error', reject);
    child.on('close', (status) => {
      clearTimeout(timer);
      resolve({ status, stdout, stderr });
    });
  });
}

/** A stand-in with a kubeconfig in a fresh directory. */
export async function startCluster(options: StandInOptions = {}): Promise<{
  server: StandInApiServer;
  dir: string;
  close(): Promise<void>;
}> {
  const dir = await mkdtemp(path.join(tmpdir(), 'rtctl-install-'));
  const server = await startStandInApiServer(path.join(dir, 'kubeconfig'), {
    enforcers: [
      { node: 'node-a', plane: 'fanotify' },
      { node: 'node-b', plane: 'bpf-lsm' },
    ],
    ...options,
  });
  return {
    server,
    dir,
    close: async () => {
      await server.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** An in-process run context over the real client, polling every 20 ms; progress lines collected. */
export function contextFor(server: StandInApiServer): { ctx: RunContext; lines: string[] } {
  const lines: string[] = [];
  return {
    lines,
    ctx: {
      client: createKubeClient(loadKubeConfig({ kubeconfig: server.kubeconfigPath })),
      progress: (l) => lines.push(l),
      now: () => new Date(),
      pollMs: 20,
    },
  };
}

/** `PATCH deployments rtctl-webhook` style summary of requests, for order assertions. */
export function summary(requests: readonly StandInRequest[]): string[] {
  return requests.map(
    (r) => `${r.method} ${r.resource} ${decodeURIComponent(r.path.split('/').pop() ?? '')}`,
  );
}

/** Resource versions of every stored object, by key. */
export function versions(server: StandInApiServer): Map<string, unknown> {
  return new Map([...server.objects()].map(([k, o]) => [k, o.metadata['resourceVersion']]));
}
