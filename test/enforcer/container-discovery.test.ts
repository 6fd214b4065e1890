// The enforcer's container discovery driven by an event stream: coalesced lists on a burst, the poll period
// while the stream is down and the resync period while it is up, a full list when it comes back, and nothing
// left running after release. Stand-ins, named as such: the event stream (an in-memory ContainerEvents the
// test drives; the real follower over `ctr events` is tested in test/enforcer/io/containerd-events.test.ts and
// test/enforcer/e2e/container-events.test.ts), the container lister (an in-memory list whose reads are
// counted and can be made slow), and the data plane (in memory; the real ones need root).
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import pino from 'pino';
import { EnforcementTarget } from '../../compiler/enforcement/enforcement-table.js';
import { createAlertHub } from '../../enforcer/alerts/alert-hub.js';
import type { DataPlaneEvent, EnforcementState } from '../../enforcer/data-plane.js';
import { createEnforcer, type Enforcer } from '../../enforcer/enforcer.js';
import type {
  ContainerEventHandlers,
  ContainerEvents,
  ContainerEventStats,
} from '../../enforcer/io/containerd-events.js';
import { buildSnapshot } from '../../enforcer/policy-snapshot.js';
import { describeContainer, type Workload } from '../../enforcer/workload.js';
import { memoryPlane } from './support/memory-plane.js';
import { waitUntil } from '../support/wait-until.js';

const POLICY = `apiVersion: security.runtime.com/v1
kind: RuntimePolicy
metadata: {name: web-guard, namespace: ns-a}
spec:
  selector: {matchLabels: {app: web}}
  process:
    matchPaths:
      - path: /bin/nc
  action: Block
`;

function container(id: string): Workload {
  return describeContainer({
    id,
    labels: {
      app: 'web',
      'io.kubernetes.pod.name': id,
      'io.kubernetes.pod.namespace': 'ns-a',
      'io.kubernetes.container.name': 'c',
    },
    image: 'web:1',
    pid: 1,
    cgroupPath: '',
  });
}

/** A stand-in event stream the test drives. */
interface StandInEvents extends ContainerEvents {
  handlers(): ContainerEventHandlers;
  stopped: boolean;
}
function standInEvents(): StandInEvents {
  let h: ContainerEventHandlers | undefined;
  const stats: ContainerEventStats = {
    up: false,
    starts: 1,
    events: 0,
    changes: 0,
    malformed: 0,
    overlong: 0,
    maxBufferedBytes: 0,
  };
  const events: StandInEvents = {
    stopped: false,
    start(handlers) {
      h = handlers;
    },
    stop() {
      events.stopped = true;
      return Promise.resolve();
    },
    stats: () => stats,
    handlers() {
      assert.ok(h, 'started');
      return h;
    },
  };
  return events;
}

/** One turn of the event loop: every promise job queued before it has run. */
const settle = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

describe('enforcer container discovery from an event stream (stand-in stream, lister and data plane)', function () {
  this.timeout(20000);
  let enforcer: Enforcer | undefined;
  afterEach(async () => {
    await enforcer?.stop({ keepEnforcing: false });
    enforcer = undefined;
  });

  function setUp(options: { pollMs: number; resyncMs: number }) {
    const running: Workload[] = [];
    const lister = { lists: 0, delayMs: 0 };
    const applied: EnforcementState[] = [];
    const events = standInEvents();
    enforcer = createEnforcer({
      source: {
        start: () => Promise.resolve(buildSnapshot([{ file: 'p.yaml', text: POLICY }])),
        stop: () => Promise.resolve(),
      },
      containers: {
        async list() {
          lister.lists++;
          const now = [...running];
          if (lister.delayMs > 0) await sleep(lister.delayMs);
          return now;
        },
      },
      containerEvents: events,
      resyncMs: options.resyncMs,
      pollMs: options.pollMs,
      plane: memoryPlane({
        apply(state: EnforcementState) {
          applied.push(state);
          return Promise.resolve();
        },
        enforced: () => Promise.resolve({ generation: 0, workloads: [] }),
        events: () => ({
          [Symbol.asyncIterator]: () => ({
            next: () => Promise.resolve<IteratorResult<DataPlaneEvent>>({ done: true, value: undefined }),
          }),
        }),
      }),
      enforcementTarget: EnforcementTarget.Fanotify,
      hub: createAlertHub(),
      clusterName: 'c',
      nodeName: 'n',
      nodeLabels: {},
      logger: pino({ level: 'silent' }),
    });
    const enforced = (id: string): boolean =>
      applied.at(-1)?.workloads.some((w) => w.anchor.key === id) === true;
    return { running, lister, applied, events, enforced, enforcer };
  }

  it('a burst of 1 000 events during a slow list costs at most two more lists, and the last container is enforced', async () => {
    const t = setUp({ pollMs: 3_600_000, resyncMs: 3_600_000 });
    await t.enforcer.start();
    t.events.handlers().up();
    await waitUntil('the list after up', () => t.lister.lists === 2);
    await settle();
    const before = t.lister.lists;
    t.lister.delayMs = 50;
    for (let i = 0; i < 1000; i++) {
      if (i === 999) t.running.push(container('late'));
      t.events.handlers().change();
    }
    await waitUntil('the last container enforced', () => t.enforced('late'));
    assert.ok(t.lister.lists - before <= 2, `${t.lister.lists - before} lists for the burst`);
  });

  it('a lone event is acted on at once, without a quiet period', async () => {
    const t = setUp({ pollMs: 3_600_000, resyncMs: 3_600_000 });
    await t.enforcer.start();
    t.events.handlers().up();
    await waitUntil('the list after up', () => t.lister.lists === 2);
    await settle();
    t.running.push(container('alone'));
    t.events.handlers().change();
    assert.equal(t.lister.lists, 3, 'the list started in the same tick as the event');
    await waitUntil('enforced', () => t.enforced('alone'));
  });

  it('polls at --poll-ms while the stream is down, lists when it is back, then only at the resync period', async () => {
    const t = setUp({ pollMs: 50, resyncMs: 3_600_000 });
    await t.enforcer.start();
    // Never up yet: the poll period.
    await waitUntil('three polls while down', () => t.lister.lists >= 4);
    const atUp = t.lister.lists;
    t.events.handlers().up();
    await waitUntil('the list on up', () => t.lister.lists === atUp + 1);
    // Up: no poll at 50 ms any more (the resync is an hour away); six poll periods pass without a list.
    await sleep(300);
    assert.equal(t.lister.lists, atUp + 1);
    // Down again: the poll period again, and a container started meanwhile is found by it.
    t.events.handlers().down('stand-in: the client exited');
    t.running.push(container('while-down'));
    await waitUntil('found by the poll while down', () => t.enforced('while-down'));
  });

  it('release stops the stream and the poll: no list after it', async () => {
    const t = setUp({ pollMs: 50, resyncMs: 3_600_000 });
    await t.enforcer.start();
    await waitUntil('a poll', () => t.lister.lists >= 2);
    await t.enforcer.release();
    assert.equal(t.events.stopped, true);
    const after = t.lister.lists;
    await sleep(200);
    assert.equal(t.lister.lists, after);
  });
});
