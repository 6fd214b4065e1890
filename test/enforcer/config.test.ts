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
    { name: 'a bad port', flags: { policyDir: '/p', listen: '127.0.0.1:99999' }, message: /--listen/ },
  ];
  for (const c of bad) {
    it(`refuses ${c.name} with a ConfigError`, () => {
      assert.throws(
        () => readEnforcerConfig({ ...base, ...c.flags }),
        (e: unknown) => e instanceof ConfigError && c.message.test(e.message),
      );
    });
  }

  it('parses listen addresses', () => {
    assert.deepEqual(parseListen('0.0.0.0:80'), { host: '0.0.0.0', port: 80 });
    assert.deepEqual(parseListen('[::1]:4280'), { host: '::1', port: 4280 });
    assert.deepEqual(parseListen('4280'), { host: '127.0.0.1', port: 4280 });
  });
});
