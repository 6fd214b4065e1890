// `rtctl enforcer run --rule-table`: the compiled table `rtctl compile --target rules` writes is enforced as
// the policies it was compiled from (same table, same policy sets), and a corrupt table or one of another
// major version is refused on load with its code and byte offset, before any data plane starts.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { lintTexts } from '../../../compiler/lint.js';
import { Header, VERSION_MAJOR } from '../../../compiler/rule-table/rule-table-format.js';
import { buildNodeState } from '../../../enforcer/node-state.js';
import { RuleTableLoadError, readRuleTableSnapshot } from '../../../enforcer/io/rule-table-policy-source.js';
import { describeContainer, describeHost } from '../../../enforcer/workload.js';
import { REPO_ROOT } from '../support/enforcer-process.js';

const POLICIES = `apiVersion: security.runtime.com/v1
kind: RuntimePolicy
metadata: { name: web-block, namespace: ns-a }
spec:
  selector:
    matchLabels: { app: web }
    matchExpressions:
    - { key: label, operator: NotIn, values: [tier=test] }
  process:
    matchPaths:
    - path: /bin/sleep
  action: Block
---
apiVersion: security.runtime.com/v1
kind: RuntimePolicy
metadata: { name: ns-audit, namespace: ns-a }
spec:
  selector:
    matchLabels: {}
  file:
    matchDirectories:
    - dir: /data/
  action: Audit
---
apiVersion: security.runtime.com/v1
kind: RuntimeHostPolicy
metadata: { name: host-block }
spec:
  nodeSelector:
    matchLabels:
      kubernetes.io/hostname: node-1
  process:
    matchPaths:
    - path: /usr/bin/diff
  action: Block
`;

function rtctl(args: string[]): { status: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, ['--import', 'tsx', join(REPO_ROOT, 'bin/rtctl.ts'), ...args], {
    cwd: REPO_ROOT,
    encoding: 'utf8',
    timeout: 60000,
  });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

const container = (id: string, ns: string, labels: Record<string, string>) =>
  describeContainer({
    id,
    labels: { 'io.kubernetes.pod.namespace': ns, 'io.kubernetes.pod.name': `${id}-pod`, ...labels },
    image: 'i',
    pid: 10,
    cgroupPath: `/k8s.io/${id}`,
  });

describe('enforcer rule-table source (--rule-table)', function () {
  this.timeout(120000);
  let work = '';
  let tableFile = '';

  before(() => {
    work = mkdtempSync(join(tmpdir(), 'rtctl-rule-table-src-'));
    writeFileSync(join(work, 'policies.yaml'), POLICIES);
    const r = rtctl(['compile', join(work, 'policies.yaml'), '-o', join(work, 'build'), '--target', 'rules']);
    assert.equal(r.status, 0, r.stderr);
    tableFile = join(work, 'build', 'rules', 'rule-table.bin');
  });

  after(() => {
    if (work) rmSync(work, { recursive: true, force: true });
  });

  it('enforces the compiled table as the policies it was compiled from', async () => {
    const snapshot = await readRuleTableSnapshot(tableFile);
    assert.ok(snapshot.ruleTable);
    const workloads = [
      describeHost(),
      container('c1', 'ns-a', { app: 'web' }),
      container('c2', 'ns-a', { app: 'web', tier: 'test' }),
      container('c3', 'ns-b', { app: 'web' }),
    ];
    const common = { workloads, postures: new Map(), nodeLabels: { 'kubernetes.io/hostname': 'node-1' } };
    const fromTable = buildNodeState({ ruleTable: snapshot.ruleTable, ...common }, 1);
    const lint = lintTexts([{ file: join(work, 'policies.yaml'), text: POLICIES }]);
    const fromPolicies = buildNodeState({ ruleSet: lint.ruleSet, ...common }, 1);
    assert.deepEqual(
      Buffer.from(fromTable.state.table.bytes),
      Buffer.from(fromPolicies.state.table.bytes),
      'the same table',
    );
    assert.deepEqual(fromTable.state.table.records, fromPolicies.state.table.records);
    assert.deepEqual(fromTable.state.workloads, fromPolicies.state.workloads, 'the same policy sets');
    assert.deepEqual(
      fromTable.state.workloads.map((w) => [
        w.anchor.key,
        w.policies.map((i) => fromTable.policies[i]?.name),
      ]),
      [
        ['c1', ['ns-audit', 'web-block']],
        ['c2', ['ns-audit']],
        ['host', ['host-block']],
      ],
    );
  });

  const damaged: { name: string; damage: (b: Buffer) => Buffer; code: string; offset: number }[] = [
    {
      name: 'another major version',
      damage: (b) => {
        const c = Buffer.from(b);
        c.writeUInt16LE(VERSION_MAJOR + 1, Header.versionMajor);
        return c;
      },
      code: 'RULE_TABLE_VERSION',
      offset: Header.versionMajor,
    },
    {
      name: 'a truncated file',
      damage: (b) => b.subarray(0, b.length - 8),
      code: 'RULE_TABLE_CORRUPT',
      offset: Header.fileSize,
    },
    {
      name: 'not a table',
      damage: () => Buffer.from('apiVersion: v1\n'),
      code: 'RULE_TABLE_NOT_A_TABLE',
      offset: 0,
    },
  ];
  for (const c of damaged) {
    it(`refuses ${c.name} with ${c.code} at byte ${c.offset}`, async () => {
      const file = join(work, `bad-${c.code}.bin`);
      writeFileSync(file, c.damage(readFileSync(tableFile)));
      await assert.rejects(readRuleTableSnapshot(file), (err: unknown) => {
        assert.ok(err instanceof RuleTableLoadError);
        assert.equal(err.refusal.code, c.code);
        assert.equal(err.refusal.offset, c.offset);
        assert.ok(err.message.startsWith(`${file} at byte ${c.offset}: ${c.code}: `), err.message);
        return true;
      });
    });
  }

  it('rtctl enforcer run exits 2 on a bad table before starting any data plane', () => {
    const file = join(work, 'bad-version.bin');
    const bytes = Buffer.from(readFileSync(tableFile));
    bytes.writeUInt16LE(9, Header.versionMajor);
    writeFileSync(file, bytes);
    const stateDir = join(work, 'state');
    const r = rtctl([
      'enforcer',
      'run',
      '--rule-table',
      file,
      '--data-plane',
      'fanotify',
      '--state-dir',
      stateDir,
      '--listen',
      '127.0.0.1:0',
    ]);
    assert.equal(r.status, 2, r.stderr);
    assert.match(
      r.stderr,
      /^rtctl: --rule-table \S+bad-version\.bin at byte 8: RULE_TABLE_VERSION: unsupported rule table version 9\.0 \(this reader reads 2\.x\)\n$/,
    );
    assert.ok(!existsSync(stateDir) || readdirSync(stateDir).length === 0, 'no data plane was started');
  });

  it('takes --rule-table as the one policy source', () => {
    const r = rtctl(['enforcer', 'run', '--rule-table', tableFile, '--policy-dir', work]);
    assert.equal(r.status, 2);
    assert.match(r.stderr, /give exactly one policy source/);
  });
});
