// The version every component reports is package.json's.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { RTCTL_VERSION } from '../../compiler/model/version.js';
import { REPO_ROOT } from '../support/paths.js';

describe('rtctl version', () => {
  it('RTCTL_VERSION equals package.json version', () => {
    const pkg = JSON.parse(readFileSync(path.join(REPO_ROOT, 'package.json'), 'utf8')) as { version: string };
    assert.equal(RTCTL_VERSION, pkg.version);
  });
});
