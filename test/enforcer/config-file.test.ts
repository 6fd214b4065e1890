// The enforcer's configuration file: schema validation with positions (like lint's), the mapping onto the
// flags, flags over the file, and the real CLI refusing a bad file with exit code 2.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  ConfigFileError,
  mergeConfigFlags,
  parseEnforcerConfigText,
  readEnforcerConfigFile,
  resolveEnforcerFlags,
} from '../../enforcer/config-file.js';
import { readEnforcerConfig, type EnforcerFlags } from '../../enforcer/config.js';
import { REPO_ROOT, rtctlArgs } from './support/enforcer-process.js';

const HEAD = 'apiVersion: security.runtime.com/v1\nkind: EnforcerConfiguration\n';
const groups = (g: string): number | undefined =>
  g === 'rtctl' ? 990 : /^\d+$/.test(g) ? Number(g) : undefined;

const FULL = `${HEAD}policyDir: /etc/rtctl/policies
nodeName: edge-1
nodeLabels:
  zone: a
  role: edge
clusterName: lab
dataPlane: fanotify
stateDir: /run/rtctl
pollMs: 500
releaseOnExit: true
postures:
  host: block
  defaults:
    file: block
    network: audit
containers:
  socket: /run/containerd/containerd.sock
  namespaces: [k8s.io, default, moby]
  nonKubernetesNamespace: hosts
  discovery: poll
  resyncMs: 60000
alertLog:
  path: /var/log/rtctl/alerts.jsonl
  maxBytes: 16M
  files: 3
listen:
  socket: /run/rtctl/alerts.sock
  group: rtctl
  maxConnections: 64
`;

/** commander's defaults of `rtctl enforcer run`. */
const DEFAULTS: EnforcerFlags = {
  dataPlane: 'auto',
  clusterName: 'default',
  nodeLabel: [],
  containerdSocket: '/run/containerd/containerd.sock',
  containerdNamespace: 'k8s.io',
  stateDir: '/run/rtctl',
  pollMs: '1000',
  maxConnections: '256',
  alertLogMaxBytes: '64M',
  alertLogFiles: '5',
};

function errorsOf(text: string): { code: string; line: number; column: number; message: string }[] {
  try {
    parseEnforcerConfigText('enforcer.yaml', text, groups);
  } catch (err) {
    assert.ok(err instanceof ConfigFileError, String(err));
    return err.diagnostics.map((d) => ({
      code: d.code,
      line: d.start?.line ?? 0,
      column: d.start?.column ?? 0,
      message: d.message,
    }));
  }
  assert.fail('no error');
}

