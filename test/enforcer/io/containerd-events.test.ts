// containerd's event stream: the `ctr events` line parser on lines taken from a real run, and the follower's
// restart, bounds and coalescing against a stand-in `ctr` (a shell script printing what the test asks for; a
// real child process, so exits, signals and pipes are real). The real client against a real containerd is
// tested in test/enforcer/e2e/container-events.test.ts.
import assert from 'node:assert/strict';
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import { pino, type Logger } from 'pino';
import {
  createContainerEvents,
  createRefreshTrigger,
  isContainerChange,
  parseEventLine,
  type ContainerEvents,
  type ContainerdEvent,
} from '../../../enforcer/io/containerd-events.js';
import { waitUntil } from '../../support/wait-until.js';

const T = '2026-11-25 22:40:02.121078063 +0000 UTC';

describe('containerd event lines', () => {
  const cases: { name: string; line: string; event?: ContainerdEvent; reason?: RegExp }[] = [
    {
      name: 'a task start',
      line: `${T} k8s.io /tasks/start {"container_id":"probe1","pid":32509}`,
      event: { namespace: 'k8s.io', topic: '/tasks/start', containerId: 'probe1' },
    },
    {
      name: "an init process's exit",
      line: `${T} k8s.io /tasks/exit {"container_id":"probe1","id":"probe1","pid":3015,"exit_status":137,"exited_at":"2026-11-25T22:40:41.613381595Z"}`,
      event: { namespace: 'k8s.io', topic: '/tasks/exit', containerId: 'probe1', processId: 'probe1' },
    },
    {
      name: "an exec's exit",
      line: `${T} k8s.io /tasks/exit {"container_id":"probe1","id":"emwwpj1p0jtqq","pid":3113,"exited_at":"2026-11-25T22:40:41.593688023Z"}`,
      event: {
        namespace: 'k8s.io',
        topic: '/tasks/exit',
        containerId: 'probe1',
        processId: 'emwwpj1p0jtqq',
      },
    },
    {
      name: 'a container delete (id, not container_id)',
      line: `${T} default /containers/delete {"id":"probe2"}`,
      event: { namespace: 'default', topic: '/containers/delete', containerId: 'probe2' },
    },
    {
      name: 'an image create',
      line: `${T} default /images/create {"name":"rtctl.test/busybox:1"}`,
      event: { namespace: 'default', topic: '/images/create' },
    },
    {
      name: 'a time zone other than UTC and no fraction',
      line: '2026-11-25 23:40:02 +0100 CET k8s.io /tasks/delete {"container_id":"x"}',
      event: { namespace: 'k8s.io', topic: '/tasks/delete', containerId: 'x' },
    },
    {
      name: 'a topic without a payload',
      line: `${T} k8s.io /tasks/start`,
      event: { namespace: 'k8s.io', topic: '/tasks/start' },
    },
    { name: 'a line of text', line: 'ctr: rpc error: code = Unavailable', reason: /no timestamp/ },
    { name: 'no topic', line: `${T} k8s.io`, reason: /no namespace and topic/ },
    { name: 'a topic without a slash', line: `${T} k8s.io tasks/start {}`, reason: /no topic/ },
    { name: 'a bad namespace', line: `${T} -k8s /tasks/start {}`, reason: /namespace/ },
    { name: 'a payload that is not JSON', line: `${T} k8s.io /tasks/start {"a":`, reason: /not JSON/ },
    { name: 'a payload that is a list', line: `${T} k8s.io /tasks/start [1]`, reason: /not a JSON object/ },
  ];
  for (const c of cases) {
    it(`${c.event !== undefined ? 'parses' : 'refuses'} ${c.name}`, () => {
      const parsed = parseEventLine(c.line);
      if (c.event !== undefined) assert.deepEqual(parsed, { ok: true, event: c.event });
      else {
        assert.equal(parsed.ok, false);
        if (!parsed.ok) assert.match(parsed.reason, c.reason ?? /./);
      }
    });
  }

  it('counts as a change only the topics and namespaces that change the list, and init exits only', () => {
    const ns = new Set(['k8s.io']);
    const change = (line: string): boolean => {
      const parsed = parseEventLine(line);
      assert.ok(parsed.ok);
      return isContainerChange(parsed.event, ns);
    };
    assert.equal(change(`${T} k8s.io /tasks/start {"container_id":"a"}`), true);
    assert.equal(change(`${T} k8s.io /tasks/exit {"container_id":"a","id":"a"}`), true);
    assert.equal(change(`${T} k8s.io /tasks/exit {"container_id":"a","id":"exec1"}`), false);
    assert.equal(change(`${T} k8s.io /tasks/exec-started {"container_id":"a","exec_id":"e"}`), false);
    assert.equal(change(`${T} k8s.io /snapshot/prepare {"key":"a"}`), false);
    assert.equal(change(`${T} default /tasks/start {"container_id":"a"}`), false);
    assert.equal(change(`${T} k8s.io /images/update {"name":"x"}`), true);
    assert.equal(change(`${T} k8s.io /containers/create {"id":"a"}`), false);
    assert.equal(change(`${T} k8s.io /containers/delete {"id":"a"}`), false);
    assert.equal(change(`${T} k8s.io /tasks/paused {"container_id":"a"}`), true);
  });
});

