// BPF-LSM benchmark body, run inside the test guest by bench/enforcer/bpf-lsm.ts (TCG emulation makes
// absolute numbers meaningless; the ratios against the same loops without enforcement, measured in the
// same run, are the figures). Measures: open()+close() and exec loops in a workload with 1 000 rules
// loaded, policy-change-to-enforced latency, and audit events per second with the drop counter.
import { execFileSync, spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildRuleTableImage } from '../../compiler/rule-table/build-rule-table.js';
import type { RuleTableImage } from '../../compiler/rule-table/rule-table-records.js';
import { lowerDocuments } from '../../compiler/lower/lower.js';
import { lintTexts } from '../../compiler/lint.js';
import { BpfLsmPlane } from '../../enforcer/bpf/bpf-lsm-plane.js';
import type { DataPlaneEvent, Postures, WorkloadAnchor } from '../../enforcer/data-plane.js';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const OPENS = Number(process.env['RTCTL_BENCH_OPENS'] ?? '20000');
const EXECS = Number(process.env['RTCTL_BENCH_EXECS'] ?? '100');
const ROUNDS = Number(process.env['RTCTL_BENCH_ROUNDS'] ?? '3');
const AUDITS = Number(process.env['RTCTL_BENCH_AUDITS'] ?? '5000');
const POSTURES: Postures = { file: 'audit', network: 'audit', capabilities: 'audit' };

function tableOf(rules: number, extra: string): RuleTableImage {
  const paths = Array.from({ length: rules }, (_, i) => `      - path: /srv/bench/d${i % 50}/f${i}\n`).join(
    '',
  );
  const dirs = Array.from(
    { length: 20 },
    (_, i) => `      - dir: /tmp/b/n${i}/\n        recursive: true\n`,
  ).join('');
  const text = `apiVersion: security.runtime.com/v1
kind: RuntimePolicy
metadata: { name: bench, namespace: bench }
spec:
  selector: { matchLabels: { app: bench } }
  file:
    matchPaths:
${paths}    matchDirectories:
${dirs}  action: Block
${extra}`;
  const lint = lintTexts([{ file: 'bench.yaml', text }]);
  return buildRuleTableImage(lowerDocuments(lint.documents));
}

function median(xs: readonly number[]): number {
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? 0;
}

function runIn(pid: number, command: string): string {
  return execFileSync('nsenter', ['-t', String(pid), '-m', '--', '/bin/sh', '-c', command], {
    encoding: 'utf8',
  });
}

/** Milliseconds of `OPENS` open()+close() pairs on one file, measured inside the workload by node. */
function measureOpens(pid: number): number {
  const script = `const fs=require('fs');const t=process.hrtime.bigint();for(let i=0;i<${OPENS};i++){fs.closeSync(fs.openSync('/tmp/b/file','r'))}console.log(Number(process.hrtime.bigint()-t)/1e6)`;
  return Number(runIn(pid, `node -e ${JSON.stringify(script)}`).trim());
}

/** Milliseconds of `EXECS` fork+exec of a small binary, measured inside the workload by the shell. */
function measureExecs(pid: number): number {
  const out = runIn(
    pid,
    `s=$(date +%s%N); i=0; while [ $i -lt ${EXECS} ]; do /tmp/b/true; i=$((i+1)); done; e=$(date +%s%N); echo $(( (e - s) / 1000000 ))`,
  );
  return Number(out.trim());
}

