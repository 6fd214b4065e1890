// bench/rules: the binary rule table for 10 000 policies. Reports table build time, table size, and
// lookups per second of the TypeScript reader's hash walk against a linear scan over the same rules in
// precedence order (stopping at the first match) in the same run; the ratio is the figure. Every
// lookup's answer is compared between the two. Prints JSON.
import { buildRuleTable } from '../../compiler/rule-table/build-rule-table.js';
import { readRuleTable, type PolicySet } from '../../compiler/rule-table/read-rule-table.js';
import { matchesRule } from '../../compiler/decide/match-rule.js';
import { compareRulePrecedence, type PolicyRule } from '../../compiler/decide/precedence.js';
import type { OperationRequest } from '../../compiler/decide/decision-input.js';
import { Operation, type Matcher } from '../../compiler/ir/rule-set.js';
import { lintTexts } from '../../compiler/lint.js';
import { generateCorpus } from '../compile/generate-corpus.js';
import { median, time } from '../support/measure.js';

const COUNT = Number(process.env['BENCH_POLICIES'] ?? 10000);
const LOOKUPS = Number(process.env['BENCH_LOOKUPS'] ?? 20000);
const RUNS = Number(process.env['BENCH_RUNS'] ?? 5);

/** A deterministic pseudo-random sequence (mulberry32). */
function createRandom(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function resourceNear(m: Matcher, r: () => number): string {
  switch (m.kind) {
    case 'path':
      return m.path;
    case 'execname':
      return `/usr/bin/${m.name}`;
    case 'directory':
      return r() < 0.5 ? `${m.dir}file-${Math.floor(r() * 100)}` : `${m.dir}sub/deeper/file`;
    case 'pattern':
      return m.pattern.replace(/\*\*/g, 'a/b').replace(/\*/g, 'user').replace(/\?/g, 'x');
    case 'protocol':
      return m.protocol;
    case 'capability':
      return m.capability;
    case 'address':
      return 'tcp';
  }
}

const lint = lintTexts(generateCorpus(COUNT));
const ruleSet = lint.ruleSet;
const ruleCount = ruleSet.policies.reduce((n, p) => n + p.rules.length, 0);

// Build time and size.
let bytes: Uint8Array = buildRuleTable(ruleSet);
const builds: number[] = [];
for (let i = 0; i < 3; i++) builds.push(time(() => (bytes = buildRuleTable(ruleSet))));
const read = readRuleTable(bytes);
if (!read.ok) throw new Error(read.error);
const table = read.table;

// Every policy selects the workload: the worst case for both lookups.
const set: PolicySet = {
  bits: new Uint8Array((table.policyCount + 7) >>> 3).fill(0xff),
  allowUnscoped: 0,
  workloadKind: 'container',
};
const ordered: PolicyRule[] = ruleSet.policies.flatMap((policy) =>
  policy.rules.map((rule) => ({ policy, rule })),
);
ordered.sort(compareRulePrecedence);

// Operations: half aimed at random rules, half misses.
const random = createRandom(42);
const operations: OperationRequest[] = [];
for (let i = 0; i < LOOKUPS; i++) {
  const target = ordered[Math.floor(random() * ordered.length)];
  if (target === undefined) break;
  const hit = random() < 0.5;
  const op: OperationRequest = {
    operation: target.rule.operation,
    resource: hit
      ? resourceNear(target.rule.matcher, random)
      : `/var/miss/${Math.floor(random() * 1e6)}/file`,
    write: random() < 0.3,
    owner: random() < 0.5,
    executable: random() < 0.5 ? '/bin/sh' : `/usr/bin/cap-${Math.floor(random() * COUNT)}`,
    parentExecutable: '/bin/sh',
  };
  if (op.operation === Operation.Network && !hit) op.resource = 'udp';
  if (op.operation === Operation.Capabilities && !hit) op.resource = 'sys_module';
  operations.push(op);
}

function linearScan(op: OperationRequest): number {
  for (let i = 0; i < ordered.length; i++) {
    const c = ordered[i];
    if (c !== undefined && matchesRule(c.rule, op)) return i;
  }
  return -1;
}

// Both answer the same: the walk's rule index is the position in precedence order.
let disagreements = 0;
let matched = 0;
const CHECKED = Math.min(operations.length, 2000);
for (const op of operations.slice(0, CHECKED)) {
  const a = table.findDecidingRule(set, op);
  const b = linearScan(op);
  if ((a ?? -1) !== b) disagreements++;
  if (b !== -1) matched++;
}

const walk: number[] = [];
const scan: number[] = [];
let sink = 0;
for (let run = 0; run <= RUNS; run++) {
  const w = time(() => {
    for (const op of operations) sink += table.findDecidingRule(set, op) ?? 0;
  });
  const s = time(() => {
    const sample = operations.length / 20;
    for (let i = 0; i < sample; i++) {
      const op = operations[i];
      if (op !== undefined) sink += linearScan(op);
    }
  });
  if (run === 0) continue;
  walk.push(w);
  scan.push(s * 20);
}

const walkPerSecond = operations.length / (median(walk) / 1000);
const scanPerSecond = operations.length / (median(scan) / 1000);
process.stdout.write(
  `${JSON.stringify(
    {
      bench: 'rules',
      policies: ruleSet.policies.length,
      rules: ruleCount,
      tableBytes: bytes.length,
      buildMs: Math.round(median(builds) * 10) / 10,
      lookups: operations.length,
      checkedAgainstLinearScan: CHECKED,
      checkedMatched: matched,
      disagreements,
      walkLookupsPerSecond: Math.round(walkPerSecond),
      linearScanLookupsPerSecond: Math.round(scanPerSecond),
      ratio: Math.round((walkPerSecond / scanPerSecond) * 10) / 10,
      note: 'linear scan timed on a 1/20 sample of the same lookups and scaled; policy set = all policies (worst case)',
      sink: sink > 0,
    },
    null,
    2,
  )}\n`,
);
