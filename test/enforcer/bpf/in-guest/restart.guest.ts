// Restart survival: enforcement is pinned under bpffs, so killing the enforcer process and its loader
// while a loop keeps running the blocked binary lets zero runs through; a new plane resumes the pinned
// state, updates it in place five times, and `stop` without keepEnforcing detaches (the binary runs
// again).
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { copyFileSync, existsSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { BpfLsmPlane } from '../../../../enforcer/bpf/bpf-lsm-plane.js';
import {
  AUDIT_POSTURES,
  buildTable,
  compileRuleSet,
  createNamespaceWorkload,
  loaderPath,
  repoRoot,
  runInNamespace,
  writeTestFile,
  type NamespaceWorkload,
} from './guest-support.js';

const POLICY = `apiVersion: security.runtime.com/v1
kind: RuntimePolicy
metadata:
  name: block-restart
  namespace: guest
spec:
  selector:
    matchLabels:
      app: restart
  process:
    matchPaths:
      - path: /tmp/rs/blocked
  action: Block
`;

function delay(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

describe('BPF-LSM: enforcement survives the enforcer and the loader', function () {
  this.timeout(300_000);
  const pinDir = `/sys/fs/bpf/rtctl-restart-${process.pid}`;
  let ns: NamespaceWorkload;

  before(() => {
    writeTestFile('/tmp/rs/.keep', '');
    copyFileSync('/usr/bin/true', '/tmp/rs/blocked');
    ns = createNamespaceWorkload('restart');
  });

  after(() => {
    ns.stop();
  });

  it('lets zero runs of the blocked binary through while the enforcer and the loader are killed and restarted', async () => {
    const { image } = buildTable(compileRuleSet({ 'restart.yaml': POLICY }));
    const workloads = [{ anchor: ns.anchor, policies: [0], postures: AUDIT_POSTURES }];
    // 1. A separate enforcer process applies the state.
    const enforcer = spawn(
      process.execPath,
      ['--import', 'tsx', path.join(repoRoot, 'test/enforcer/bpf/in-guest/fixtures/enforcer-process.ts')],
      { stdio: ['pipe', 'pipe', 'inherit'], cwd: repoRoot },
    );
    enforcer.stdin.end(
      JSON.stringify({
        loaderPath,
        pinDir,
        generation: 1,
        table: Buffer.from(image.bytes).toString('base64'),
        workloads,
      }),
    );
    const ready = await new Promise<string>((resolve, reject) => {
      createInterface({ input: enforcer.stdout }).once('line', resolve);
      enforcer.once('exit', (code) => reject(new Error(`enforcer exited ${String(code)}`)));
    });
    const loaderPid = Number(ready.split(' ')[1]);
    assert.ok(loaderPid > 0, ready);

    // 2. The workload runs the blocked binary in a loop until told to stop.
    const loop = spawn(
      'nsenter',
      [
        '-t',
        String(ns.anchor.pid),
        '-m',
        '--',
        '/bin/sh',
        '-c',
        'ok=0; n=0; while [ ! -e /tmp/rs/stop ]; do if /tmp/rs/blocked 2>/dev/null; then ok=$((ok+1)); fi; n=$((n+1)); done; echo "$ok $n"',
      ],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    let loopOut = '';
    loop.stdout.on('data', (d: Buffer) => (loopOut += d.toString('utf8')));
    const loopDone = new Promise<void>((r) => loop.once('exit', () => r()));
    await delay(1500);

    // 3. Kill the enforcer and its loader (SIGKILL: no cleanup), then wait with nobody in charge.
    enforcer.kill('SIGKILL');
    process.kill(loaderPid, 'SIGKILL');
    await delay(1500);
    assert.ok(existsSync(`${pinDir}/link_rt_bprm_check`), 'the link stays pinned');

    // 4. A new plane resumes the pinned state and updates it in place while the loop runs.
    const plane = new BpfLsmPlane({ loaderPath, pinDir });
    await plane.start();
    const kept = await plane.enforced();
    assert.equal(kept.generation, 1);
    assert.deepEqual(kept.workloads, ['restart']);
    // Updates in place while the loop runs: each writes the inactive slot, then flips one word.
    for (let generation = 2; generation <= 6; generation++)
      await plane.apply({ generation, table: image, workloads });
    assert.equal((await plane.enforced()).generation, 6);
    await delay(1000);
    writeFileSync('/tmp/rs/stop', '');
    await loopDone;
    const [ok, runs] = loopOut.trim().split(' ').map(Number);
    process.stdout.write(
      `[report] restart: ${runs} runs of the blocked binary across the kills, ${ok} succeeded\n`,
    );
    assert.ok((runs ?? 0) > 0, `the loop ran: ${loopOut}`);
    assert.equal(ok, 0, `successful runs of the blocked binary: ${loopOut}`);

    // 5. stop without keepEnforcing detaches: the binary runs again.
    await plane.stop({ keepEnforcing: false });
    assert.ok(!existsSync(`${pinDir}/link_rt_bprm_check`), 'links unpinned');
    const after = runInNamespace(ns.anchor.pid, '/tmp/rs/blocked');
    assert.equal(after.status, 0, after.stderr);
  });
});
