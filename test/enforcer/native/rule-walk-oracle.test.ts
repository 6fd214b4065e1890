// The fanotify helper's C lookup walk (enforcer/native/rule-table.c, driven through `rtctl-fanotify
// --decide`) against the decision oracle (compiler/decide) on generated rule sets, workloads and operations,
// with the policy sets computed the way the enforcer computes them (enforcer/node-state.ts).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fc from 'fast-check';
import '../../support/property-seed.js';
import { orderRuleTable } from '../../../compiler/rule-table/build-rule-table.js';
import { decideOperation } from '../../../compiler/decide/decide.js';
import { normalizeOperationRequest } from '../../../compiler/decide/match-rule.js';
import { getGlobPrefixDirectory, matchesGlob } from '../../../compiler/decide/path-match.js';
import type { OperationRequest, Postures } from '../../../compiler/decide/decision-input.js';
import { Operation, type RuleSet } from '../../../compiler/ir/rule-set.js';
import { buildNodeState } from '../../../enforcer/node-state.js';
import { describeContainer, describeHost } from '../../../enforcer/workload.js';
import { NativeArtifact, requireNativeArtifact } from '../../support/native.js';
import { REAL_TOOL_TIMEOUT_MS } from '../../support/timeouts.js';
import { arbScenario } from '../../compiler/decide/arbitrary-rule-set.js';

const CLASS: Record<Operation, number> = { Process: 0, File: 1, Network: 2, Capabilities: 3 };

function hex(s: string | undefined): string {
  return s === undefined || s === '' ? '-' : Buffer.from(s, 'utf8').toString('hex');
}

/** The resource as a data plane hands it to the walk (lower case, capabilities without `cap_`). */
function normalizeResource(op: OperationRequest): string {
  if (op.operation === Operation.Network) return op.resource.toLowerCase();
  if (op.operation === Operation.Capabilities) return op.resource.toLowerCase().replace(/^cap_/, '');
  return op.resource;
}

/** The directory holding `path`, with its trailing '/' ("/" for the root and for a path with no parent). */
function parentDir(path: string): string {
  const i = path.lastIndexOf('/');
  return i <= 0 ? '/' : path.slice(0, i + 1);
}

function postureOf(postures: Postures, op: Operation): 'a' | 'b' {
  const p =
    op === Operation.Network
      ? postures.network
      : op === Operation.Capabilities
        ? postures.capabilities
        : postures.file;
  return p === 'block' ? 'b' : 'a';
}

/** Runs the helper's `--decide` mode over the queries in `chunks`; its answer lines. */
function askHelper(helper: string, chunks: readonly Buffer[]): string[] {
  const r = spawnSync(helper, ['--decide'], {
    input: Buffer.concat(chunks),
    encoding: 'utf8',
    maxBuffer: 64 << 20,
  });
  assert.equal(r.status, 0, r.stderr);
  return r.stdout.split('\n').filter((l) => l !== '');
}

/** Adds the actors the rule set's fromSource entries name: each path, a child and a grandchild of each directory. */
function addSourceActors(actors: Set<string | undefined>, ruleSet: RuleSet): void {
  for (const p of ruleSet.policies)
    for (const rule of p.rules)
      for (const src of rule.fromSource) {
        if (src.kind === 'path') actors.add(src.path);
        else {
          actors.add(`${src.dir}x`);
          actors.add(`${src.dir}x/y`);
        }
      }
}

/**
 * Asserts the oracle allows `operation` on `resource` without alert for every actor, both access modes,
 * owners, terminals and postures (what an ignore mark assumes); `hides` names the mark in the message.
 * Returns the number of decisions checked.
 */
function assertSilentForAll(
  ruleSet: RuleSet,
  workload: Parameters<typeof decideOperation>[1],
  operation: Operation,
  resource: string,
  actors: ReadonlySet<string | undefined>,
  hides: string,
): number {
  let checked = 0;
  for (const actor of actors)
    for (const write of [false, true])
      for (const owner of [false, true])
        for (const tty of [false, true])
          for (const posture of ['block', 'audit'] as const) {
            const op: OperationRequest = {
              operation,
              resource,
              ...(actor === undefined ? {} : { executable: actor, parentExecutable: actor }),
              write,
              owner,
              tty,
            };
            const d = decideOperation(ruleSet, workload, op, {
              file: posture,
              network: posture,
              capabilities: posture,
            });
            checked++;
            assert.ok(
              d.allowed && (d.alert ?? null) === null,
              `${hides} would hide ${JSON.stringify(d)} for ${JSON.stringify(op)}`,
            );
          }
  return checked;
}

