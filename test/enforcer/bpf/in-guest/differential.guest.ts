// Differential test of the BPF-LSM plane against the decision oracle (compiler/decide): generated
// policies (path, directory and pattern rules, fromSource, readOnly/ownerOnly, all three actions,
// audit and block postures) over a generated file tree; every file is read, written and executed
// inside a workload, and the kernel's decision (denied or not, and the alert's action and policy)
// must equal the oracle's. Every file is also read by the shell itself (another actor, same mode), and
// the whole script runs twice per rule set: the second pass is answered from the file_open decision
// cache wherever the first was "allow without alert", and must decide (and report) exactly the same.
// Deterministic: a fixed seed; the case count is part of the report.
import assert from 'node:assert/strict';
import { copyFileSync, mkdirSync, rmSync } from 'node:fs';
import { stringify } from 'yaml';
import { decideOperation } from '../../../../compiler/decide/decide.js';
import { EnforcementTarget } from '../../../../compiler/enforcement/enforcement-table.js';
import { restrictToTarget } from '../../../compiler/decide/arbitrary-rule-set.js';
import type { Workload } from '../../../../compiler/decide/decision-input.js';
import type { BpfLsmPlane } from '../../../../enforcer/bpf/bpf-lsm-plane.js';
import type { DataPlaneEvent, Postures } from '../../../../enforcer/data-plane.js';
import {
  EventCollector,
  buildTable,
  createNamespaceWorkload,
  lowerRuleSet,
  runInNamespace,
  selectPolicyIndices,
  startPlane,
  type NamespaceWorkload,
} from './guest-support.js';

const SEED = Number(process.env['RTCTL_DIFF_SEED'] ?? '20261122');
const RULE_SETS = Number(process.env['RTCTL_DIFF_SETS'] ?? '14');
const FILES = ['top', 'a/x', 'a/b/y', 'a/b/z.sh', 'c/w'] as const;
const DIRS = ['', 'a/', 'a/b/', 'c/'] as const;
const SHELL = '/usr/bin/dash';
const CAT = '/usr/bin/cat';

/** mulberry32: a small deterministic PRNG. */
function createRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

type Op = 'read' | 'readsh' | 'write' | 'exec';
const PASSES = 2;
interface GeneratedCase {
  root: string;
  policies: Record<string, unknown>[];
  postures: Postures;
}

function generateCase(random: () => number, index: number): GeneratedCase {
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(random() * xs.length)] as T;
  const root = `/tmp/diff/c${index}/`;
  const posture = random() < 0.5 ? 'block' : 'audit';
  const policies: Record<string, unknown>[] = [];
  const policyCount = 1 + Math.floor(random() * 2);
  for (let p = 0; p < policyCount; p++) {
    const spec: Record<string, Record<string, unknown[]>> = { process: {}, file: {} };
    const ruleCount = 1 + Math.floor(random() * 4);
    for (let r = 0; r < ruleCount; r++) {
      const section = random() < 0.4 ? 'process' : 'file';
      const action = pick(['Block', 'Audit', 'Allow']);
      const rule: Record<string, unknown> = { action };
      const kind = pick(['path', 'dir', 'pattern']);
      let list: string;
      if (kind === 'path') {
        rule['path'] = root + pick(FILES);
        list = 'matchPaths';
      } else if (kind === 'dir') {
        rule['dir'] = root + pick(DIRS);
        rule['recursive'] = random() < 0.5;
        list = 'matchDirectories';
      } else {
        rule['pattern'] = root + pick(['a/*', '**/y', 'a/b/*.sh', '?/x', '*', '**', 'a/**', 'c/?']);
        list = 'matchPatterns';
      }
      if (section === 'file' && random() < 0.25) rule['readOnly'] = true;
      if (random() < 0.1) rule['ownerOnly'] = true;
      if (kind !== 'pattern' && random() < 0.3) {
        rule['fromSource'] = [
          pick<Record<string, unknown>>([
            { path: SHELL },
            { path: CAT },
            { dir: '/usr/bin/' },
            { dir: '/usr/', recursive: true },
          ]),
        ];
      }
      const bucket = spec[section] ?? {};
      (bucket[list] ??= []).push(rule);
      spec[section] = bucket;
    }
    for (const s of ['process', 'file']) if (Object.keys(spec[s] ?? {}).length === 0) delete spec[s];
    policies.push({
      apiVersion: 'security.runtime.com/v1',
      kind: 'RuntimePolicy',
      metadata: { name: `gen-${index}-${p}`, namespace: 'diff' },
      spec: { selector: { matchLabels: { app: 'diff' } }, ...spec, action: 'Block' },
    });
  }
  if (posture === 'block') {
    // Block posture: the system files the test's own tools need stay allowed (as a real policy would).
    policies.push({
      apiVersion: 'security.runtime.com/v1',
      kind: 'RuntimePolicy',
      metadata: { name: `baseline-${index}`, namespace: 'diff' },
      spec: {
        selector: { matchLabels: { app: 'diff' } },
        process: { matchDirectories: [{ dir: '/usr/', recursive: true }] },
        file: {
          matchDirectories: ['/usr/', '/etc/', '/dev/', '/proc/', '/sys/'].map((dir) => ({
            dir,
            recursive: true,
          })),
        },
        action: 'Allow',
      },
    });
  }
  return { root, policies, postures: { file: posture, network: 'audit', capabilities: 'audit' } };
}

