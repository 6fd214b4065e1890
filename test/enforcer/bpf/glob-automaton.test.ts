// The bit-parallel glob automaton the BPF programs run must accept exactly the paths the reference
// matcher (matchGlobBytes, docs/rule-table.md "Glob match") accepts.
import assert from 'node:assert/strict';
import fc from 'fast-check';
import '../../support/property-seed.js';
import { matchGlobBytes, tokenizeGlob } from '../../../compiler/rule-table/match-glob-bytes.js';
import { buildGlobAutomaton, runGlobAutomaton } from '../../../enforcer/bpf/glob-automaton.js';

const enc = new TextEncoder();
const globChar = fc.constantFrom('a', 'b', '/', '*', '?', '.');
const pathChar = fc.constantFrom('a', 'b', '/', '.', 'c');

describe('BPF plane: glob automaton', () => {
  const table: [string, string, boolean][] = [
    ['/home/*/.ssh/id_*', '/home/u/.ssh/id_rsa', true],
    ['/home/*/.ssh/id_*', '/home/u/x/.ssh/id_rsa', false],
    ['/**/*.sh', '/a/b/c.sh', true],
    ['/**/*.sh', '/c.sh', false],
    ['/etc/?', '/etc/a', true],
    ['/etc/?', '/etc//', false],
    ['/a/***', '/a/b/c', true],
    ['/a/*', '/a/', true],
    ['/a/*', '/a', false],
  ];
  for (const [glob, path, expected] of table) {
    it(`${glob} ${expected ? 'matches' : 'does not match'} ${path}`, () => {
      const a = buildGlobAutomaton(enc.encode(glob));
      assert.ok(a);
      assert.equal(runGlobAutomaton(a, enc.encode(path)), expected);
    });
  }

  it('agrees with matchGlobBytes on random globs and paths', () => {
    fc.assert(
      fc.property(fc.array(globChar, { maxLength: 12 }), fc.array(pathChar, { maxLength: 16 }), (g, p) => {
        const glob = enc.encode(g.join(''));
        const path = enc.encode(p.join(''));
        const a = buildGlobAutomaton(glob);
        assert.ok(a);
        assert.equal(runGlobAutomaton(a, path), matchGlobBytes(tokenizeGlob(glob), path));
      }),
      { numRuns: 3000, seed: 7 },
    );
  });

  it('refuses globs longer than a 64-bit state', () => {
    assert.equal(buildGlobAutomaton(enc.encode('/'.repeat(64))), null);
    assert.ok(buildGlobAutomaton(enc.encode('/'.repeat(63))));
  });
});
