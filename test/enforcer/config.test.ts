// `rtctl enforcer run` configuration from flags: one policy source, node labels, listen address, poll period.
import assert from 'node:assert/strict';
import { ConfigError, parseListen, readEnforcerConfig, type EnforcerFlags } from '../../enforcer/config.js';

const base: EnforcerFlags = {
  dataPlane: 'auto',
  clusterName: 'c',
  nodeLabel: [],
  containerdSocket: '/run/containerd/containerd.sock',
  containerdNamespace: 'k8s.io',
  listen: '127.0.0.1:4280',
  stateDir: '/run/rtctl',
  pollMs: '1000',
};

describe('enforcer configuration', () => {
  it('takes a directory source and sets kubernetes.io/hostname from the node name', () => {
    const c = readEnforcerConfig({ ...base, policyDir: '/p', nodeName: 'n1', nodeLabel: ['zone=a'] });
    assert.deepEqual(c.source, { kind: 'directory', dir: '/p' });
    assert.deepEqual(c.nodeLabels, { 'kubernetes.io/hostname': 'n1', zone: 'a' });
    assert.deepEqual(c.listen, { kind: 'tcp', host: '127.0.0.1', port: 4280 });
    assert.equal(c.releaseOnExit, false);
  });

  it('follows containerd events by default (resync 30 s), and polls when asked', () => {
    const c = readEnforcerConfig({ ...base, policyDir: '/p' });
    assert.deepEqual([c.containerDiscovery, c.resyncMs, c.pollMs], ['events', 30000, 1000]);
    const p = readEnforcerConfig({ ...base, policyDir: '/p', containerDiscovery: 'poll', resyncMs: '5000' });
    assert.deepEqual([p.containerDiscovery, p.resyncMs], ['poll', 5000]);
  });

  it('takes the Kubernetes source with an optional kubeconfig', () => {
    assert.deepEqual(readEnforcerConfig({ ...base, kubernetes: true, kubeconfig: '/k' }).source, {
      kind: 'kubernetes',
      kubeconfig: '/k',
    });
  });

  const bad: { name: string; flags: Partial<EnforcerFlags>; message: RegExp }[] = [
    { name: 'no source', flags: {}, message: /exactly one policy source/ },
    {
      name: 'two sources',
      flags: { policyDir: '/p', kubernetes: true },
      message: /exactly one policy source/,
    },
    { name: 'a label without =', flags: { policyDir: '/p', nodeLabel: ['zone'] }, message: /--node-label/ },
    { name: 'a tiny poll period', flags: { policyDir: '/p', pollMs: '5' }, message: /--poll-ms/ },
    {
      name: 'an unknown container discovery',
      flags: { policyDir: '/p', containerDiscovery: 'inotify' },
      message: /--container-discovery: one of events, poll, got "inotify"/,
    },
    { name: 'a tiny resync period', flags: { policyDir: '/p', resyncMs: '10' }, message: /--resync-ms/ },
    { name: 'a bad port', flags: { policyDir: '/p', listen: '127.0.0.1:99999' }, message: /--listen/ },
    {
      name: 'an unknown host posture',
      flags: { policyDir: '/p', hostPosture: 'protect' },
      message: /--host-posture: expected audit, block/,
    },
    {
      name: 'an unknown posture class',
      flags: { policyDir: '/p', defaultPosture: 'process=block' },
      message: /--default-posture: .*"process=block"/,
    },
    {
      name: 'a bad posture value of a class',
      flags: { policyDir: '/p', defaultPosture: 'file=Block' },
      message: /--default-posture: file must be audit or block, got "Block"/,
    },
  ];
  for (const c of bad) {
    it(`refuses ${c.name} with a ConfigError`, () => {
      assert.throws(
        () => readEnforcerConfig({ ...base, ...c.flags }),
        (e: unknown) => e instanceof ConfigError && c.message.test(e.message),
      );
    });
  }

  it('serves alerts on a unix socket in the state directory unless TCP is asked for', () => {
    const noListen: EnforcerFlags = { ...base, policyDir: '/p' };
    delete noListen.listen;
    assert.deepEqual(readEnforcerConfig(noListen).listen, {
      kind: 'unix',
      path: '/run/rtctl/alerts.sock',
    });
    assert.deepEqual(readEnforcerConfig({ ...base, policyDir: '/p', listen: 'unix:/s/a.sock' }).listen, {
      kind: 'unix',
      path: '/s/a.sock',
    });
  });

  it('reads the group, alert log rotation and connection cap', () => {
    const c = readEnforcerConfig(
      {
        ...base,
        policyDir: '/p',
        group: 'rtctl',
        alertLogMaxBytes: '8M',
        alertLogFiles: '3',
        maxConnections: '9',
      },
      (g) => (g === 'rtctl' ? 990 : undefined),
    );
    assert.equal(c.gid, 990);
    assert.equal(c.alertLogMaxBytes, 8 * 1024 * 1024);
    assert.equal(c.alertLogFiles, 3);
    assert.equal(c.maxConnections, 9);
    const bad: [Partial<EnforcerFlags>, RegExp][] = [
      [{ group: 'nope' }, /--group: no group "nope"/],
      [{ alertLogMaxBytes: '0' }, /--alert-log-max-bytes/],
      [{ alertLogFiles: '0' }, /--alert-log-files/],
      [{ maxConnections: 'many' }, /--max-connections/],
      [{ listen: 'unix:relative' }, /--listen: .*absolute path/],
    ];
    for (const [flags, message] of bad) {
      assert.throws(
        () => readEnforcerConfig({ ...base, policyDir: '/p', ...flags }, () => undefined),
        (e: unknown) => e instanceof ConfigError && message.test(e.message),
      );
    }
  });

  it('parses listen addresses', () => {
    assert.deepEqual(parseListen('0.0.0.0:80'), { host: '0.0.0.0', port: 80 });
    assert.deepEqual(parseListen('[::1]:4280'), { host: '::1', port: 4280 });
    assert.deepEqual(parseListen('4280'), { host: '127.0.0.1', port: 4280 });
  });

  it('reads host postures (protect or audit mode) and namespace default postures', () => {
    assert.deepEqual(readEnforcerConfig({ ...base, policyDir: '/p' }).postures, {});
    assert.deepEqual(
      readEnforcerConfig({
        ...base,
        policyDir: '/p',
        hostPosture: 'block',
        defaultPosture: 'file=block, network=audit',
      }).postures,
      {
        host: { file: 'block', network: 'block', capabilities: 'block' },
        defaults: { file: 'block', network: 'audit' },
      },
    );
  });
});
