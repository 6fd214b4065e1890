// Node state: which workloads are enforced with which policy set and postures, and when a new state is due.
import assert from 'node:assert/strict';
import { lintTexts } from '../../compiler/lint.js';
import { buildNodeState } from '../../enforcer/node-state.js';
import { readDeclaredPostures, readNamespacePostures } from '../../compiler/model/posture.js';
import { getWorkloadPostures } from '../../compiler/decide/workload-postures.js';
import { describeContainer, describeHost, toDecisionWorkload } from '../../enforcer/workload.js';

const POLICIES = `apiVersion: security.runtime.com/v1
kind: RuntimePolicy
metadata:
  name: web-block
  namespace: ns-a
spec:
  selector:
    matchLabels:
      app: web
  process:
    matchPaths:
    - path: /bin/sleep
  action: Block
---
apiVersion: security.runtime.com/v1
kind: RuntimePolicy
metadata:
  name: ns-audit
  namespace: ns-a
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
metadata:
  name: host-block
spec:
  nodeSelector:
    matchLabels:
      kubernetes.io/hostname: node-1
  process:
    matchPaths:
    - path: /usr/bin/diff
  action: Block
`;

const container = (id: string, ns: string, app: string) =>
  describeContainer({
    id,
    labels: { 'io.kubernetes.pod.namespace': ns, 'io.kubernetes.pod.name': `${id}-pod`, app },
    image: 'i',
    pid: 10,
    cgroupPath: `/k8s.io/${id}`,
  });

describe('node state', () => {
  const lint = lintTexts([{ file: 'p.yaml', text: POLICIES }]);
  const workloads = [
    describeHost(),
    container('web', 'ns-a', 'web'),
    container('db', 'ns-a', 'db'),
    container('other', 'ns-b', 'web'),
  ];
  const postures = new Map([['ns-a', readNamespacePostures({ 'runtime-file-posture': 'block' })]]);

  it('gives each workload the policies selecting it, by table index, and leaves unselected ones out', () => {
    assert.equal(
      lint.diagnostics.filter((d) => d.severity === 'error').length,
      0,
      JSON.stringify(lint.diagnostics),
    );
    const node = buildNodeState(
      { ruleSet: lint.ruleSet, workloads, postures, nodeLabels: { 'kubernetes.io/hostname': 'node-1' } },
      5,
    );
    assert.equal(node.state.generation, 5);
    const byKey = new Map(
      node.state.workloads.map((w) => [w.anchor.key, w.policies.map((i) => node.policies[i]?.name)]),
    );
    assert.deepEqual(Object.fromEntries(byKey), {
      db: ['ns-audit'],
      host: ['host-block'],
      web: ['ns-audit', 'web-block'],
    });
    assert.equal(node.state.workloads.find((w) => w.anchor.key === 'host')?.anchor.host, true);
    assert.equal(node.state.workloads.find((w) => w.anchor.key === 'web')?.postures.file, 'block');
  });

  it('does not select the host on another node', () => {
    const node = buildNodeState(
      { ruleSet: lint.ruleSet, workloads, postures, nodeLabels: { 'kubernetes.io/hostname': 'node-2' } },
      1,
    );
    assert.ok(!node.state.workloads.some((w) => w.anchor.key === 'host'));
  });

  it('has a fingerprint that changes exactly when the state does', () => {
    const input = { ruleSet: lint.ruleSet, workloads, postures, nodeLabels: {} };
    const a = buildNodeState(input, 1);
    assert.equal(buildNodeState(input, 2).fingerprint, a.fingerprint, 'generation alone is no change');
    assert.notEqual(buildNodeState({ ...input, postures: new Map() }, 2).fingerprint, a.fingerprint);
    assert.notEqual(
      buildNodeState({ ...input, workloads: workloads.slice(0, 2) }, 2).fingerprint,
      a.fingerprint,
    );
    assert.deepEqual(
      Buffer.from(buildNodeState(input, 3).state.table.bytes),
      Buffer.from(a.state.table.bytes),
      'deterministic table bytes',
    );
  });

  it('reads postures from namespace annotations (exactly audit or block; invalid values keep the default)', () => {
    assert.deepEqual(readNamespacePostures(undefined), {
      file: 'audit',
      network: 'audit',
      capabilities: 'audit',
    });
    assert.deepEqual(
      readNamespacePostures({
        'runtime-file-posture': 'block',
        'runtime-network-posture': 'BLOCK',
        'runtime-capabilities-posture': 'nonsense',
      }),
      { file: 'block', network: 'audit', capabilities: 'audit' },
    );
  });

  it('gives the host its configured postures and containers the defaults under their annotations (the oracle)', () => {
    const declared = new Map([['ns-a', readDeclaredPostures({ 'runtime-file-posture': 'audit' })]]);
    const settings = {
      host: { file: 'block', network: 'block' },
      defaults: { file: 'block', capabilities: 'block' },
    } as const;
    const node = buildNodeState(
      {
        ruleSet: lint.ruleSet,
        workloads,
        postures: declared,
        postureSettings: settings,
        nodeLabels: { 'kubernetes.io/hostname': 'node-1' },
      },
      1,
    );
    const got = new Map(node.state.workloads.map((w) => [w.anchor.key, w.postures]));
    assert.deepEqual(got.get('host'), { file: 'block', network: 'block', capabilities: 'audit' });
    assert.deepEqual(got.get('web'), { file: 'audit', network: 'audit', capabilities: 'block' });
    for (const w of workloads) {
      const enforced = got.get(w.key);
      if (enforced === undefined) continue;
      assert.deepEqual(
        enforced,
        getWorkloadPostures(toDecisionWorkload(w, {}), declared, settings),
        `${w.key}: the node state's postures are the oracle's`,
      );
    }
    const without = buildNodeState(
      { ruleSet: lint.ruleSet, workloads, postures: declared, nodeLabels: {} },
      1,
    );
    assert.notEqual(without.fingerprint, node.fingerprint, 'a posture change is a state change');
  });
});
