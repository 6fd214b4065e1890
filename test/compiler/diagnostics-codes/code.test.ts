// The typed code constants: one key per code of the lists, named after the code's kebab-case name.
import assert from 'node:assert/strict';
import { ALL_CODES } from '../../../compiler/diagnostics/codes/index.js';
import { Code, toCodeKey } from '../../../compiler/diagnostics/codes/code.js';

describe('diagnostic code constants', () => {
  it('has exactly one key per code, named after it', () => {
    assert.equal(Object.keys(Code).length, ALL_CODES.length, 'no two names collide in camel case');
    for (const c of ALL_CODES) assert.equal((Code as Record<string, string>)[toCodeKey(c.name)], c.code);
  });

  it('reads as the issue writes it', () => {
    assert.equal(Code.relativePath, 'RT3001');
    assert.equal(toCodeKey('selinux-unrepresentable-path'), 'selinuxUnrepresentablePath');
    // @ts-expect-error a misspelt key does not compile
    assert.equal(Code.relativPath, undefined);
  });
});