/** A pino logger whose records the test reads. */
function recordingLogger(): { logger: Logger; records: Record<string, unknown>[] } {
  const records: Record<string, unknown>[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const line of chunk.toString('utf8').split('\n'))
        if (line !== '') records.push(JSON.parse(line) as Record<string, unknown>);
      done();
    },
  });
  return { logger: pino({ level: 'debug' }, stream), records };
}

const STAND_IN = `#!/bin/sh
# Stand-in for \`ctr\`: prints event lines as the test's mode asks, then waits like \`ctr events\` does.
mode=$1; state=$2; shift 2
if [ "$3" = version ]; then
  echo "$mode" >> "$state/probes"
  # Whether containerd answers: not in the unreachable mode (ctr's words after its dial timeout).
  [ "$mode" = unreachable ] && { echo 'ctr: failed to dial "/run/stand-in.sock": context deadline exceeded' >&2; exit 1; }
  exit 0
fi
echo "$@" >> "$state/args"
n=$(cat "$state/starts" 2>/dev/null || echo 0); n=$((n+1)); echo $n > "$state/starts"
echo $$ > "$state/pid"
ev() { printf '%s %s %s %s\\n' '${T}' "$1" "$2" "$3"; }
case $mode in
  burst) i=0; while [ $i -lt 1000 ]; do ev k8s.io /tasks/start "{\\"container_id\\":\\"c$i\\",\\"pid\\":$i}"; i=$((i+1)); done ;;
  die-once) if [ $n -eq 1 ]; then ev k8s.io /tasks/start '{"container_id":"a","pid":1}'; echo 'ctr: rpc error: code = Unavailable desc = transport is closing' >&2; exit 1; fi ;;
  garbage-once) if [ $n -eq 1 ]; then echo 'this is not an event'; fi ;;
  overlong) head -c 1048576 /dev/zero | tr '\\0' x; echo; ev k8s.io /tasks/start '{"container_id":"b","pid":2}' ;;
  endless) head -c 8388608 /dev/zero | tr '\\0' x ;;
esac
exec sleep 1000
`;

