// `rtctl explain`: option parsing (table-driven), the pure explanation, and the real CLI run as a child
// process over policy files written to a temporary directory (exit codes, text and --json).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseExplainOptions, type ExplainOptions } from '../../../compiler/explain/explain-request.js';
import { explainRequest, formatExplainText } from '../../../compiler/explain/explain.js';
import { lintTexts } from '../../../compiler/lint.js';
import { repoRoot } from '../backends/golden-support.js';
import { Action, dir, makePodPolicy, path as pathM, protocol } from '../decide/rule-set-builder.js';

const usageCases: { name: string; options: ExplainOptions; error: RegExp }[] = [
  { name: 'no operation', options: {}, error: /say which operation/ },
  {
    name: 'two operations',
    options: { exec: '/bin/sh', open: '/etc/x' },
    error: /only one operation, got --exec and --open/,
  },
  {
    name: '--write without --open',
    options: { exec: '/bin/sh', write: true },
    error: /--write goes with --open/,
  },
  {
    name: '--host with --labels',
    options: { host: true, labels: 'a=b', exec: '/bin/sh' },
    error: /--host describes the node/,
  },
  {
    name: '--node-labels without --host',
    options: { nodeLabels: 'a=b', exec: '/bin/sh' },
    error: /--node-labels goes with --host/,
  },
  {
    name: 'label without =',
    options: { labels: 'app', exec: '/bin/sh' },
    error: /--labels expects key=value/,
  },
  {
    name: 'unknown posture class',
    options: { posture: 'process=block', exec: '/bin/sh' },
    error: /unknown class "process"/,
  },
  {
    name: 'bad posture value',
    options: { posture: 'file=deny', exec: '/bin/sh' },
    error: /file must be audit or block/,
  },
  { name: 'relative exec path', options: { exec: 'sh' }, error: /--exec expects an absolute path/ },
  {
    name: '--args without --exec',
    options: { open: '/etc/x', args: '-V' },
    error: /--args goes with --exec/,
  },
  {
    name: 'relative source',
    options: { exec: '/bin/sh', source: 'bash' },
    error: /--source expects an absolute/,
  },
];

const POLICIES = `apiVersion: security.runtime.com/v1
kind: RuntimePolicy
metadata:
  name: block-sa
  namespace: shop
spec:
  selector:
    matchLabels:
      app: web
  file:
    matchDirectories:
      - dir: /run/secrets/kubernetes.io/serviceaccount/
        recursive: true
  action: Block
  severity: 7
---
apiVersion: security.runtime.com/v1
kind: RuntimePolicy
metadata:
  name: allow-nginx
  namespace: shop
spec:
  selector:
    matchLabels:
      app: web
  process:
    matchPaths:
      - path: /usr/sbin/nginx
  action: Allow
---
apiVersion: security.runtime.com/v1
kind: RuntimeHostPolicy
metadata:
  name: host-audit-shadow
spec:
  nodeSelector:
    matchLabels:
      kubernetes.io/hostname: "*"
  file:
    matchPaths:
      - path: /etc/shadow
  action: Audit
`;

