// The Kubernetes policy source over an in-memory feed (a fake API server: none can run here). The informer
// feeds themselves (io/kubernetes-informer-feeds.ts) are not exercised by this test.
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { pino } from 'pino';
import { FeedEvent, type KubeFeed, type KubeObject } from '../../../enforcer/kubernetes/kube-feed.js';
import { createKubernetesPolicySource } from '../../../enforcer/kubernetes/kubernetes-policy-source.js';
import type { PolicySnapshot } from '../../../enforcer/policy-source.js';

/** An in-memory feed: `initial` objects on start, then whatever the test emits. */
function createMemoryFeed(
  initial: KubeObject[] = [],
): KubeFeed & { emit(e: FeedEvent, o: KubeObject): void } {
  let handler: ((e: FeedEvent, o: KubeObject) => void) | undefined;
  return {
    start(h) {
      handler = h;
      for (const o of initial) h(FeedEvent.Add, o);
      return Promise.resolve();
    },
    stop: () => Promise.resolve(),
    emit: (e, o) => handler?.(e, o),
  };
}

const rp = (name: string, path: string): KubeObject => ({
  apiVersion: 'security.runtime.com/v1',
  kind: 'RuntimePolicy',
  metadata: { name, namespace: 'ns-a' },
  spec: { selector: { matchLabels: { app: 'web' } }, process: { matchPaths: [{ path }] }, action: 'Block' },
  status: { phase: 'ignored' },
});

describe('Kubernetes policy source over an in-memory feed (fake API server)', () => {
  it('builds snapshots from policies, namespace postures, node labels and pod labels, and follows changes', async () => {
    const feeds = {
      runtimePolicies: createMemoryFeed([rp('a', '/bin/sleep')]),
      runtimeHostPolicies: createMemoryFeed([
        {
          apiVersion: 'security.runtime.com/v1',
          kind: 'RuntimeHostPolicy',
          metadata: { name: 'h' },
          spec: {
            nodeSelector: { matchLabels: { zone: 'a' } },
            process: { matchPaths: [{ path: '/usr/bin/diff' }] },
            action: 'Block',
          },
        },
      ]),
      namespaces: createMemoryFeed([
        {
          apiVersion: 'v1',
          kind: 'Namespace',
          metadata: { name: 'ns-a', annotations: { 'runtime-file-posture': 'block' } },
        },
      ]),
      pods: createMemoryFeed([
        { metadata: { name: 'web-1', namespace: 'ns-a', labels: { app: 'web', tier: 'front' } } },
      ]),
      nodes: createMemoryFeed([{ metadata: { name: 'node-1', labels: { zone: 'a' } } }]),
    };
    const snapshots: PolicySnapshot[] = [];
    const source = createKubernetesPolicySource({
      feeds,
      nodeName: 'node-1',
      logger: pino({ level: 'silent' }),
      debounceMs: 10,
    });
    const first = await source.start((s) => snapshots.push(s));
    assert.deepEqual(first.ruleSet.policies.map((p) => `${p.kind}/${p.name}`).sort(), [
      'RuntimeHostPolicy/h',
      'RuntimePolicy/a',
    ]);
    assert.equal(first.postures.get('ns-a')?.file, 'block');
    assert.deepEqual(first.nodeLabels, { zone: 'a' });
    assert.deepEqual(first.podLabels?.get('ns-a/web-1'), { app: 'web', tier: 'front' });

    feeds.runtimePolicies.emit(FeedEvent.Update, rp('a', '/bin/cat'));
    feeds.runtimePolicies.emit(FeedEvent.Add, rp('b', '/bin/ls'));
    await sleep(60);
    assert.equal(snapshots.length, 1, 'a burst gives one snapshot');
    const s1 = snapshots[0];
    assert.deepEqual(
      s1?.ruleSet.policies.filter((p) => p.kind === 'RuntimePolicy').map((p) => p.rules[0]?.matcher),
      [
        { kind: 'path', path: '/bin/cat' },
        { kind: 'path', path: '/bin/ls' },
      ],
    );
    feeds.runtimePolicies.emit(FeedEvent.Delete, rp('a', '/bin/cat'));
    feeds.runtimePolicies.emit(FeedEvent.Add, rp('bad', 'not/absolute'));
    await sleep(60);
    const s2 = snapshots[1];
    assert.deepEqual(
      s2?.ruleSet.policies.filter((p) => p.kind === 'RuntimePolicy').map((p) => p.name),
      ['b'],
    );
    assert.ok(
      s2?.diagnostics.some((d) => d.file === 'kubernetes:RuntimePolicy/ns-a/bad'),
      'the invalid policy is reported by name',
    );
    await source.stop();
  });
});
