// .pre-commit-hooks.yaml with the real pre-commit (Debian package): `pre-commit try-repo` (system hooks) and
// `pre-commit run` with a config naming a snapshot of this checkout (node hooks), in scratch repositories
// holding a bad and a good policy. The node hooks are installed by
// pre-commit itself (npm install, npm pack with its prepack build, npm install -g of the tarball; the npm
// registry is the only network it needs); the system hooks run an `rtctl` put on PATH by the test.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parse } from 'yaml';
import { COMPILER_FIXTURES, REPO_ROOT } from '../support/paths.js';
import { hasCommand, requirePrereqs } from '../support/prereq.js';
import { writeRtctlCommand } from '../support/rtctl-on-path.js';
import { REAL_TOOL_TIMEOUT_MS } from '../support/timeouts.js';
import { git, gitEnv, initRepo, snapshotWorkingTree } from '../support/scratch-git.js';

const BAD = path.join(COMPILER_FIXTURES, 'invalid', 'RT2003-unknown-field.yaml');
const GOOD = path.join(REPO_ROOT, 'policies', 'examples', 'block-package-managers.yaml');
/** A suite for GOOD alone; with `allowed: true` it fails. */
const suite = (allowed: boolean) =>
  `apiVersion: test.security.runtime.com/v1\nkind: RuntimePolicyTest\nmetadata: {name: good}\ncases:\n` +
  `  - name: apt is blocked\n    workload: {namespace: shop, labels: {app: web}}\n` +
  `    operation: {process: /usr/bin/apt}\n    expect: {allowed: ${allowed}, policy: block-package-managers}\n`;

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
  after(function () {
    // The node hook's environment holds a node_modules tree: removing it takes a while.
    this.timeout(REAL_TOOL_TIMEOUT_MS);
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
    // A .pre-commit-config.yaml naming the snapshot and its rev, as users write it (try-repo would install anew
    // for every run); the second run reuses the environment.
    this.timeout(15 * 60_000);
    const repo = userRepo('node', { 'policies/bad.yaml': BAD });
    writeFileSync(
      path.join(repo, '.pre-commit-config.yaml'),
      `repos:\n  - repo: ${hooksRepo}\n    rev: ${rev}\n    hooks:\n      - id: rtctl-lint\n        files: ^policies/\n      - id: rtctl-test\n        args: [policies/]\n`,
    );
    git(repo, 'add', '-A');
    const run = () => {
      const r = spawnSync('pre-commit', ['run', '--all-files', '--color', 'never'], {
        cwd: repo,
        env: gitEnv({ PRE_COMMIT_HOME: path.join(dir, 'pre-commit-home') }),
        encoding: 'utf8',
        maxBuffer: 64 * 1024 * 1024,
      });
      return { code: r.status, out: `${r.stdout}${r.stderr}` };
    };
    const bad = run();
    assert.equal(bad.code, 1, bad.out);
    assert.match(bad.out, /rtctl lint\.+Failed/);
    assert.match(bad.out, /policies\/bad\.yaml:10:5: error RT2003 spec\.file\.matchPath: unknown field/);
    // The fix: the same environment is reused.
    git(repo, 'rm', '-q', '-f', 'policies/bad.yaml');
    mkdirSync(path.join(repo, 'policies'), { recursive: true });
    copyFileSync(GOOD, path.join(repo, 'policies', 'good.yaml'));
    writeFileSync(path.join(repo, 'policies', 'good.rtctl-test.yaml'), suite(false));
    git(repo, 'add', '-A');
    const good = run();
    assert.equal(good.code, 0, good.out);
    assert.match(good.out, /rtctl lint\.+Passed/);
    assert.match(good.out, /rtctl test\.+Passed/);
    assert.doesNotMatch(good.out, /Installing environment/);
  });

  it('rtctl-test-system: the suite beside the policies passes; a wrong expectation fails with the case', function () {
    this.timeout(120_000);
    const repo = userRepo('test-system', { 'policies/good.yaml': GOOD });
    writeFileSync(path.join(repo, 'policies', 'good.rtctl-test.yaml'), suite(false));
    git(repo, 'add', '-A');
    const pass = tryRepo(repo, 'rtctl-test-system', true);
    assert.equal(pass.code, 0, pass.out);
    assert.match(pass.out, /rtctl test \(rtctl on PATH\)\.+Passed/);
    writeFileSync(path.join(repo, 'policies', 'good.rtctl-test.yaml'), suite(true));
    git(repo, 'add', '-A');
    const fail = tryRepo(repo, 'rtctl-test-system', true);
    assert.equal(fail.code, 1, fail.out);
    assert.match(
      fail.out,
      /FAIL policies\/good\.rtctl-test\.yaml:5:5: good › apt is blocked: expected allowed, got denied/,
    );
  });
});
