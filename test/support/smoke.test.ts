import assert from 'node:assert/strict';
import { hasCommand } from './prereq.js';

describe('test support', () => {
  it('finds sh on PATH and not a made-up command', () => {
    assert.equal(hasCommand('sh'), true);
    assert.equal(hasCommand('no-such-command-rtctl-xyz'), false);
  });
});
