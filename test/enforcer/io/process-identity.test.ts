// The identity of a process over a machine's uptime and across boots (boot id, pid, start time), read from the
// real /proc; and the start-time field read from stat texts whose command names hold spaces and parentheses.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { processIdentity, startTimeOfStat } from '../../../enforcer/io/process-identity.js';

describe('process identity', () => {
  it('reads the start time after the last parenthesis of the command name', () => {
    const rest = 'S 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 4242 20 21';
    assert.equal(startTimeOfStat(`77 (sh) ${rest}`), '4242');
    assert.equal(startTimeOfStat(`77 (a) (b c) ) ${rest}`), '4242');
    assert.equal(startTimeOfStat('77 (sh) S 1 2'), undefined, 'too few fields');
    assert.equal(startTimeOfStat('no parenthesis'), undefined);
  });

  it('names this process the same way twice, another process differently, and a gone one not at all', async () => {
    const self = processIdentity(process.pid);
    assert.match(self ?? '', /^[0-9a-f-]+:[0-9]+:[0-9]+$/);
    assert.equal(processIdentity(process.pid), self);
    const child = spawn('sleep', ['30'], { stdio: 'ignore' });
    let other: string | undefined;
    try {
      other = processIdentity(child.pid ?? -1);
      assert.ok(other !== undefined && other !== self);
      assert.equal(other?.split(':')[0], self?.split(':')[0], 'the same boot');
    } finally {
      child.kill('SIGKILL');
      await once(child, 'exit');
    }
    // Reaped: no identity, or (its pid reused at once by another process) never the old one.
    const after = processIdentity(child.pid ?? -1);
    assert.ok(after === undefined || after !== other, 'a reaped process keeps no identity');
    assert.equal(processIdentity(0), undefined);
  });
});