describe('enforcer configuration file', () => {
  it('maps every section onto the flags and on to the configuration', () => {
    const file = parseEnforcerConfigText('enforcer.yaml', FULL, groups);
    const config = readEnforcerConfig(mergeConfigFlags(DEFAULTS, file, {}), groups);
    assert.deepEqual(config.source, { kind: 'directory', dir: '/etc/rtctl/policies' });
    assert.equal(config.nodeName, 'edge-1');
    assert.deepEqual(config.nodeLabels, { 'kubernetes.io/hostname': 'edge-1', zone: 'a', role: 'edge' });
    assert.equal(config.clusterName, 'lab');
    assert.equal(config.dataPlane, 'fanotify');
    assert.equal(config.pollMs, 500);
    assert.equal(config.releaseOnExit, true);
    assert.deepEqual(config.postures, {
      host: { file: 'block', network: 'block', capabilities: 'block' },
      defaults: { file: 'block', network: 'audit' },
    });
    assert.deepEqual(config.containerdNamespaces, ['k8s.io', 'default', 'moby']);
    assert.equal(config.nonKubernetesNamespace, 'hosts');
    assert.equal(config.containerDiscovery, 'poll');
    assert.equal(config.resyncMs, 60000);
    assert.equal(config.alertLog, '/var/log/rtctl/alerts.jsonl');
    assert.equal(config.alertLogMaxBytes, 16 * 1024 * 1024);
    assert.equal(config.alertLogFiles, 3);
    assert.deepEqual(config.listen, { kind: 'unix', path: '/run/rtctl/alerts.sock' });
    assert.equal(config.gid, 990);
    assert.equal(config.maxConnections, 64);
  });

  it('takes TCP only when asked (listen.tcp), and numbers for sizes and group ids', () => {
    const file = parseEnforcerConfigText(
      'e.yaml',
      `${HEAD}policyDir: /p\nlisten:\n  tcp: 0.0.0.0:4280\n  group: 0\nalertLog:\n  path: /l\n  maxBytes: 1048576\n`,
      groups,
    );
    const config = readEnforcerConfig(mergeConfigFlags(DEFAULTS, file, {}), groups);
    assert.deepEqual(config.listen, { kind: 'tcp', host: '0.0.0.0', port: 4280 });
    assert.equal(config.alertLogMaxBytes, 1048576);
    assert.equal(config.gid, 0);
  });

  it('lets flags given on the command line override the file, node labels per key', () => {
    const file = parseEnforcerConfigText('enforcer.yaml', FULL, groups);
    const merged = mergeConfigFlags(DEFAULTS, file, {
      pollMs: '200',
      hostPosture: 'audit',
      ruleTable: '/t.bin',
      nodeLabel: ['zone=b'],
    });
    const config = readEnforcerConfig(merged, groups);
    assert.equal(config.pollMs, 200);
    assert.deepEqual(config.postures.host, { file: 'audit', network: 'audit', capabilities: 'audit' });
    assert.deepEqual(config.postures.defaults, { file: 'block', network: 'audit' }, 'the file still counts');
    assert.deepEqual(config.source, { kind: 'rule-table', file: '/t.bin' }, "the command line's source wins");
    assert.equal(config.nodeLabels['zone'], 'b');
    assert.equal(config.nodeLabels['role'], 'edge');
    assert.equal(config.clusterName, 'lab', 'a commander default does not override the file');
  });

  const bad: {
    name: string;
    text: string;
    expect: { code: string; line: number; column: number; message: RegExp }[];
  }[] = [
    {
      name: 'YAML syntax',
      text: `${HEAD}policyDir: [\n`,
      expect: [{ code: 'RT1001', line: 4, column: 1, message: /./ }],
    },
    {
      name: 'a missing apiVersion and kind',
      text: 'policyDir: /p\n',
      expect: [
        { code: 'RT2002', line: 1, column: 1, message: /missing field "apiVersion"/ },
        { code: 'RT2002', line: 1, column: 1, message: /missing field "kind"/ },
      ],
    },
    {
      name: 'another kind',
      text: 'apiVersion: security.runtime.com/v1\nkind: RuntimePolicy\n',
      expect: [{ code: 'RT2004', line: 2, column: 1, message: /^kind: must be "EnforcerConfiguration"/ }],
    },
    {
      name: 'an unknown top-level field (a typo)',
      text: `${HEAD}policyDirectory: /p\n`,
      expect: [{ code: 'RT2003', line: 3, column: 1, message: /unknown field "policyDirectory" \(known: / }],
    },
    {
      name: 'a posture that is neither audit nor block',
      text: `${HEAD}postures:\n  host: protect\n`,
      expect: [
        {
          code: 'RT2001',
          line: 4,
          column: 3,
          message: /^postures\.host: expected audit, block, or a mapping/,
        },
      ],
    },
    {
      name: 'an unknown posture class and a bad class value',
      text: `${HEAD}postures:\n  defaults:\n    process: block\n    network: Block\n`,
      expect: [
        { code: 'RT2003', line: 5, column: 5, message: /postures\.defaults\.process: unknown field/ },
        {
          code: 'RT2004',
          line: 6,
          column: 5,
          message: /postures\.defaults\.network: must be one of "audit", "block"/,
        },
      ],
    },
    {
      name: 'a relative policy directory',
      text: `${HEAD}policyDir: policies\n`,
      expect: [{ code: 'RT2005', line: 3, column: 1, message: /expected an absolute path/ }],
    },
    {
      name: 'a poll period out of range',
      text: `${HEAD}pollMs: 5\n`,
      expect: [{ code: 'RT2006', line: 3, column: 1, message: /out of range \(minimum 50\)/ }],
    },
    {
      name: 'two policy sources',
      text: `${HEAD}policyDir: /p\nkubernetes: true\n`,
      expect: [{ code: 'RT2004', line: 4, column: 1, message: /one policy source/ }],
    },
    {
      name: 'a bad TCP address and both listen forms',
      text: `${HEAD}listen:\n  socket: /run/a.sock\n  tcp: "1.2.3.4:99999"\n`,
      expect: [
        { code: 'RT2004', line: 5, column: 3, message: /not both/ },
        { code: 'RT2005', line: 5, column: 3, message: /99999/ },
      ],
    },
    {
      name: 'a TCP port out of range',
      text: `${HEAD}listen:\n  tcp: "1.2.3.4:99999"\n`,
      expect: [{ code: 'RT2005', line: 4, column: 3, message: /listen\.tcp: .*99999/ }],
    },
    {
      name: 'an unknown group',
      text: `${HEAD}listen:\n  group: nosuchgroup\n`,
      expect: [{ code: 'RT2004', line: 4, column: 3, message: /no group "nosuchgroup"/ }],
    },
    {
      name: 'a bad size',
      text: `${HEAD}alertLog:\n  path: /l\n  maxBytes: 64Q\n`,
      expect: [{ code: 'RT2001', line: 5, column: 3, message: /alertLog\.maxBytes: expected a size/ }],
    },
    {
      name: 'an invalid non-Kubernetes namespace and an empty containerd namespace list',
      text: `${HEAD}containers:\n  namespaces: []\n  nonKubernetesNamespace: Hosts\n`,
      expect: [
        { code: 'RT2001', line: 4, column: 3, message: /containers\.namespaces/ },
        { code: 'RT2005', line: 5, column: 3, message: /containers\.nonKubernetesNamespace/ },
      ],
    },
    {
      name: 'an unknown container discovery and a resync period out of range',
      text: `${HEAD}containers:\n  discovery: inotify\n  resyncMs: 10\n`,
      expect: [
        {
          code: 'RT2004',
          line: 4,
          column: 3,
          message: /containers\.discovery: must be one of "events", "poll"/,
        },
        {
          code: 'RT2006',
          line: 5,
          column: 3,
          message: /containers\.resyncMs: .*out of range \(minimum 1000\)/,
        },
      ],
    },
    {
      name: 'two documents',
      text: `${HEAD}---\n${HEAD}`,
      expect: [{ code: 'RT1009', line: 4, column: 1, message: /2 YAML documents/ }],
    },
    {
      name: 'a list instead of a mapping',
      text: '- a\n',
      expect: [{ code: 'RT1009', line: 1, column: 1, message: /must be a mapping/ }],
    },
    {
      name: 'an empty file',
      text: '',
      expect: [{ code: 'RT1009', line: 1, column: 1, message: /holds no configuration/ }],
    },
  ];
  for (const c of bad) {
    it(`refuses ${c.name} with a code, the line and the column`, () => {
      const got = errorsOf(c.text);
      assert.equal(got.length, c.expect.length, JSON.stringify(got));
      c.expect.forEach((e, i) => {
        const g = got[i];
        assert.ok(g);
        assert.equal(g.code, e.code, JSON.stringify(g));
        assert.equal(`${g.line}:${g.column}`, `${e.line}:${e.column}`, JSON.stringify(g));
        assert.match(g.message, e.message);
      });
    });
  }

  describe('files', () => {
    let dir = '';
    before(() => {
      dir = mkdtempSync(join(tmpdir(), 'rtctl-config-'));
    });
    after(() => rmSync(dir, { recursive: true, force: true }));

    it('passes over a missing default file, refuses a missing --config file, non-UTF-8 and huge files', () => {
      assert.equal(readEnforcerConfigFile(join(dir, 'none.yaml'), { required: false }), undefined);
      assert.throws(
        () => readEnforcerConfigFile(join(dir, 'none.yaml'), { required: true }),
        (e: unknown) =>
          e instanceof ConfigFileError && /RT1012 cannot read the configuration file: ENOENT/.test(e.message),
      );
      writeFileSync(join(dir, 'latin1.yaml'), Buffer.from([0x6b, 0x3a, 0x20, 0xe9, 0x0a]));
      assert.throws(
        () => readEnforcerConfigFile(join(dir, 'latin1.yaml'), { required: true }),
        (e: unknown) => e instanceof ConfigFileError && /RT1008/.test(e.message),
      );
      writeFileSync(join(dir, 'huge.yaml'), Buffer.alloc(2 * 1024 * 1024, 0x20));
      assert.throws(
        () => readEnforcerConfigFile(join(dir, 'huge.yaml'), { required: true }),
        (e: unknown) => e instanceof ConfigFileError && /RT1006/.test(e.message),
      );
    });

    it('resolves the file under explicit flags (commander sources) and reads none with --no-config', () => {
      const path = join(dir, 'enforcer.yaml');
      writeFileSync(path, `${HEAD}policyDir: /from-file\npollMs: 300\nclusterName: filecluster\n`);
      const flags = { ...DEFAULTS, config: path, pollMs: '700', clusterName: 'default' };
      const resolved = resolveEnforcerFlags(flags, (k) => k === 'config' || k === 'pollMs');
      assert.equal(resolved.policyDir, '/from-file');
      assert.equal(resolved.pollMs, '700');
      assert.equal(resolved.clusterName, 'filecluster');
      const none = resolveEnforcerFlags(
        { ...DEFAULTS, config: false, policyDir: '/x' },
        (k) => k === 'policyDir',
      );
      assert.equal(none.policyDir, '/x');
      assert.equal(none.clusterName, 'default');
    });

    it('`rtctl enforcer run --config` with a bad file exits 2 with file:line:col and a code frame, starting nothing', () => {
      const path = join(dir, 'bad.yaml');
      writeFileSync(path, `${HEAD}policyDir: /p\npostures:\n  host: protect\n`);
      const r = spawnSync(process.execPath, rtctlArgs(['enforcer', 'run', '--config', path]), {
        cwd: REPO_ROOT,
        encoding: 'utf8',
        timeout: 60000,
      });
      assert.equal(r.status, 2, r.stderr);
      assert.ok(r.stderr.includes(`${path}:5:3: error RT2001 postures.host:`), r.stderr);
      assert.match(r.stderr, /> 5 \| {3}host: protect/);
      const missing = spawnSync(
        process.execPath,
        rtctlArgs(['enforcer', 'run', '--config', join(dir, 'missing.yaml')]),
        { cwd: REPO_ROOT, encoding: 'utf8', timeout: 60000 },
      );
      assert.equal(missing.status, 2);
      assert.match(missing.stderr, /missing\.yaml: error RT1012 cannot read the configuration file: ENOENT/);
    });
  });
});