async function main(): Promise<void> {
  mkdirSync('/tmp/b/n0', { recursive: true });
  writeFileSync('/tmp/b/file', 'x');
  writeFileSync('/tmp/b/audited', 'x');
  copyFileSync('/usr/bin/true', '/tmp/b/true');
  copyFileSync('/usr/bin/true', '/tmp/b/newly-blocked');
  const sleeper = spawnSync(
    'sh',
    ['-c', 'unshare --mount --propagation private sleep 3600 >/dev/null 2>&1 & echo $!'],
    { encoding: 'utf8' },
  );
  const pid = Number(sleeper.stdout.trim());
  spawnSync('sleep', ['1']);
  const anchor: WorkloadAnchor = { key: 'bench', host: false, pid, cgroupPath: '' };

  // Alternating rounds (machine noise is large under TCG): the loops with no programs attached, then
  // with the plane loaded and 1 000 rules applied to the workload; medians are compared.
  const loaderPath = path.join(repoRoot, 'dist/native/bpf/rtctl-bpf-loader');
  const pinDir = `/sys/fs/bpf/rtctl-bench-${process.pid}`;
  const table1000 = tableOf(1000, '');
  const base = { opens: [] as number[], execs: [] as number[] };
  const bpf = { opens: [] as number[], execs: [] as number[] };
  measureOpens(pid);
  for (let round = 0; round < ROUNDS; round++) {
    base.opens.push(measureOpens(pid));
    base.execs.push(measureExecs(pid));
    const p = new BpfLsmPlane({ loaderPath, pinDir });
    await p.start();
    await p.apply({
      generation: 1,
      table: table1000,
      workloads: [{ anchor, policies: [0], postures: POSTURES }],
    });
    bpf.opens.push(measureOpens(pid));
    bpf.execs.push(measureExecs(pid));
    await p.stop({ keepEnforcing: false });
  }
  const baseOpens = median(base.opens);
  const baseExecs = median(base.execs);
  const bpfOpens = median(bpf.opens);
  const bpfExecs = median(bpf.execs);

  const plane = new BpfLsmPlane({ loaderPath, pinDir });
  await plane.start();
  const events: DataPlaneEvent[] = [];
  const reader = (async () => {
    for await (const e of plane.events()) events.push(e);
  })();
  await plane.apply({
    generation: 1,
    table: table1000,
    workloads: [{ anchor, policies: [0], postures: POSTURES }],
  });

  // Policy change to enforced: apply() resolves after the slot flip; the next exec must be denied.
  const blocking = tableOf(
    1000,
    `---
apiVersion: security.runtime.com/v1
kind: RuntimePolicy
metadata: { name: bench-new, namespace: bench }
spec:
  selector: { matchLabels: { app: bench } }
  process:
    matchPaths:
      - path: /tmp/b/newly-blocked
  file:
    matchPaths:
      - path: /tmp/b/audited
        action: Audit
  action: Block
`,
  );
  const t0 = process.hrtime.bigint();
  await plane.apply({
    generation: 2,
    table: blocking,
    workloads: [{ anchor, policies: [0, 1], postures: POSTURES }],
  });
  const applyMs = Number(process.hrtime.bigint() - t0) / 1e6;
  const denied = runIn(pid, '/tmp/b/newly-blocked 2>/dev/null; echo $?').trim() === '126';

  // Audit events: every open of the audited file is reported; none may be lost silently.
  const before = events.length;
  const a0 = process.hrtime.bigint();
  const script = `const fs=require('fs');for(let i=0;i<${AUDITS};i++){fs.closeSync(fs.openSync('/tmp/b/audited','r'))}`;
  runIn(pid, `node -e ${JSON.stringify(script)}`);
  const deadline = Date.now() + 30_000;
  while (events.filter((e) => e.resource === '/tmp/b/audited').length < AUDITS && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 100));
  }
  const auditSeconds = Number(process.hrtime.bigint() - a0) / 1e9;
  const received = events.slice(before).filter((e) => e.resource === '/tmp/b/audited').length;
  const stats = await plane.stats();
  await plane.stop({ keepEnforcing: false });
  await reader;
  spawnSync('kill', [String(pid)]);

  const result = {
    bench: 'enforcer-bpf-lsm',
    environment: 'qemu TCG guest, Debian 6.1 kernel: compare ratios, not absolute times',
    rules: 1000,
    rounds: ROUNDS,
    openClose: {
      iterations: OPENS,
      baselineMs: base.opens.map(Math.round),
      bpfMs: bpf.opens.map(Math.round),
      medianRatio: +(bpfOpens / baseOpens).toFixed(3),
    },
    exec: {
      iterations: EXECS,
      baselineMs: base.execs,
      bpfMs: bpf.execs,
      medianRatio: +(bpfExecs / baseExecs).toFixed(3),
    },
    policyChange: { applyMs: +applyMs.toFixed(1), deniedRightAfter: denied },
    auditEvents: {
      opens: AUDITS,
      received,
      perSecond: Math.round(received / auditSeconds),
      dropped: stats.dropped,
      unreportedLoss: AUDITS - received - stats.dropped,
    },
  };
  process.stdout.write(`${JSON.stringify(result)}\n`);
}

await main();
