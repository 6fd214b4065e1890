// Cgroup network plane benchmark (root, real kernel): what keeping host rules off containers costs a send. A
// RuntimeHostPolicy with an address rule puts the programs on the host cgroup (a cgroup this bench creates
// stands in for the root); a loop of unconnected UDP sends (the sendmsg4 hook, a destination no rule names) runs
// in a network namespace of its own (only `lo`, down: nothing leaves it) under that cgroup, as a host process
// (decided by the host workload: the cgroup walk, the config lookup and the pid namespace check) and as a
// container's process not registered yet (own pid namespace: not decided). Ratios against the same loop in a
// cgroup without programs, and the host process with the check against the programs loaded without it
// (RTCTL_NET_PIDNS_CHECK=0, as a kernel before 6.10 gets them), measured in the same run, rounds alternating.
// Also a container workload whose address rule names sources (fromSource: every send works out the process's
// class, naming its executable by a dentry walk) against the same workload whose rule names none (the fast
// path: one verdict per protocol), both deciding the loop's sends Allow, unreported.
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, rmdirSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { lintTexts } from '../../compiler/lint.js';
import { resolvePostures } from '../../compiler/model/posture.js';
import { buildRuleTableImage } from '../../compiler/rule-table/build-rule-table.js';
import { NetworkPlane, findCgroup2Mount } from '../../enforcer/network/network-plane.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '..', '..');
const SENDS = Number(process.env['RTCTL_BENCH_SENDS'] ?? '200000');
const ROUNDS = Number(process.env['RTCTL_BENCH_ROUNDS'] ?? '5');

function median(xs: readonly number[]): number {
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? 0;
}

/** A host policy whose address rule names another destination: the loop's sends are decided Allow, unreported. */
const HOST_POLICY = `apiVersion: security.runtime.com/v1
kind: RuntimeHostPolicy
metadata:
  name: bench-host
spec:
  nodeSelector:
    matchLabels: {}
  network:
    matchAddresses:
      - cidr: 169.254.169.254/32
  action: Block
`;

/** A workload policy whose address rule names another destination; with sources in `sources`. */
function workloadPolicy(sources: boolean): string {
  return `apiVersion: security.runtime.com/v1
kind: RuntimePolicy
metadata:
  name: bench-workload
  namespace: default
spec:
  selector:
    matchLabels: {app: bench}
  network:
    matchAddresses:
      - cidr: 169.254.169.254/32${
        sources
          ? `
        fromSource:
          - path: /usr/bin/curl
          - dir: /opt/
            recursive: true`
          : ''
      }
  action: Block
`;
}