describe('fanotify helper lookup walk vs the decision oracle', function () {
  this.timeout(REAL_TOOL_TIMEOUT_MS);
  let helper = '';

  before(function () {
    helper = requireNativeArtifact(this, NativeArtifact.fanotifyHelper);
  });

  it('decides like the oracle on 800 generated scenarios (fast-check, fixed seed)', () => {
    const scenarios = fc.sample(arbScenario, { numRuns: 800, seed: 20261122 });
    const chunks: Buffer[] = [];
    const expected: {
      ruleSet: RuleSet;
      op: OperationRequest;
      allowed: boolean;
      action: string | null;
      policy: string | null;
    }[] = [];
    const policyNames: string[][] = [];
    scenarios.forEach(({ ruleSet, workload, operations, postures }, index) => {
      // The policy set as the enforcer computes it for this workload.
      const w =
        workload.kind === 'host'
          ? describeHost()
          : describeContainer({
              id: 'c',
              labels: { ...workload.labels, 'io.kubernetes.pod.namespace': workload.namespace },
              image: '',
              pid: 2,
              cgroupPath: '',
            });
      // The postures reach the walk the way the enforcer hands them over: host postures from the configuration
      // (the host), a Namespace annotation or the configured defaults (containers, alternately), resolved by
      // the node state; the oracle gets the scenario's postures directly.
      const viaDefaults = index % 2 === 0;
      const node = buildNodeState(
        {
          ruleSet,
          workloads: [w],
          postures: viaDefaults ? new Map() : new Map([[workload.namespace, postures]]),
          postureSettings:
            workload.kind === 'host'
              ? { host: postures, defaults: { file: 'block', network: 'block', capabilities: 'block' } }
              : viaDefaults
                ? { defaults: postures, host: { file: 'block', network: 'block', capabilities: 'block' } }
                : {},
          nodeLabels: { ...workload.nodeLabels },
        },
        1,
      );
      const set = node.state.workloads[0]?.policies ?? [];
      // No policy selects the workload: it is not enforced, so no posture reaches the walk (nothing is
      // least-permissive either).
      const walkPostures = node.state.workloads[0]?.postures ?? postures;
      const table = node.state.table.bytes;
      chunks.push(Buffer.from(`table ${table.byteLength}\n`), Buffer.from(table));
      const names = orderRuleTable(ruleSet).policies.map((p) => p.name);
      for (const op of operations) {
        if (op.args !== undefined && op.args.length > 0) continue; // the data planes do not see arguments
        const d = decideOperation(ruleSet, workload, op, postures);
        // The kernel hands the data plane normalized absolute paths (d_path).
        const kernelView = normalizeOperationRequest(op);
        const actor =
          op.operation === Operation.Process ? kernelView.parentExecutable : kernelView.executable;
        chunks.push(
          Buffer.from(
            `Q ${CLASS[op.operation]} ${op.write ? 1 : 0} ${op.owner ? 1 : 0} ${op.tty ? 1 : 0} ${postureOf(walkPostures, op.operation)} ${set.length > 0 ? set.join(',') : '-'} ${hex(normalizeResource(kernelView))} ${hex(actor)}\n`,
          ),
        );
        expected.push({
          ruleSet,
          op,
          allowed: d.allowed,
          action: d.alert?.Action ?? null,
          policy: d.alert?.PolicyName ?? null,
        });
        policyNames.push(names);
      }
    });
    const lines = askHelper(helper, chunks);
    assert.equal(lines.length, expected.length, 'one answer per query');
    assert.ok(expected.length > 1000, `enough queries (${expected.length})`);
    let reported = 0;
    lines.forEach((line, i) => {
      const e = expected[i];
      assert.ok(e);
      const [tag, rule, action, posture, report] = line.split(' ').map((x, k) => (k === 0 ? x : Number(x)));
      assert.equal(tag, 'D', line);
      const ctx = JSON.stringify(e.op);
      assert.equal(action !== 2, e.allowed, `allowed ${ctx}`);
      assert.equal(report === 1, e.action !== null, `alert presence ${ctx}`);
      if (e.action !== null) {
        reported++;
        assert.equal(action === 2 ? 'Block' : 'Audit', e.action, `alert action ${ctx}`);
        const rulesInOrder = orderRuleTable(e.ruleSet).rules;
        const policy = posture === 1 ? 'DefaultPosture' : rulesInOrder[Number(rule)]?.policy.name;
        assert.equal(policy, e.policy, `policy ${ctx}`);
      }
    });
    assert.ok(reported > 100, `enough alerting decisions (${reported})`);
    assert.ok(policyNames.length === expected.length);
  });

  it('an inode it would stop asking for (ignore mark) is "allow without alert" for every actor, mode, owner, terminal and posture in the oracle (800 scenarios, fixed seed)', () => {
    const scenarios = fc.sample(arbScenario, { numRuns: 800, seed: 20261125 });
    const chunks: Buffer[] = [];
    const asked: { ruleSet: RuleSet; scenario: (typeof scenarios)[number]; op: OperationRequest }[] = [];
    for (const scenario of scenarios) {
      const { ruleSet, workload, operations } = scenario;
      const w =
        workload.kind === 'host'
          ? describeHost()
          : describeContainer({
              id: 'c',
              labels: { ...workload.labels, 'io.kubernetes.pod.namespace': workload.namespace },
              image: '',
              pid: 2,
              cgroupPath: '',
            });
      const node = buildNodeState(
        { ruleSet, workloads: [w], postures: new Map(), nodeLabels: { ...workload.nodeLabels } },
        1,
      );
      const set = node.state.workloads[0]?.policies ?? [];
      const table = node.state.table.bytes;
      chunks.push(Buffer.from(`table ${table.byteLength}\n`), Buffer.from(table));
      for (const op of operations) {
        if (op.operation !== Operation.Process && op.operation !== Operation.File) continue;
        const kernelView = normalizeOperationRequest(op);
        chunks.push(
          Buffer.from(
            `I ${CLASS[op.operation]} ${set.length > 0 ? set.join(',') : '-'} ${hex(normalizeResource(kernelView))}\n`,
          ),
        );
        asked.push({ ruleSet, scenario, op });
      }
    }
    const lines = askHelper(helper, chunks);
    assert.equal(lines.length, asked.length, 'one answer per query');
    let ignorable = 0;
    let checked = 0;
    lines.forEach((line, i) => {
      const a = asked[i];
      assert.ok(a);
      assert.match(line, /^I [01]$/);
      if (line !== 'I 1') return;
      ignorable++;
      // Every actor a rule names (exact paths, a child and a grandchild of each directory), none, and the
      // operation's own; both access modes, owners, terminals; both postures.
      const actors = new Set<string | undefined>([
        undefined,
        a.op.executable,
        a.op.parentExecutable,
        '/bin/sh',
      ]);
      addSourceActors(actors, a.ruleSet);
      checked += assertSilentForAll(
        a.ruleSet,
        a.scenario.workload,
        a.op.operation,
        a.op.resource,
        actors,
        'an ignore mark',
      );
    });
    assert.ok(ignorable > 200, `enough ignorable operations (${ignorable})`);
    assert.ok(ignorable < asked.length, 'some operations are not ignorable');
    assert.ok(checked > ignorable * 16);
  });

  it('a directory it would mark (directory ignore mark) has every child name "allow without alert" for every actor, mode, owner, terminal and posture in the oracle (300 scenarios, fixed seed)', () => {
    const scenarios = fc.sample(arbScenario, { numRuns: 300, seed: 20261126 });
    const randomNames = fc.sample(
      fc.stringMatching(/^[a-z0-9._ -]{1,8}$/).filter((n) => n !== '.' && n !== '..'),
      { numRuns: 12, seed: 20261126 },
    );
    const chunks: Buffer[] = [];
    const asked: { scenario: (typeof scenarios)[number]; cls: Operation; dir: string }[] = [];
    for (const scenario of scenarios) {
      const { ruleSet, workload, operations } = scenario;
      const w =
        workload.kind === 'host'
          ? describeHost()
          : describeContainer({
              id: 'c',
              labels: { ...workload.labels, 'io.kubernetes.pod.namespace': workload.namespace },
              image: '',
              pid: 2,
              cgroupPath: '',
            });
      const node = buildNodeState(
        { ruleSet, workloads: [w], postures: new Map(), nodeLabels: { ...workload.nodeLabels } },
        1,
      );
      const set = node.state.workloads[0]?.policies ?? [];
      const table = node.state.table.bytes;
      chunks.push(Buffer.from(`table ${table.byteLength}\n`), Buffer.from(table));
      // The directories of the operations' files, and every directory a rule names (its own, its parent, a
      // glob's literal prefix directory) with its parent: where the answer is most likely to turn.
      const dirs = new Set<string>(['/']);
      const addWithParent = (d: string): void => {
        dirs.add(d);
        dirs.add(parentDir(d.slice(0, -1)));
      };
      for (const op of operations) {
        if (op.operation !== Operation.Process && op.operation !== Operation.File) continue;
        const r = normalizeResource(normalizeOperationRequest(op));
        if (r.startsWith('/')) addWithParent(parentDir(r));
      }
      for (const p of ruleSet.policies)
        for (const rule of p.rules) {
          const m = rule.matcher;
          if (m.kind === 'path') addWithParent(parentDir(m.path));
          else if (m.kind === 'directory') addWithParent(m.dir.endsWith('/') ? m.dir : `${m.dir}/`);
          else if (m.kind === 'pattern') addWithParent(getGlobPrefixDirectory(m.pattern));
        }
      for (const cls of [Operation.Process, Operation.File])
        for (const dir of [...dirs].sort()) {
          chunks.push(Buffer.from(`J ${CLASS[cls]} ${set.length > 0 ? set.join(',') : '-'} ${hex(dir)}\n`));
          asked.push({ scenario, cls, dir });
        }
    }
    const lines = askHelper(helper, chunks);
    assert.equal(lines.length, asked.length, 'one answer per query');
    let markable = 0;
    let checked = 0;
    let matchedByPattern = 0;
    lines.forEach((line, i) => {
      const a = asked[i];
      assert.ok(a);
      assert.match(line, /^J [01]$/);
      if (line !== 'J 1') return;
      markable++;
      const { ruleSet } = a.scenario;
      // Child names: every name a rule names or spells (path base names, base-name rules, every segment of
      // every rule value), a glob's instances (its wildcards replaced) that fall in the directory, and random
      // names.
      const names = new Set<string>(['x', 'hello.txt', ...randomNames]);
      const actors = new Set<string | undefined>([undefined, '/bin/sh']);
      for (const p of ruleSet.policies)
        for (const rule of p.rules) {
          const m = rule.matcher;
          const value =
            m.kind === 'path'
              ? m.path
              : m.kind === 'execname'
                ? m.name
                : m.kind === 'directory'
                  ? m.dir
                  : m.kind === 'pattern'
                    ? m.pattern
                    : '';
          for (const seg of value.split('/')) if (seg !== '' && !/[*?]/.test(seg)) names.add(seg);
          if (m.kind === 'pattern')
            for (const fill of ['x', 'e', 'h', 'ab', 'a/b'])
              for (const q of ['q', 'a']) {
                const instance = m.pattern.replace(/\*+/g, fill).replace(/\?/g, q);
                if (parentDir(instance) === a.dir && matchesGlob(m.pattern, instance)) {
                  names.add(instance.slice(a.dir.length));
                  matchedByPattern++;
                }
              }
        }
      addSourceActors(actors, ruleSet);
      for (const name of names)
        checked += assertSilentForAll(
          ruleSet,
          a.scenario.workload,
          a.cls,
          `${a.dir}${name}`,
          actors,
          `a mark on ${a.dir}`,
        );
    });
    assert.ok(markable > 300, `enough markable directories (${markable} of ${asked.length})`);
    assert.ok(markable < asked.length * 0.9, `some directories are refused (${markable} of ${asked.length})`);
    assert.ok(matchedByPattern > 20, `glob instances among the names (${matchedByPattern})`);
    assert.ok(checked > markable * 100, `names x facts checked (${checked})`);
  });

  it('refuses damaged tables with a message and never crashes (truncations and flipped bytes)', () => {
    const [scenario] = fc.sample(arbScenario, { numRuns: 1, seed: 7 });
    assert.ok(scenario);
    const good = buildNodeState(
      { ruleSet: scenario.ruleSet, workloads: [], postures: new Map(), nodeLabels: {} },
      1,
    ).state.table.bytes;
    const chunks: Buffer[] = [];
    const query = Buffer.from(`Q 1 0 0 0 a 0 ${hex('/etc/passwd')} -\n`);
    let cases = 0;
    for (const cut of [0, 8, 64, 127, 128, good.byteLength - 1]) {
      chunks.push(Buffer.from(`table ${cut}\n`), Buffer.from(good.subarray(0, cut)), query);
      cases++;
    }
    for (let i = 0; i < 200; i++) {
      const bad = Buffer.from(good);
      const at = (i * 7919) % bad.byteLength;
      bad[at] = (bad[at] ?? 0) ^ (1 + (i % 255));
      chunks.push(Buffer.from(`table ${bad.byteLength}\n`), bad, query);
      cases++;
    }
    const r = spawnSync(helper, ['--decide'], { input: Buffer.concat(chunks), encoding: 'utf8' });
    assert.equal(r.status, 0, `exit ${String(r.status)} signal ${String(r.signal)}`);
    const lines = r.stdout.split('\n').filter((l) => l !== '');
    const errors = lines.filter((l) => l.startsWith('E '));
    assert.ok(errors.length >= 6, 'every truncated table is refused');
    assert.ok(
      errors.every((l) => l.length > 4),
      'refusals carry a message',
    );
    assert.ok(lines.length >= cases, 'one answer or refusal per table');
  });

  it('matches adversarial globs without backtracking blow-up (finishes within the spawn timeout)', () => {
    const pattern = `/${'*a'.repeat(40)}b`;
    const ruleSet: RuleSet = {
      policies: [
        {
          kind: 'RuntimePolicy',
          name: 'glob',
          namespace: 'default',
          target: { kind: 'pods', namespace: 'default', matchLabels: {}, matchExpressions: [] },
          rules: [
            {
              operation: Operation.File,
              matcher: { kind: 'pattern', pattern },
              fromSource: [],
              readOnly: false,
              ownerOnly: false,
              action: 'Block',
              severity: 1,
              tags: [],
              message: '',
              allowedArgs: [],
              pts: false,
              location: { file: 'g.yaml', line: 1, column: 1, pointer: '' },
            },
          ],
          syscallRules: [],
          presets: [],
          dnsQueryRules: [],
          deviceRules: [],
          apparmor: '',
          location: { file: 'g.yaml', line: 1, column: 1, pointer: '' },
        },
      ],
    };
    const table = buildNodeState({ ruleSet, workloads: [], postures: new Map(), nodeLabels: {} }, 1).state
      .table.bytes;
    const path = `/${'a'.repeat(3000)}`;
    const r = spawnSync(helper, ['--decide'], {
      input: Buffer.concat([
        Buffer.from(`table ${table.byteLength}\n`),
        Buffer.from(table),
        Buffer.from(`Q 1 0 0 0 a 0 ${hex(path)} -\nQ 1 0 0 0 a 0 ${hex(`${path}b`)} -\n`),
      ]),
      encoding: 'utf8',
      timeout: 60_000, // a backtracking blow-up never ends; a linear match ends well within this under load
    });
    assert.equal(r.status, 0);
    const [miss, hit] = r.stdout.trim().split('\n');
    assert.equal(miss?.split(' ')[2], '0', 'no b at the end: allowed');
    assert.equal(hit?.split(' ')[2], '2', 'ends in b: blocked');
  });
});