describe('containerd event follower (stand-in ctr: a shell script)', function () {
  this.timeout(30000);
  let dir = '';
  let script = '';
  let follower: ContainerEvents | undefined;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'rtctl-ctr-events-'));
    script = join(dir, 'ctr-stand-in.sh');
    writeFileSync(script, STAND_IN);
    chmodSync(script, 0o755);
  });
  afterEach(async () => {
    await follower?.stop();
    follower = undefined;
    rmSync(dir, { recursive: true, force: true });
  });

  interface Seen {
    changes: number;
    ups: number;
    downs: string[];
  }
  function follow(
    mode: string,
    logger: Logger,
    extra: { maxLineBytes?: number; settleMs?: number } = {},
    onChange?: () => void,
    onUp?: () => void,
  ): Seen {
    const seen: Seen = { changes: 0, ups: 0, downs: [] };
    follower = createContainerEvents({
      socket: '/run/stand-in.sock',
      namespaces: ['k8s.io'],
      logger,
      command: [script, mode, dir],
      settleMs: extra.settleMs ?? 200,
      backoffMs: 50,
      maxBackoffMs: 400,
      ...(extra.maxLineBytes !== undefined ? { maxLineBytes: extra.maxLineBytes } : {}),
    });
    follower.start({
      change: () => {
        seen.changes++;
        onChange?.();
      },
      up: () => {
        seen.ups++;
        onUp?.();
      },
      down: (reason) => seen.downs.push(reason),
    });
    return seen;
  }
  const stats = (): ReturnType<ContainerEvents['stats']> => {
    assert.ok(follower);
    return follower.stats();
  };
  const starts = (): number =>
    existsSync(join(dir, 'starts')) ? Number(readFileSync(join(dir, 'starts'), 'utf8')) : 0;

  it('asks containerd for the topics that matter in the listed namespaces only', async () => {
    follow('idle', pino({ level: 'silent' }));
    await waitUntil('the stand-in started', () => starts() === 1);
    assert.equal(
      readFileSync(join(dir, 'args'), 'utf8').trim(),
      '-a /run/stand-in.sock events namespace=="k8s.io",topic~="^/(tasks/(start|exit|delete|paused|resumed)|images/)"',
    );
    await waitUntil('the stream is up after the settle time', () => stats().up);
  });

  it('turns a burst of 1 000 events into two reconciles: one at the first event, one queued', async () => {
    const sawAtStart: number[] = [];
    const job = async (): Promise<void> => {
      sawAtStart.push(stats().changes);
      // A reconcile slower than the burst: every other event arrives while it runs.
      await waitUntil('the whole burst', () => stats().changes === 1000);
    };
    const trigger = createRefreshTrigger(job, (err) => assert.fail(String(err)));
    const request = (): void => trigger.request();
    const seen = follow('burst', pino({ level: 'silent' }), {}, request, request);
    await waitUntil('1 000 changes', () => seen.changes === 1000);
    await trigger.idle();
    assert.equal(trigger.runs(), 2);
    // The first ran at once on the first event (no quiet period), the queued one after the last.
    assert.deepEqual(sawAtStart, [0, 1000]);
    assert.equal(stats().events, 1000);
    assert.equal(stats().malformed, 0);
  });

  it('restarts a client that died (with its reason logged) and asks for a full list when it is back', async () => {
    const { logger, records } = recordingLogger();
    const seen = follow('die-once', logger);
    await waitUntil('the second client up', () => starts() === 2 && stats().up);
    assert.equal(seen.ups, 2, 'up (list) after the first event, and again once the restarted one settled');
    assert.equal(seen.downs.length, 1);
    assert.match(seen.downs[0] ?? '', /code 1.*transport is closing/);
    const warn = records.find(
      (r) => r['msg'] === 'containerd event stream stopped; polling until it is back',
    );
    assert.ok(warn, 'the stop is logged');
    assert.match(String(warn['reason']), /transport is closing/);
    assert.ok(records.some((r) => r['msg'] === 'containerd event stream is back'));
  });

  it('counts and logs a garbage line, restarts the client, and does not crash', async () => {
    const { logger, records } = recordingLogger();
    const seen = follow('garbage-once', logger);
    await waitUntil('the second client up', () => starts() === 2 && stats().up);
    assert.equal(stats().malformed, 1);
    assert.equal(stats().starts, 2);
    assert.equal(seen.ups, 1, 'a full list once the restarted client is up');
    const warn = records.find(
      (r) => r['msg'] === 'containerd event line not understood; restarting the event stream',
    );
    assert.ok(warn);
    assert.match(String(warn['reason']), /no timestamp/);
    assert.equal(warn['line'], 'this is not an event');
  });

  it('skips a line longer than the limit without holding more than the limit, and reads on', async () => {
    const seen = follow('overlong', pino({ level: 'silent' }), { maxLineBytes: 65536 });
    await waitUntil('the event after the long line', () => stats().events === 1);
    assert.equal(stats().overlong, 1);
    assert.ok(stats().maxBufferedBytes <= 65536, `held ${stats().maxBufferedBytes} bytes`);
    assert.equal(seen.changes, 2, 'the skipped line asks for a list, and so does the event');
    assert.equal(stats().starts, 1, 'the framing is intact: no restart');
  });

  it('holds at most the limit of a line that never ends (8 MiB without a newline)', async () => {
    follow('endless', pino({ level: 'silent' }), { maxLineBytes: 65536, settleMs: 60000 });
    await waitUntil('the long line read', () => stats().overlong === 1);
    // The rest of the 8 MiB is read and dropped: wait until the stand-in has written it all (it then sleeps).
    await waitUntil('the stand-in waiting', () => {
      const pid = existsSync(join(dir, 'pid')) ? readFileSync(join(dir, 'pid'), 'utf8').trim() : '';
      return pid !== '' && readFileSync(`/proc/${pid}/cmdline`, 'utf8').startsWith('sleep');
    });
    assert.ok(stats().maxBufferedBytes <= 65536, `held ${stats().maxBufferedBytes} bytes`);
    assert.equal(stats().overlong, 1);
  });

  it('keeps retrying with backoff when ctr is missing, warns once, and stops cleanly', async () => {
    const { logger, records } = recordingLogger();
    follower = createContainerEvents({
      socket: '/run/stand-in.sock',
      namespaces: ['k8s.io'],
      logger,
      command: [join(dir, 'no-such-ctr')],
      backoffMs: 20,
      maxBackoffMs: 100,
    });
    const seen: Seen = { changes: 0, ups: 0, downs: [] };
    follower.start({ change: () => seen.changes++, up: () => seen.ups++, down: (r) => seen.downs.push(r) });
    await waitUntil('four attempts', () => stats().starts >= 4);
    const warns = records.filter((r) => r['level'] === 40);
    assert.equal(warns.length, 1, 'one warning while the problem lasts');
    assert.match(String(warns[0]?.['reason']), /cannot start .*no-such-ctr: spawn .*ENOENT/);
    assert.equal(seen.ups, 0);
    await follower.stop();
    const after = stats().starts;
    await sleep(300);
    assert.equal(stats().starts, after, 'no restart after stop');
  });

  it('does not count a client that is still dialing an absent containerd as up', async () => {
    const seen = follow('unreachable', pino({ level: 'silent' }), { settleMs: 50 });
    await waitUntil(
      'the client started and containerd asked',
      () => starts() === 1 && existsSync(join(dir, 'probes')),
    );
    // The probe's answer (a failure) and five settle periods: still not up, though the client runs.
    await sleep(250);
    assert.equal(stats().up, false);
    assert.equal(seen.ups, 0);
    assert.equal(stats().starts, 1);
  });

  it('stop kills the client and reaps it (no zombie), and starts nothing after', async () => {
    follow('idle', pino({ level: 'silent' }));
    await waitUntil('the stream up', () => stats().up);
    const pid = Number(readFileSync(join(dir, 'pid'), 'utf8'));
    assert.ok(existsSync(`/proc/${pid}`));
    await follower?.stop();
    assert.equal(existsSync(`/proc/${pid}`), false, 'the client is gone, not a zombie');
    assert.equal(stats().up, false);
    assert.equal(starts(), 1);
  });
});

describe('refresh trigger', () => {
  it('runs a lone request at once, coalesces the rest, and runs again after a failed run', async () => {
    let release: (() => void) | undefined;
    let fail = false;
    const errors: unknown[] = [];
    const trigger = createRefreshTrigger(
      () =>
        new Promise<void>((resolve, reject) => {
          release = fail ? () => reject(new Error('list failed')) : resolve;
        }),
      (err) => errors.push(err),
    );
    trigger.request();
    assert.equal(trigger.runs(), 1, 'ran at once');
    for (let i = 0; i < 100; i++) trigger.request();
    assert.equal(trigger.runs(), 1);
    fail = true;
    release?.();
    await waitUntil('the queued run', () => trigger.runs() === 2);
    release?.();
    await trigger.idle();
    assert.equal(errors.length, 1);
    fail = false;
    trigger.request();
    assert.equal(trigger.runs(), 3, 'a failure does not stop later requests');
    release?.();
    await trigger.idle();
  });
});
