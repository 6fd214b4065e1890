// Whether BPF-LSM works on this kernel, by a trial: the loader loads and attaches the real programs
// and detaches them at once (`rtctl-bpf-loader --probe`). The LSM list naming `bpf` proves nothing:
// some kernels list it and still refuse LSM programs (EPERM before the verifier runs).
import { spawnSync } from 'node:child_process';

/** The verdict of a trial load. */
export interface BpfLsmProbe {
  supported: boolean;
  /** Where the trial failed: starting the loader, loading the programs, or attaching one. */
  stage?: 'spawn' | 'load' | 'attach';
  errno?: number;
  reason: string;
}

/** Runs the trial with the built loader (dist/native/bpf/rtctl-bpf-loader); needs root. */
export function probeBpfLsm(loaderPath: string): BpfLsmProbe {
  const r = spawnSync(loaderPath, ['--probe'], { encoding: 'utf8', timeout: 60_000 });
  if (r.error !== undefined) return { supported: false, stage: 'spawn', reason: r.error.message };
  const line = r.stdout.split('\n').find((l) => l.startsWith('{'));
  if (line === undefined)
    return {
      supported: false,
      stage: 'spawn',
      reason: `no verdict from the loader: ${r.stderr.slice(-500)}`,
    };
  const verdict = JSON.parse(line) as { ok?: boolean; stage?: string; errno?: number; error?: string };
  if (verdict.ok === true) return { supported: true, reason: 'LSM programs load and attach' };
  const stage = verdict.stage === 'attach' ? 'attach' : 'load';
  return {
    supported: false,
    stage,
    ...(typeof verdict.errno === 'number' ? { errno: verdict.errno } : {}),
    reason: `${stage} refused: ${verdict.error ?? 'unknown error'}`,
  };
}
