// The fanotify helper protocol: STATE encoding and event-line parsing, and the replies of a running helper
// to malformed commands (root: the helper opens a fanotify group; it marks nothing without a state).
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { encodeHelperState } from '../../../enforcer/fanotify/helper-protocol.js';
import { parseHelperEvent } from '../../../enforcer/fanotify/fanotify-plane.js';
import { NativeArtifact, requireNativeArtifact } from '../../support/native.js';
import { isRoot, requirePrereqs } from '../../support/prereq.js';
import { stopHelper } from '../support/enforcer-process.js';

describe('fanotify helper protocol', () => {
  const table = Uint8Array.from([1, 2, 3, 10, 0]);
  const posture = { file: 'block', network: 'audit', capabilities: 'block' } as const;

  it('encodes the whole state as one STATE command with the table bytes verbatim', () => {
    const bytes = Buffer.from(
      encodeHelperState({
        generation: 7,
        table: { bytes: table },
        workloads: [
          {
            anchor: { key: 'abc', host: false, pid: 42, cgroupPath: '' },
            policies: [0, 3],
            postures: posture,
          },
          { anchor: { key: 'host', host: true, pid: 1, cgroupPath: '' }, policies: [], postures: posture },
        ],
      }),
    );
    const nl = bytes.indexOf(10);
    const header = bytes.subarray(0, nl).toString();
    const payload = bytes.subarray(nl + 1);
    assert.equal(header, `STATE ${payload.byteLength}`);
    const text = payload.subarray(0, payload.byteLength - table.byteLength).toString();
    assert.equal(text, 'generation 7\nworkload abc 0 42 bbab 0,3\nworkload host 1 1 bbab -\ntable 5\n');
    assert.deepEqual([...payload.subarray(payload.byteLength - 5)], [...table]);
  });

  it('refuses a key the line protocol cannot carry', () => {
    assert.throws(() =>
      encodeHelperState({
        generation: 1,
        table: { bytes: table },
        workloads: [
          { anchor: { key: 'a b\n', host: false, pid: 1, cgroupPath: '' }, policies: [], postures: posture },
        ],
      }),
    );
  });

  it('maps helper event lines to data-plane events', () => {
    const e = parseHelperEvent(
      JSON.stringify({
        t: 'event',
        seq: 9,
        workload: 'abc',
        generation: 7,
        timeNs: '1795333130349923022',
        class: 1,
        action: 1,
        posture: 0,
        errno: 0,
        rule: 4,
        policy: 'p',
        severity: 3,
        message: 'm',
        tags: ['A'],
        pid: 100,
        ppid: 90,
        nspid: 5,
        nsppid: 1,
        uid: 0,
        exe: '/bin/cat',
        pexe: '/bin/sh',
        path: '/data/x',
        syscall: 'SYS_OPENAT',
        args: 'fd=-100 flags=O_RDONLY',
        cgroup: '/k8s.io/abc',
        cwd: '/',
      }),
    );
    assert.ok(e);
    assert.equal(e.seq, 9);
    assert.equal(e.operation, 'File');
    assert.equal(e.kind, 'Audit');
    assert.equal(e.action, 'Audit');
    assert.equal(e.timeNs, 1795333130349923022n);
    assert.equal(e.hostPid, 100);
    assert.equal(e.pid, 5);
    const posture = parseHelperEvent(
      JSON.stringify({
        t: 'event',
        workload: 'abc',
        class: 0,
        action: 2,
        posture: 1,
        errno: 1,
        rule: -1,
        policy: 'DefaultPosture',
      }),
    );
    assert.equal(posture?.kind, 'Posture');
    assert.equal(posture?.action, 'Block');
    assert.equal(parseHelperEvent('{"t":"status"}'), undefined);
    assert.equal(parseHelperEvent('{"t":"event","workload":"x","class":9}'), undefined);
  });
});

/** Sends commands on one connection and returns the raw bytes of the first `lines` reply lines. */
async function exchange(socketPath: string, commands: string, lines: number): Promise<Buffer> {
  const socket: Socket = connect(socketPath);
  try {
    return await new Promise<Buffer>((resolve, reject) => {
      let got = Buffer.alloc(0);
      socket.on('connect', () => socket.write(commands));
      socket.on('data', (chunk: Buffer) => {
        got = Buffer.concat([got, chunk]);
        if (got.toString('latin1').split('\n').length > lines) resolve(got);
      });
      socket.on('error', reject);
      socket.on('close', () => resolve(got));
    });
  } finally {
    socket.destroy();
  }
}

describe('fanotify helper protocol on a running helper', function () {
  this.timeout(60000);
  let work = '';
  let socketPath = '';
  let child: ChildProcess | undefined;

  before(async function () {
    requirePrereqs(this, [[isRoot(), 'root (the helper opens a fanotify group)']]);
    const helper = requireNativeArtifact(this, NativeArtifact.fanotifyHelper);
    work = mkdtempSync(join(tmpdir(), 'rtctl-helper-protocol-'));
    socketPath = join(work, 'helper.sock');
    child = spawn(helper, ['--socket', socketPath], { stdio: 'ignore' });
    for (let i = 0; i < 200 && !existsSync(socketPath); i++) await sleep(25);
    assert.ok(existsSync(socketPath), 'the helper listens');
  });

  after(async () => {
    if (socketPath !== '' && existsSync(socketPath)) await stopHelper(socketPath);
    child?.kill();
    if (work) rmSync(work, { recursive: true, force: true });
  });

  it('answers an unknown command with one JSON line carrying no NUL byte', async () => {
    const reply = await exchange(socketPath, 'HELLO\n', 1);
    assert.equal(reply.indexOf(0), -1, `no NUL byte in ${JSON.stringify(reply.toString('latin1'))}`);
    assert.deepEqual(JSON.parse(reply.toString('utf8').split('\n')[0] ?? ''), {
      t: 'error',
      message: 'unknown command',
    });
  });

  for (const arg of ['-1', '', 'x', '18446744073709551616', '1']) {
    it(`refuses \`ACK ${arg}\` with an error reply instead of acknowledging events`, async () => {
      // `1`: no event was ever sent, so there is nothing it could acknowledge.
      const reply = await exchange(socketPath, `EVENTS\nACK ${arg}\n`, 1);
      const line = JSON.parse(reply.toString('utf8').split('\n')[0] ?? '') as Record<string, unknown>;
      assert.equal(line['t'], 'error');
      assert.match(String(line['message']), /^ACK takes the sequence number of an event/);
    });
  }

  it('still answers STATUS after refused commands', async () => {
    const reply = await exchange(socketPath, 'STATUS\n', 1);
    const status = JSON.parse(reply.toString('utf8').split('\n')[0] ?? '') as Record<string, unknown>;
    assert.equal(status['t'], 'status');
    assert.equal(status['reported'], 0);
  });
});