const WORKLOAD: Workload = { kind: 'container', namespace: 'diff', labels: { app: 'diff' }, nodeLabels: {} };

function buildScript(root: string): string {
  const lines: string[] = [];
  for (const f of FILES) {
    const p = root + f;
    lines.push(`o=$(cat ${p} 2>&1 >/dev/null); echo "read ${f} $? $o"`);
    lines.push(`o=$( (: < ${p}) 2>&1); echo "readsh ${f} $? $o"`);
    lines.push(`o=$( (echo x >> ${p}) 2>&1); echo "write ${f} $? $o"`);
    lines.push(`o=$(${p} 2>&1); echo "exec ${f} $? $o"`);
  }
  return lines.join('\n');
}

describe('BPF-LSM: differential test against the oracle', function () {
  this.timeout(600_000);
  let plane: BpfLsmPlane;
  let events: EventCollector;
  let ns: NamespaceWorkload;
  const disagreements: string[] = [];
  let cases = 0;
  let alertsCompared = 0;
  let denials = 0;
  let postureDecisions = 0;
  let cacheHits = 0;

  before(async () => {
    plane = await startPlane('diff');
    events = new EventCollector(plane);
    ns = createNamespaceWorkload('diff');
  });

  after(async () => {
    ns.stop();
    await plane.stop({ keepEnforcing: false });
    await events.finished();
    rmSync('/tmp/diff', { recursive: true, force: true });
  });

  it(`decides ${RULE_SETS} generated rule sets × ${FILES.length} files × read (cat, shell)/write/exec, twice, as the oracle does`, async () => {
    const random = createRandom(SEED);
    for (let i = 0; i < RULE_SETS; i++) {
      const c = generateCase(random, i);
      for (const f of FILES) {
        mkdirSync(c.root + f.slice(0, f.lastIndexOf('/') + 1), { recursive: true });
        copyFileSync('/usr/bin/true', c.root + f);
      }
      const texts: Record<string, string> = {};
      c.policies.forEach((p, n) => (texts[`case-${i}-${n}.yaml`] = stringify(p)));
      // Compared on what the enforcement table says BPF-LSM enforces (today: every generated form).
      const ruleSet = restrictToTarget(lowerRuleSet(texts), EnforcementTarget.BpfLsm);
      const { image, table } = buildTable(ruleSet);
      const generation = i + 1;
      await plane.apply({
        generation,
        table: image,
        workloads: [
          { anchor: ns.anchor, policies: selectPolicyIndices(table, WORKLOAD), postures: c.postures },
        ],
      });
      for (let pass = 1; pass <= PASSES; pass++) {
        const out = runInNamespace(ns.anchor.pid, buildScript(c.root), 120_000);
        const results = out.stdout.split('\n').filter((l) => l !== '');
        assert.equal(
          results.length,
          FILES.length * 4,
          `case ${i} pass ${pass}: script output ${out.stdout} ${out.stderr}`,
        );
        for (const line of results) {
          const [op, file, status, ...rest] = line.split(' ') as [Op, string, string, ...string[]];
          const resource = c.root + file;
          const denied = status !== '0';
          const request =
            op === 'exec'
              ? {
                  operation: 'Process' as const,
                  resource,
                  parentExecutable: SHELL,
                  write: false,
                  owner: true,
                }
              : {
                  operation: 'File' as const,
                  resource,
                  executable: op === 'read' ? CAT : SHELL,
                  write: op === 'write',
                  owner: true,
                };
          const decision = decideOperation(ruleSet, WORKLOAD, request, c.postures);
          cases++;
          if (denied) denials++;
          if (decision.basis === 'posture') postureDecisions++;
          if (denied !== !decision.allowed || (denied && !rest.join(' ').includes('Permission denied'))) {
            disagreements.push(
              `case ${i} pass ${pass} ${op} ${file}: kernel ${denied ? 'denied' : 'allowed'} (${rest.join(' ')}), oracle ${decision.allowed ? 'allowed' : 'denied'}; policies ${JSON.stringify(c.policies)}`,
            );
            continue;
          }
          if (decision.alert === null) continue;
          // One report per pass: the n-th pass must have produced the n-th matching event.
          const wantFlags = op === 'write' ? 'O_WRONLY' : 'O_RDONLY';
          const actor = op === 'read' ? CAT : SHELL;
          const matching = (): DataPlaneEvent[] =>
            events.events.filter(
              (e) =>
                e.generation === generation &&
                e.resource === resource &&
                e.operation === request.operation &&
                (op === 'exec' || (e.syscallArgs.includes(`flags=${wantFlags}`) && e.processName === actor)),
            );
          const deadline = Date.now() + 5_000;
          while (matching().length < pass && Date.now() < deadline)
            await new Promise((r) => setTimeout(r, 50));
          const found = matching();
          const event = found[pass - 1];
          alertsCompared++;
          if (
            event === undefined ||
            event.action !== decision.alert.Action ||
            event.policyName !== decision.alert.PolicyName
          ) {
            disagreements.push(
              `case ${i} pass ${pass} ${op} ${file}: alert ${decision.alert.Action}/${decision.alert.PolicyName} expected (${pass} of them), kernel reported ${event === undefined ? `${found.length}` : `${event.action}/${event.policyName}`}`,
            );
          }
        }
      }
    }
    const stats = await plane.stats();
    cacheHits = stats.cacheHits;
    process.stdout.write(
      `[report] differential: ${cases} kernel decisions compared with the oracle over ${PASSES} passes (${denials} denials, ${postureDecisions} by posture), ${alertsCompared} alerts compared, ${cacheHits} opens and execs answered from the decision cache, ${disagreements.length} disagreements\n`,
    );
    assert.ok(cases >= RULE_SETS * FILES.length * 4 * PASSES);
    assert.ok(cacheHits > 0, 'the second passes must reach the decision cache');
    assert.ok(
      denials > 0 && denials < cases,
      `the generated cases must both deny and allow (${denials}/${cases})`,
    );
    assert.ok(
      postureDecisions > 0 && alertsCompared > 0,
      'the generated cases must reach the posture and alerts',
    );
    assert.deepEqual(disagreements.slice(0, 10), []);
  });
});
