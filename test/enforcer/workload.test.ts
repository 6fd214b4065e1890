// Workload identity of containers: pod containers from the kubelet's labels, containers without Kubernetes
// from their own labels and the non-Kubernetes namespace.
import assert from 'node:assert/strict';
import {
  DEFAULT_NON_KUBERNETES_NAMESPACE,
  describeContainer,
  isNamespaceName,
  toDecisionWorkload,
} from '../../enforcer/workload.js';
import { isTargetSelecting } from '../../compiler/decide/select-policies.js';

const base = { id: 'c1', image: 'img:1@sha256:00', pid: 7, cgroupPath: '/default/c1' };

describe('workload identity', () => {
  it('reads a pod container from the kubelet labels (unchanged)', () => {
    const w = describeContainer({
      ...base,
      labels: {
        'io.kubernetes.pod.namespace': 'ns-a',
        'io.kubernetes.pod.name': 'web-1',
        'io.kubernetes.container.name': 'web',
        'io.containerd.image.config.stop-signal': 'SIGTERM',
        app: 'web',
        'security.runtime.com/namespace': 'elsewhere',
      },
      nonKubernetesNamespace: 'plain',
    });
    assert.equal(w.namespace, 'ns-a', 'the kubelet namespace wins over the label and the default');
    assert.equal(w.podName, 'web-1');
    assert.equal(w.containerName, 'web');
    assert.deepEqual(w.podLabels, { app: 'web', 'security.runtime.com/namespace': 'elsewhere' });
  });

  it('puts a container without Kubernetes labels in the default non-Kubernetes namespace', () => {
    const w = describeContainer({ ...base, labels: { app: 'plain', 'io.containerd.x': 'y' } });
    assert.equal(w.namespace, DEFAULT_NON_KUBERNETES_NAMESPACE);
    assert.equal(DEFAULT_NON_KUBERNETES_NAMESPACE, 'default');
    assert.equal(w.podName, '');
    assert.equal(w.containerName, 'c1', 'no name label: the id');
    assert.equal(w.kind, 'container');
    assert.deepEqual(w.podLabels, { app: 'plain' });
  });

  it('takes the configured namespace, the namespace label over it, and nerdctl’s name label', () => {
    assert.equal(
      describeContainer({ ...base, labels: {}, nonKubernetesNamespace: 'hosts' }).namespace,
      'hosts',
    );
    const w = describeContainer({
      ...base,
      labels: { 'security.runtime.com/namespace': 'team-a', 'nerdctl/name': 'frontend' },
      nonKubernetesNamespace: 'hosts',
    });
    assert.equal(w.namespace, 'team-a');
    assert.equal(w.containerName, 'frontend');
  });

  it('gives the empty namespace (selected by nothing) for a namespace label that is no namespace name', () => {
    for (const bad of ['Team', 'a_b', '-a', 'a'.repeat(64), '']) {
      assert.equal(isNamespaceName(bad), false, bad);
      const w = describeContainer({ ...base, labels: { 'security.runtime.com/namespace': bad } });
      assert.equal(w.namespace, '', bad);
      assert.equal(
        isTargetSelecting(
          { kind: 'pods', namespace: 'default', matchLabels: {}, matchExpressions: [] },
          toDecisionWorkload(w, {}),
        ),
        false,
        'not selected by a select-all policy of the default namespace',
      );
    }
    assert.equal(isNamespaceName('team-a'), true);
  });
});
