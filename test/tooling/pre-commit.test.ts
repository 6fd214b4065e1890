// .pre-commit-hooks.yaml with the real pre-commit (Debian package): `pre-commit try-repo` of a snapshot of this
// checkout against scratch repositories holding a bad and a good policy. The node hooks are installed by
// pre-commit itself (npm install, npm pack with its prepack build, npm install -g of the tarball; the npm
// registry is the only network it needs); the system hooks run an `rtctl` put on PATH by the test.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parse } from 'yaml';
import { COMPILER_FIXTURES, REPO_ROOT } from '../support/paths.js';
import { hasCommand, requirePrereqs } from '../support/prereq.js';
import { writeRtctlCommand } from '../support/rtctl-on-path.js';
import { git, gitEnv, initRepo, snapshotWorkingTree } from '../support/scratch-git.js';

const BAD = path.join(COMPILER_FIXTURES, 'invalid', 'RT2003-unknown-field.yaml');
const GOOD = path.join(REPO_ROOT, 'policies', 'examples', 'block-package-managers.yaml');

interface ManifestHook {
  id: string;
  entry: string;
  language: string;
  files?: string;
  pass_filenames?: boolean;
}

describe('.pre-commit-hooks.yaml (real pre-commit try-repo)', function () {
  let dir: string;
  let hooksRepo: string;
  let rev: string;
  let binDir: string;

  before(function () {
    requirePrereqs(this, [
      [hasCommand('pre-commit'), 'pre-commit (Debian package pre-commit)'],
      [hasCommand('git'), 'git'],
    ]);
    dir = mkdtempSync(path.join(os.tmpdir(), 'rtctl-pre-commit-'));
    hooksRepo = path.join(dir, 'rtctl');
    rev = snapshotWorkingTree(hooksRepo);
    binDir = writeRtctlCommand(path.join(dir, 'bin'));
  });
  after(() => {
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  });

  /** A scratch repository with `files` staged (names → source file). */
  function userRepo(name: string, files: Record<string, string>): string {
    const repo = initRepo(path.join(dir, name));
    for (const [to, from] of Object.entries(files)) {
      mkdirSync(path.dirname(path.join(repo, to)), { recursive: true });
      copyFileSync(from, path.join(repo, to));
    }
    git(repo, 'add', '-A');
    return repo;
  }

  function tryRepo(repo: string, hook: string, withRtctlOnPath: boolean) {
    const env = gitEnv({
      PRE_COMMIT_HOME: path.join(dir, 'pre-commit-home'),
      PATH: `${withRtctlOnPath ? `${binDir}:` : ''}${process.env['PATH'] ?? ''}`,
    });
    const r = spawnSync(
      'pre-commit',
      ['try-repo', hooksRepo, hook, '--ref', rev, '--all-files', '--color', 'never'],
      {
        cwd: repo,
        env,
        encoding: 'utf8',
        maxBuffer: 64 * 1024 * 1024,
      },
    );
    return { code: r.status, out: `${r.stdout}${r.stderr}` };
  }

  it('declares rtctl-lint and rtctl-test (node) and their -system variants', () => {
    const hooks = parse(
      readFileSync(path.join(REPO_ROOT, '.pre-commit-hooks.yaml'), 'utf8'),
    ) as ManifestHook[];
    assert.deepEqual(
      hooks.map((h) => [h.id, h.entry, h.language]),
      [
        ['rtctl-lint', 'rtctl lint', 'node'],
        ['rtctl-test', 'rtctl test', 'node'],
        ['rtctl-lint-system', 'rtctl lint', 'system'],
        ['rtctl-test-system', 'rtctl test', 'system'],
      ],
    );
    const pkg = JSON.parse(readFileSync(path.join(REPO_ROOT, 'package.json'), 'utf8')) as {
      bin: Record<string, string>;
    };
    // language node runs the command npm installed from this package's bin.
    assert.equal(pkg.bin['rtctl'], 'dist/bin/rtctl.js');
  });

  it('rtctl-lint-system: a bad policy fails with file:line:col and the code; a good one passes', function () {
    this.timeout(120_000);
    const bad = tryRepo(userRepo('bad-system', { 'policies/bad.yaml': BAD }), 'rtctl-lint-system', true);
    assert.equal(bad.code, 1, bad.out);
    assert.match(bad.out, /rtctl lint \(rtctl on PATH\)\.+Failed/);
    assert.match(bad.out, /policies\/bad\.yaml:10:5: error RT2003 spec\.file\.matchPath: unknown field/);
    const good = tryRepo(userRepo('good-system', { 'policies/good.yaml': GOOD }), 'rtctl-lint-system', true);
    assert.equal(good.code, 0, good.out);
    assert.match(good.out, /rtctl lint \(rtctl on PATH\)\.+Passed/);
  });

  it('rtctl-lint (language node, installed by pre-commit from the repository): bad fails, good passes', function () {
    // Installing runs npm install and the prepack build: minutes on a shared machine; a hang is what this catches.
    this.timeout(15 * 60_000);
    const repo = userRepo('node', { 'policies/bad.yaml': BAD });
    const bad = tryRepo(repo, 'rtctl-lint', false);
    assert.equal(bad.code, 1, bad.out);
    assert.match(bad.out, /rtctl lint\.+Failed/);
    assert.match(bad.out, /policies\/bad\.yaml:10:5: error RT2003 spec\.file\.matchPath: unknown field/);
    // The fix, in the same repository: the environment is reused (same hook repository and rev).
    git(repo, 'rm', '-q', '-f', 'policies/bad.yaml');
    mkdirSync(path.join(repo, 'policies'), { recursive: true });
    copyFileSync(GOOD, path.join(repo, 'policies', 'good.yaml'));
    git(repo, 'add', '-A');
    const good = tryRepo(repo, 'rtctl-lint', false);
    assert.equal(good.code, 0, good.out);
    assert.match(good.out, /rtctl lint\.+Passed/);
    assert.doesNotMatch(good.out, /Installing environment/);
  });
});
