// kubectl rtctl with the real kubectl: a `kubectl-rtctl` executable on PATH (here a script running
// bin/kubectl-rtctl.ts of this checkout; the npm-installed one is run by test/tooling/package.test.ts) is found by
// `kubectl plugin list` and `kubectl rtctl lint` gives lint's output and exit code. The krew manifest's shape.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parse } from 'yaml';
import { COMPILER_FIXTURES, REPO_ROOT } from '../support/paths.js';
import { hasCommand, requirePrereqs } from '../support/prereq.js';
import { TSX_LOADER_URL } from '../support/rtctl-on-path.js';

const BAD = path.join(COMPILER_FIXTURES, 'invalid', 'RT2003-unknown-field.yaml');

describe('kubectl rtctl (real kubectl, plugin on PATH)', function () {
  this.timeout(60_000);
  let dir: string;
  let env: NodeJS.ProcessEnv;

  before(function () {
    requirePrereqs(this, [[hasCommand('kubectl'), 'kubectl']]);
    dir = mkdtempSync(path.join(os.tmpdir(), 'rtctl-kubectl-'));
    const bin = path.join(dir, 'bin');
    mkdirSync(bin);
    const plugin = path.join(bin, 'kubectl-rtctl');
    writeFileSync(
      plugin,
      `#!/bin/sh\nexec ${JSON.stringify(process.execPath)} --import ${JSON.stringify(TSX_LOADER_URL)} ${JSON.stringify(path.join(REPO_ROOT, 'bin', 'kubectl-rtctl.ts'))} "$@"\n`,
    );
    chmodSync(plugin, 0o755);
    // No cluster is needed or contacted: kubectl runs plugins before loading a configuration.
    env = {
      ...process.env,
      PATH: `${bin}:${process.env['PATH'] ?? ''}`,
      KUBECONFIG: path.join(dir, 'no-kubeconfig'),
    };
  });
  after(() => {
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  });

  const kubectl = (...args: string[]) => {
    const r = spawnSync('kubectl', args, { env, encoding: 'utf8', cwd: REPO_ROOT });
    return { code: r.status, stdout: r.stdout, stderr: r.stderr };
  };

  it('kubectl plugin list finds kubectl-rtctl', () => {
    const r = kubectl('plugin', 'list');
    assert.match(
      r.stdout,
      new RegExp(`^${path.join(dir, 'bin', 'kubectl-rtctl').replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}$`, 'm'),
    );
    assert.doesNotMatch(r.stderr, /kubectl-rtctl.*(warning|not executable)/i);
  });

  it('kubectl rtctl lint: lint output and exit code 0 on the examples, 1 on a bad policy', () => {
    const good = kubectl('rtctl', 'lint', 'policies/examples');
    assert.equal(good.code, 0, good.stdout + good.stderr);
    assert.match(good.stdout, /0 errors, 4 warnings\n$/);
    const bad = kubectl('rtctl', 'lint', BAD);
    assert.equal(bad.code, 1, bad.stdout + bad.stderr);
    assert.match(
      bad.stdout,
      /RT2003-unknown-field\.yaml:10:5: error RT2003 spec\.file\.matchPath: unknown field "matchPath"/,
    );
    const usage = kubectl('rtctl', 'lint', '--format', 'nope', 'policies');
    assert.equal(usage.code, 2, usage.stdout + usage.stderr);
  });

  it('krew manifest: a Plugin named rtctl whose platforms run kubectl-rtctl, at the package version', () => {
    const manifest = parse(readFileSync(path.join(REPO_ROOT, 'plugins', 'rtctl.yaml'), 'utf8')) as {
      apiVersion: string;
      kind: string;
      metadata: { name: string };
      spec: {
        version: string;
        shortDescription: string;
        platforms: Array<{
          selector: { matchLabels: Record<string, string> };
          uri: string;
          sha256: string;
          bin: string;
        }>;
      };
    };
    const pkg = JSON.parse(readFileSync(path.join(REPO_ROOT, 'package.json'), 'utf8')) as {
      version: string;
      bin: Record<string, string>;
    };
    assert.equal(manifest.apiVersion, 'krew.googlecontainertools.github.com/v1alpha2');
    assert.equal(manifest.kind, 'Plugin');
    assert.equal(manifest.metadata.name, 'rtctl');
    assert.equal(manifest.spec.version, `v${pkg.version}`);
    assert.ok(pkg.bin['kubectl-rtctl'] !== undefined);
    for (const p of manifest.spec.platforms) {
      assert.equal(p.bin, 'kubectl-rtctl');
      assert.match(p.uri, new RegExp(`/v${pkg.version.replace(/\./g, '\\.')}/`));
      assert.match(p.sha256, /^[0-9a-f]{64}$/);
    }
    assert.deepEqual(
      manifest.spec.platforms.map((p) => p.selector.matchLabels),
      [{ os: 'linux', arch: 'amd64' }],
    );
  });
});
