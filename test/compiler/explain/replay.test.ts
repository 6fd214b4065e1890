// rtctl explain --replay: alert records turned back into requests (table-driven), and the CLI re-deciding a
// recorded log under the example policies and under an edited copy where an Audit rule became Block.
import assert from 'node:assert/strict';
import { copyFileSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { toReplayRequest } from '../../../compiler/explain/replay.js';
import { REPO_ROOT } from '../../support/paths.js';
import { runRtctl } from '../../support/run-rtctl.js';

const EXAMPLES = path.join(REPO_ROOT, 'policies', 'examples');
const AUDIT = {
  UpdatedTime: '2026-11-22T07:38:50.349923Z',
  HostName: 'n1',
  NamespaceName: 'payments',
  PodName: 'ledger-1',
  Labels: 'app=ledger,tier=back',
  PolicyName: 'audit-credentials',
  Severity: '7',
  Type: 'MatchedPolicy',
  Source: '/usr/bin/cat',
  Operation: 'File',
  Resource: '/etc/ledger/keys/signing.pem',
  Data: 'syscall=SYS_OPENAT fd=-100 flags=O_RDONLY',
  Action: 'Audit',
  Result: 'Passed',
};
const BLOCK = {
  UpdatedTime: '2026-11-22T07:38:51Z',
  NamespaceName: 'shop',
  PodName: 'web-1',
  Labels: 'app=web',
  PolicyName: 'block-package-managers',
  Type: 'MatchedPolicy',
  Source: '/bin/sh',
  Operation: 'Process',
  Resource: '/usr/bin/apt',
  Data: 'syscall=SYS_EXECVE',
  Action: 'Block',
  Result: 'Operation not permitted',
};

describe('explain --replay: alert record → request', () => {
  const cases: Array<[string, Record<string, unknown>, unknown]> = [
    [
      'file read in a pod',
      AUDIT,
      {
        workload: {
          kind: 'container',
          namespace: 'payments',
          labels: { app: 'ledger', tier: 'back' },
          nodeLabels: {},
        },
        operation: {
          operation: 'File',
          resource: '/etc/ledger/keys/signing.pem',
          write: false,
          owner: false,
          executable: '/usr/bin/cat',
        },
        postures: {},
      },
    ],
    [
      'file write by flags',
      { ...AUDIT, Data: 'syscall=SYS_OPENAT fd=-100 flags=O_WRONLY|O_CREAT' },
      {
        workload: {
          kind: 'container',
          namespace: 'payments',
          labels: { app: 'ledger', tier: 'back' },
          nodeLabels: {},
        },
        operation: {
          operation: 'File',
          resource: '/etc/ledger/keys/signing.pem',
          write: true,
          owner: false,
          executable: '/usr/bin/cat',
        },
        postures: {},
      },
    ],
    [
      'exec: the source is the parent',
      BLOCK,
      {
        workload: { kind: 'container', namespace: 'shop', labels: { app: 'web' }, nodeLabels: {} },
        operation: {
          operation: 'Process',
          resource: '/usr/bin/apt',
          write: false,
          owner: false,
          parentExecutable: '/bin/sh',
        },
        postures: {},
      },
    ],
    [
      'host alert gets the given node labels',
      { ...BLOCK, NamespaceName: '', Type: 'MatchedHostPolicy', Labels: '' },
      {
        workload: { kind: 'host', namespace: '', labels: {}, nodeLabels: { role: 'worker' } },
        operation: {
          operation: 'Process',
          resource: '/usr/bin/apt',
          write: false,
          owner: false,
          parentExecutable: '/bin/sh',
        },
        postures: {},
      },
    ],
    [
      'syscall monitor operations are not replayed',
      { ...BLOCK, Operation: 'Syscall' },
      /operation "Syscall" is not decided by policies/,
    ],
    [
      'a raw ICMP socket on BPF-LSM: both names from the socket numbers in Data',
      {
        ...BLOCK,
        Operation: 'Network',
        Source: '/usr/bin/ping',
        Resource: 'raw',
        Data: 'syscall=SYS_SOCKET domain=2 type=3 protocol=1',
      },
      {
        workload: { kind: 'container', namespace: 'shop', labels: { app: 'web' }, nodeLabels: {} },
        operation: {
          operation: 'Network',
          resource: 'raw',
          socketNames: ['raw', 'icmp'],
          write: false,
          owner: false,
          executable: '/usr/bin/ping',
        },
        postures: {},
      },
    ],
    [
      'a raw ICMP socket on the cgroup plane: both names from the resource',
      {
        ...BLOCK,
        Operation: 'Network',
        Source: '/usr/bin/ping',
        Resource: 'protocol=raw,icmp',
        Data: 'syscall=SYS_SOCKET family=AF_INET protocol=raw,icmp',
      },
      {
        workload: { kind: 'container', namespace: 'shop', labels: { app: 'web' }, nodeLabels: {} },
        operation: {
          operation: 'Network',
          resource: 'raw',
          socketNames: ['raw', 'icmp'],
          write: false,
          owner: false,
          executable: '/usr/bin/ping',
        },
        postures: {},
      },
    ],
    ['a record without Resource', { ...BLOCK, Resource: 3 }, /not an alert record/],
    ['labels that are not pairs', { ...BLOCK, Labels: 'app' }, /Labels "app" are not k=v pairs/],
  ];
  for (const [name, record, expected] of cases) {
    it(name, () => {
      const r = toReplayRequest(record, { role: 'worker' });
      if (expected instanceof RegExp) assert.match(typeof r === 'string' ? r : JSON.stringify(r), expected);
      else assert.deepEqual(r, expected);
    });
  }
});

describe('rtctl explain --replay (CLI)', function () {
  this.timeout(60_000);
  let dir: string;
  let log: string;
  before(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'rtctl-replay-'));
    for (const f of readdirSync(EXAMPLES)) copyFileSync(path.join(EXAMPLES, f), path.join(dir, f));
    log = path.join(dir, 'alerts.ndjson');
    writeFileSync(
      log,
      [
        JSON.stringify(AUDIT),
        JSON.stringify(BLOCK),
        'garbage',
        '',
        '{"rtctlStreamEnd":"behind","missed":3}',
      ].join('\n') + '\n',
    );
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('policies as recorded: nothing changes; the line that is not a record is named, exit 1', async () => {
    const r = await runRtctl(['explain', dir, '--replay', log]);
    assert.equal(r.code, 1, r.stderr);
    assert.equal(
      r.stdout,
      `${log}:3: not replayed: not JSON\n2 alerts replayed: 0 would change, 2 unchanged; 1 line not replayed; 1 stream-end marker\n`,
    );
  });

  it('switching the Audit rule to Block: the audited read would be denied, with the rule', async () => {
    const policy = path.join(dir, 'audit-credentials.yaml');
    const text = readFileSync(policy, 'utf8');
    writeFileSync(policy, text.replace('action: Audit', 'action: Block'));
    try {
      const r = await runRtctl(['explain', dir, '--replay', log]);
      assert.match(
        r.stdout,
        new RegExp(
          `^${log.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}:1: 2026-11-22T07:38:50\\.349923Z payments/ledger-1 File /etc/ledger/keys/signing\\.pem by /usr/bin/cat: allowed by audit-credentials \\(Audit\\) -> denied by audit-credentials \\(Block\\) \\(.*audit-credentials\\.yaml:\\d+:9\\)$`,
          'm',
        ),
      );
      assert.match(r.stdout, /2 alerts replayed: 1 would change, 1 unchanged/);
      const json = JSON.parse((await runRtctl(['explain', dir, '--replay', log, '--json'])).stdout) as {
        replayed: number;
        changed: Array<{ line: number; recorded: unknown; now: unknown }>;
      };
      assert.equal(json.replayed, 2);
      assert.deepEqual(
        json.changed.map((c) => [c.line, c.recorded, c.now]),
        [
          [
            1,
            { allowed: true, policy: 'audit-credentials', action: 'Audit' },
            { allowed: false, policy: 'audit-credentials', action: 'Block' },
          ],
        ],
      );
    } finally {
      writeFileSync(policy, text);
    }
  });

  it('removing the blocking policy: the exec would be allowed without alert', async () => {
    const policy = path.join(dir, 'block-package-managers.yaml');
    const text = readFileSync(policy, 'utf8');
    rmSync(policy);
    try {
      const r = await runRtctl(['explain', dir, '--replay', log]);
      assert.match(
        r.stdout,
        /:2: .* shop\/web-1 Process \/usr\/bin\/apt by \/bin\/sh: denied by block-package-managers \(Block\) -> allowed, no alert$/m,
      );
    } finally {
      writeFileSync(policy, text);
    }
  });

  it('usage: operation options do not go with --replay (exit 2); a missing log is exit 2', async () => {
    const r = await runRtctl(['explain', dir, '--replay', log, '--exec', '/bin/sh']);
    assert.equal(r.code, 2);
    assert.match(r.stderr, /--replay takes the operations from the log; drop --exec/);
    const missing = await runRtctl(['explain', dir, '--replay', path.join(dir, 'nope.ndjson')]);
    assert.equal(missing.code, 2);
    assert.match(missing.stderr, /cannot read .*nope\.ndjson: ENOENT/);
  });
});