describe('rtctl explain', () => {
  describe('option parsing', () => {
    for (const c of usageCases) {
      it(`usage error: ${c.name}`, () => {
        const r = parseExplainOptions(c.options);
        assert.equal(r.ok, false);
        if (!r.ok) assert.match(r.error, c.error);
      });
    }

    it('--source is the parent for --exec and the actor for --open', () => {
      const e = parseExplainOptions({ exec: '/bin/sleep', source: '/bin/bash' });
      assert.ok(e.ok);
      assert.equal(e.request.operation.parentExecutable, '/bin/bash');
      assert.equal(e.request.operation.executable, undefined);
      const o = parseExplainOptions({
        open: '/etc/x',
        write: true,
        source: '/bin/cat',
        posture: 'file=block,network=audit',
      });
      assert.ok(o.ok);
      assert.equal(o.request.operation.executable, '/bin/cat');
      assert.equal(o.request.operation.write, true);
      assert.deepEqual(o.request.postures, { file: 'block', network: 'audit' });
    });

    it('--connect takes one protocol, or every name of the socket (raw,icmp)', () => {
      const one = parseExplainOptions({ connect: 'TCP' });
      assert.ok(one.ok);
      assert.deepEqual(
        [one.request.operation.resource, one.request.operation.socketNames],
        ['tcp', undefined],
      );
      const two = parseExplainOptions({ connect: 'raw,icmp', labels: 'app=web' });
      assert.ok(two.ok);
      assert.deepEqual(
        [two.request.operation.resource, two.request.operation.socketNames],
        ['raw', ['raw', 'icmp']],
      );
      const ruleSet = {
        policies: [makePodPolicy('no-icmp', [{ matcher: protocol('icmp'), action: Action.Block }])],
      };
      assert.equal(explainRequest(ruleSet, two.request).allowed, false);
      const raw = parseExplainOptions({ connect: 'raw', labels: 'app=web' });
      assert.ok(raw.ok);
      assert.equal(explainRequest(ruleSet, raw.request).allowed, true);
      const bad = parseExplainOptions({ connect: 'raw,' });
      assert.ok(!bad.ok);
      assert.match(bad.error, /--connect expects a protocol or names/);
    });

    it('--args and --tty reach the operation', () => {
      const r = parseExplainOptions({ exec: '/usr/bin/python3', args: '-c,import os', tty: true });
      assert.ok(r.ok);
      assert.deepEqual(r.request.operation.args, ['-c', 'import os']);
      assert.equal(r.request.operation.tty, true);
    });

    it('--host builds a host workload from --node-labels', () => {
      const r = parseExplainOptions({
        host: true,
        nodeLabels: 'kubernetes.io/hostname=n1,zone=a',
        capability: 'net_raw',
      });
      assert.ok(r.ok);
      assert.deepEqual(r.request.workload, {
        kind: 'host',
        namespace: '',
        labels: {},
        nodeLabels: { 'kubernetes.io/hostname': 'n1', zone: 'a' },
      });
    });
  });

  it('explains a Block with the deciding rule and a summary of it', () => {
    const ruleSet = {
      policies: [makePodPolicy('p', [{ matcher: dir('/etc/', true), action: Action.Block, line: 9 }])],
    };
    const parsed = parseExplainOptions({ namespace: 'default', labels: 'app=web', open: '/etc/passwd' });
    assert.ok(parsed.ok);
    const result = explainRequest(ruleSet, parsed.request);
    assert.equal(result.allowed, false);
    assert.equal(result.rule?.line, 9);
    assert.equal(result.rule?.summary, 'File Block directory /etc/ (recursive)');
    assert.match(
      formatExplainText(result),
      /rule: {6}p\.yaml:9:3 policy default\/p: File Block directory \/etc\/ \(recursive\)/,
    );
  });

  it('explains a posture decision by naming the Allow rule that made the pod least-permissive', () => {
    const ruleSet = {
      policies: [makePodPolicy('p', [{ matcher: pathM('/app/x'), action: Action.Allow, line: 4 }])],
    };
    const parsed = parseExplainOptions({ labels: 'app=web', open: '/etc/passwd', posture: 'file=block' });
    assert.ok(parsed.ok);
    const text = formatExplainText(explainRequest(ruleSet, parsed.request));
    assert.match(text, /decision: {2}denied/);
    assert.match(text, /PolicyName=DefaultPosture Action=Block/);
    assert.match(text, /least-permissive .* p\.yaml:4:3 .* block posture decided/);
  });

  it('reads posture annotations of Namespace objects (valid values only)', () => {
    const found = lintTexts([
      {
        file: 'ns.yaml',
        text: 'apiVersion: v1\nkind: Namespace\nmetadata:\n  name: shop\n  annotations:\n    runtime-file-posture: block\n    runtime-network-posture: Block\n---\nkind: ConfigMap\nmetadata: {name: x}\n',
      },
    ]).namespacePostures;
    assert.deepEqual(found.get('shop'), { postures: { file: 'block' }, file: 'ns.yaml' });
    assert.equal(found.size, 1);
  });

  describe('the CLI', () => {
    let work = '';
    before(() => {
      work = mkdtempSync(path.join(os.tmpdir(), 'rtctl-explain-'));
      writeFileSync(path.join(work, 'policies.yaml'), POLICIES);
      writeFileSync(
        path.join(work, 'namespaces.yaml'),
        'apiVersion: v1\nkind: Namespace\nmetadata:\n  name: shop\n  annotations:\n    runtime-file-posture: block\n',
      );
      writeFileSync(
        path.join(work, 'broken.yaml'),
        'apiVersion: security.runtime.com/v1\nkind: RuntimePolicy\nmetadata: {name: x}\nspec: {action: Nope}\n',
      );
    });
    after(() => rmSync(work, { recursive: true, force: true }));

    function run(...args: string[]): { status: number | null; stdout: string; stderr: string } {
      const r = spawnSync(
        process.execPath,
        ['--import', 'tsx', path.join(repoRoot, 'bin/rtctl.ts'), 'explain', ...args],
        {
          cwd: repoRoot,
          encoding: 'utf8',
        },
      );
      return { status: r.status, stdout: r.stdout, stderr: r.stderr };
    }

    it('--json: a blocked read of the service-account token, with the rule file:line', () => {
      const r = run(
        path.join(work, 'policies.yaml'),
        '--namespace',
        'shop',
        '--labels',
        'app=web',
        '--open',
        '/run/secrets/kubernetes.io/serviceaccount/token',
        '--json',
      );
      assert.equal(r.status, 0, r.stderr);
      const out = JSON.parse(r.stdout) as {
        allowed: boolean;
        alert: Record<string, string> | null;
        rule: { file: string; line: number; policy: string } | null;
      };
      assert.equal(out.allowed, false);
      assert.equal(out.alert?.['PolicyName'], 'block-sa');
      assert.equal(out.alert?.['Action'], 'Block');
      assert.equal(out.alert?.['Result'], 'Permission denied');
      assert.equal(out.alert?.['Severity'], '7');
      assert.equal(out.rule?.policy, 'block-sa');
      assert.equal(out.rule?.file, path.join(work, 'policies.yaml'));
      assert.equal(out.rule?.line, 12);
    });

    it('text: an exec outside the allow list under block posture is denied by DefaultPosture', () => {
      const r = run(
        work + '/policies.yaml',
        '--namespace',
        'shop',
        '--labels',
        'app=web',
        '--posture',
        'file=block',
        '--exec',
        '/bin/bash',
      );
      assert.equal(r.status, 0, r.stderr);
      assert.match(r.stdout, /decision: {2}denied/);
      assert.match(r.stdout, /PolicyName=DefaultPosture Action=Block Result=Permission denied/);
    });

    it('takes the file posture from the Namespace object among the files; --posture overrides it', () => {
      const files = [path.join(work, 'policies.yaml'), path.join(work, 'namespaces.yaml')];
      const fromNamespace = run(
        ...files,
        '--namespace',
        'shop',
        '--labels',
        'app=web',
        '--exec',
        '/bin/bash',
        '--json',
      );
      assert.equal(fromNamespace.status, 0, fromNamespace.stderr);
      assert.equal((JSON.parse(fromNamespace.stdout) as { allowed: boolean }).allowed, false);
      const overridden = run(
        ...files,
        '--namespace',
        'shop',
        '--labels',
        'app=web',
        '--exec',
        '/bin/bash',
        '--posture',
        'file=audit',
        '--json',
      );
      const out = JSON.parse(overridden.stdout) as { allowed: boolean; alert: Record<string, string> | null };
      assert.equal(out.allowed, true);
      assert.equal(out.alert?.['Action'], 'Audit');
    });

    it('--host: a host policy selected by a `*` node label audits', () => {
      const r = run(
        work + '/policies.yaml',
        '--host',
        '--node-labels',
        'kubernetes.io/hostname=node-1',
        '--open',
        '/etc/shadow',
        '--json',
      );
      assert.equal(r.status, 0, r.stderr);
      const out = JSON.parse(r.stdout) as { allowed: boolean; alert: Record<string, string> | null };
      assert.equal(out.allowed, true);
      assert.equal(out.alert?.['Action'], 'Audit');
      assert.equal(out.alert?.['Type'], 'MatchedHostPolicy');
    });

    it('exits 2 on a usage error and on unreadable paths, 1 when the policies have errors', () => {
      assert.equal(run(work + '/policies.yaml', '--exec', 'relative').status, 2);
      assert.equal(run(work + '/policies.yaml', '--no-such-option').status, 2);
      assert.equal(run(path.join(work, 'missing.yaml'), '--exec', '/bin/sh').status, 2);
      const broken = run(path.join(work, 'broken.yaml'), '--exec', '/bin/sh');
      assert.equal(broken.status, 1);
      assert.match(broken.stderr, /RT2\d{3}/);
    });
  });
});
