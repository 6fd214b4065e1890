// npm pack and install: the package packed from a snapshot of this checkout (prepack compiles dist/), installed
// into a scratch project from the tarball (its dependencies from the npm registry), runs `rtctl lint` from
// node_modules/.bin, and its `kubectl-rtctl` works as a kubectl plugin with the real kubectl.
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { COMPILER_FIXTURES, REPO_ROOT } from '../support/paths.js';
import { hasCommand, requirePrereqs } from '../support/prereq.js';
import { snapshotWorkingTree } from '../support/scratch-git.js';
import { REAL_TOOL_TIMEOUT_MS } from '../support/timeouts.js';

const BAD = path.join(COMPILER_FIXTURES, 'invalid', 'RT2003-unknown-field.yaml');

describe('npm pack → npm install of the tarball → rtctl and kubectl rtctl', function () {
  this.timeout(REAL_TOOL_TIMEOUT_MS);
  let dir: string;
  let tarball: string;
  let project: string;

  before(function () {
    requirePrereqs(this, [[hasCommand('npm'), 'npm']]);
    dir = mkdtempSync(path.join(os.tmpdir(), 'rtctl-pack-'));
    const snap = path.join(dir, 'src');
    snapshotWorkingTree(snap);
    symlinkSync(path.join(REPO_ROOT, 'node_modules'), path.join(snap, 'node_modules'));
    const packed = execFileSync('npm', ['pack', '--pack-destination', dir], { cwd: snap, encoding: 'utf8' });
    // stdout is the tarball's name alone (.npmrc keeps prepack's output off it): what pre-commit reads.
    assert.match(packed, /^rtctl-\d+\.\d+\.\d+\.tgz\n$/);
    tarball = path.join(dir, packed.trim());
    project = path.join(dir, 'project');
    execFileSync('mkdir', [project]);
    writeFileSync(
      path.join(project, 'package.json'),
      '{"name":"scratch","version":"1.0.0","private":true}\n',
    );
    execFileSync('npm', ['install', '--no-audit', '--no-fund', tarball], { cwd: project, stdio: 'ignore' });
  });
  after(function () {
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  });

  it('the tarball holds the compiled CLI and no sources, tests, maps or native artifacts', () => {
    const files = execFileSync('tar', ['tzf', tarball], { encoding: 'utf8' })
      .split('\n')
      .filter((f) => f !== '');
    for (const f of [
      'package/package.json',
      'package/dist/bin/rtctl.js',
      'package/dist/bin/kubectl-rtctl.js',
      'package/dist/compiler/cli.js',
    ]) {
      assert.ok(files.includes(f), f);
    }
    for (const f of files)
      assert.doesNotMatch(f, /^package\/(test|compiler|bin)\/|\.map$|^package\/dist\/native\//);
  });

  it('node_modules/.bin/rtctl lints: exit 0 on the examples, 1 with the diagnostic on a bad policy', () => {
    const rtctl = path.join(project, 'node_modules', '.bin', 'rtctl');
    const good = spawnSync(rtctl, ['lint', path.join(REPO_ROOT, 'policies', 'examples')], {
      encoding: 'utf8',
    });
    assert.equal(good.status, 0, good.stdout + good.stderr);
    assert.match(good.stdout, /0 errors, 4 warnings\n$/);
    const bad = spawnSync(rtctl, ['lint', BAD], { encoding: 'utf8' });
    assert.equal(bad.status, 1, bad.stdout + bad.stderr);
    assert.match(bad.stdout, /RT2003-unknown-field\.yaml:10:5: error RT2003/);
  });

  it('the installed kubectl-rtctl is a kubectl plugin (real kubectl)', function () {
    requirePrereqs(this, [[hasCommand('kubectl'), 'kubectl']]);
    const env = {
      ...process.env,
      PATH: `${path.join(project, 'node_modules', '.bin')}:${process.env['PATH'] ?? ''}`,
      KUBECONFIG: path.join(dir, 'no-kubeconfig'),
    };
    const list = spawnSync('kubectl', ['plugin', 'list'], { env, encoding: 'utf8' });
    assert.match(list.stdout, /node_modules\/\.bin\/kubectl-rtctl$/m);
    const bad = spawnSync('kubectl', ['rtctl', 'lint', BAD], { env, encoding: 'utf8' });
    assert.equal(bad.status, 1, bad.stdout + bad.stderr);
    assert.match(bad.stdout, /RT2003-unknown-field\.yaml:10:5: error RT2003/);
  });
});