async function main(): Promise<void> {
  if (process.getuid?.() !== 0) throw new Error('needs root (BPF programs and cgroups)');
  const work = mkdtempSync(path.join(tmpdir(), 'rtctl-bench-net-'));
  const loop = path.join(work, 'net-loop');
  execFileSync('cc', ['-O2', '-o', loop, path.join(here, 'net-loop.c')]);
  const bpffs = path.join(work, 'bpffs');
  mkdirSync(bpffs);
  execFileSync('mount', ['-t', 'bpf', 'bpf', bpffs]);
  const cgRoot = findCgroup2Mount();
  const cgHost = path.join(cgRoot, `rtctl-bench-net-host-${process.pid}`);
  const cgNew = path.join(cgHost, 'new-container');
  const cgPlain = path.join(cgRoot, `rtctl-bench-net-plain-${process.pid}`);
  const cgWorkload = path.join(cgRoot, `rtctl-bench-net-workload-${process.pid}`);
  for (const dir of [cgNew, cgPlain, cgWorkload]) mkdirSync(dir, { recursive: true });
  const run = (cgroup: string, pidns: boolean): number => {
    const unshare = ['unshare', '-n', ...(pidns ? ['-p', '-f', '--kill-child'] : []), loop, String(SENDS)];
    const r = spawnSync('sh', ['-c', `echo $$ > "$0/cgroup.procs" && exec "$@"`, cgroup, ...unshare], {
      encoding: 'utf8',
    });
    const ns = Number(r.stdout.trim());
    if (!(ns > 0)) throw new Error(`net-loop: ${r.stderr}`);
    return ns / SENDS;
  };
  const { ruleSet, diagnostics } = lintTexts([{ file: 'bench-host.yaml', text: HOST_POLICY }]);
  const errors = diagnostics.filter((d) => d.severity === 'error');
  if (errors.length > 0) throw new Error(`bench policy: ${JSON.stringify(errors)}`);
  const image = buildRuleTableImage(ruleSet);
  let generation = 0;
  const withPlane = async <T>(check: boolean, body: () => T): Promise<T> => {
    const plane = new NetworkPlane({
      loaderPath: path.join(root, 'dist/native/network/rtctl-net-loader'),
      objectPath: path.join(root, 'dist/native/network/rtctl-net.bpf.o'),
      pinDir: path.join(bpffs, 'net'),
      stateDir: work,
      hostCgroup: cgHost,
    });
    const saved = process.env['RTCTL_NET_PIDNS_CHECK'];
    if (!check) process.env['RTCTL_NET_PIDNS_CHECK'] = '0';
    try {
      await plane.start();
    } finally {
      if (saved === undefined) delete process.env['RTCTL_NET_PIDNS_CHECK'];
      else process.env['RTCTL_NET_PIDNS_CHECK'] = saved;
    }
    try {
      if (plane.hostIsolation !== (check ? 'pid-namespace' : 'registration-only'))
        throw new Error(`programs loaded as ${plane.hostIsolation}`);
      await plane.apply({
        generation: ++generation,
        table: image,
        workloads: [
          {
            anchor: { key: 'host', host: true, pid: 1, cgroupPath: '' },
            policies: [0],
            postures: resolvePostures({}),
          },
        ],
      });
      const result = body();
      const stats = await plane.stats();
      if (stats.reported !== 0)
        throw new Error(`the loop was reported (${stats.reported}): not the measured path`);
      return result;
    } finally {
      await plane.stop({ keepEnforcing: false });
    }
  };
  const workloadImages = [false, true].map((sources) => {
    const r = lintTexts([{ file: 'bench-workload.yaml', text: workloadPolicy(sources) }]);
    const bad = r.diagnostics.filter((d) => d.severity === 'error');
    if (bad.length > 0) throw new Error(`bench policy: ${JSON.stringify(bad)}`);
    return buildRuleTableImage(r.ruleSet);
  });
  const withWorkloadPlane = async <T>(sources: boolean, body: () => T): Promise<T> => {
    const plane = new NetworkPlane({
      loaderPath: path.join(root, 'dist/native/network/rtctl-net-loader'),
      objectPath: path.join(root, 'dist/native/network/rtctl-net.bpf.o'),
      pinDir: path.join(bpffs, 'net'),
      stateDir: work,
    });
    await plane.start();
    try {
      await plane.apply({
        generation: ++generation,
        table: workloadImages[sources ? 1 : 0] ?? image,
        workloads: [
          {
            anchor: { key: 'w', host: false, pid: 1, cgroupPath: cgWorkload.slice(cgRoot.length) },
            policies: [0],
            postures: resolvePostures({}),
          },
        ],
      });
      const result = body();
      const stats = await plane.stats();
      if (stats.reported !== 0 || (stats.unnamedExecutables ?? 0) !== 0)
        throw new Error(
          `the loop was reported or not named (${JSON.stringify(stats)}): not the measured path`,
        );
      return result;
    } finally {
      await plane.stop({ keepEnforcing: false });
    }
  };
  try {
    const plain: number[] = [];
    const workloadPlain: number[] = [];
    const workloadSources: number[] = [];
    const hostChecked: number[] = [];
    const containerChecked: number[] = [];
    const hostUnchecked: number[] = [];
    for (let i = 0; i < ROUNDS; i++) {
      plain.push(run(cgPlain, false));
      await withPlane(true, () => {
        hostChecked.push(run(cgHost, false));
        containerChecked.push(run(cgNew, true));
      });
      await withPlane(false, () => {
        hostUnchecked.push(run(cgHost, false));
      });
      await withWorkloadPlane(false, () => {
        workloadPlain.push(run(cgWorkload, false));
      });
      await withWorkloadPlane(true, () => {
        workloadSources.push(run(cgWorkload, false));
      });
    }
    const ratio = (a: number[], b: number[]): number => Math.round((median(a) / median(b)) * 100) / 100;
    const out = {
      bench: 'network',
      sends: SENDS,
      rounds: ROUNDS,
      baselineNsPerSend: Math.round(median(plain) * 10) / 10,
      hostDecidedRatio: ratio(hostChecked, plain),
      unregisteredContainerRatio: ratio(containerChecked, plain),
      hostDecidedWithoutCheckRatio: ratio(hostUnchecked, plain),
      pidnsCheckCostRatio: ratio(hostChecked, hostUnchecked),
      workloadDecidedRatio: ratio(workloadPlain, plain),
      workloadWithSourcesRatio: ratio(workloadSources, plain),
      sourcesCostRatio: ratio(workloadSources, workloadPlain),
      loadavg1: Math.round((loadavg()[0] ?? 0) * 100) / 100,
    };
    process.stdout.write(`${JSON.stringify(out)}\n`);
  } finally {
    for (const dir of [cgNew, cgHost, cgPlain, cgWorkload]) rmdirSync(dir);
    execFileSync('umount', [bpffs]);
    rmSync(work, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  process.stdout.write(
    `${JSON.stringify({ bench: 'network', error: err instanceof Error ? err.message : String(err) })}\n`,
  );
  process.exitCode = 1;
});
