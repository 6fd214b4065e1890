// The fanotify helper protocol: STATE encoding and event-line parsing.
import assert from 'node:assert/strict';
import { encodeHelperState } from '../../../enforcer/fanotify/helper-protocol.js';
import { parseHelperEvent } from '../../../enforcer/fanotify/fanotify-plane.js';

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
