// The single executable (npm run build:sea → dist/sea/rtctl): built here, then run from a directory of its own
// with an empty PATH (no node, no npm, no node_modules, no dist/native beside it); lint, compile, test and
// explain give the same output and exit code as the TypeScript CLI.
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { COMPILER_FIXTURES, REPO_ROOT } from '../support/paths.js';
import { requirePrereqs } from '../support/prereq.js';
import { runRtctl } from '../support/run-rtctl.js';
import { REAL_TOOL_TIMEOUT_MS } from '../support/timeouts.js';

const EXAMPLES = path.join(REPO_ROOT, 'policies', 'examples');
const BAD = path.join(COMPILER_FIXTURES, 'invalid', 'RT2003-unknown-field.yaml');

function listTree(dir: string, prefix = ''): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? listTree(path.join(dir, e.name), `${prefix}${e.name}/`) : [`${prefix}${e.name}`],
  );
}

describe('single executable (npm run build:sea; run with an empty PATH from a directory of its own)', function () {
  this.timeout(120_000);
  let dir: string;
  let exe: string;

  before(function () {
    requirePrereqs(this, [
      [process.platform === 'linux' && process.arch === 'x64', 'linux-x64 (the SEA target)'],
    ]);
    this.timeout(REAL_TOOL_TIMEOUT_MS);
    execFileSync('npm', ['run', '--silent', 'build:sea'], {
      cwd: REPO_ROOT,
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    dir = mkdtempSync(path.join(os.tmpdir(), 'rtctl-sea-'));
    mkdirSync(path.join(dir, 'bin'));
    exe = path.join(dir, 'bin', 'rtctl');
    copyFileSync(path.join(REPO_ROOT, 'dist', 'sea', 'rtctl'), exe);
    execFileSync('chmod', ['755', exe]);
  });
  after(() => {
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  });

  const sea = (args: string[], cwd = REPO_ROOT) => {
    const r = spawnSync(exe, args, { cwd, env: { PATH: '' }, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
    return { code: r.status ?? -1, stdout: r.stdout, stderr: r.stderr };
  };

  it('is one file that needs no Node: an ELF executable far larger than the bundle it carries', () => {
    assert.equal(readFileSync(exe).subarray(0, 4).toString('latin1'), '\u007fELF');
    assert.ok(statSync(exe).size > statSync(path.join(REPO_ROOT, 'dist', 'sea', 'rtctl.cjs')).size);
  });

  const same: Array<[string, string[]]> = [
    ['lint (clean, warnings)', ['lint', 'policies/examples']],
    ['lint (errors)', ['lint', BAD]],
    ['lint -f json', ['lint', '-f', 'json', 'policies/examples', BAD]],
    ['lint -f sarif', ['lint', '-f', 'sarif', BAD]],
    ['lint -f github', ['lint', '-f', 'github', BAD]],
    ['lint usage error', ['lint', '--format', 'nope', 'x']],
    ['test', ['test', '--require-tests', 'policies/examples']],
    [
      'explain',
      [
        'explain',
        'policies/examples',
        '--namespace',
        'shop',
        '--labels',
        'app=web',
        '--exec',
        '/usr/bin/apt',
      ],
    ],
  ];
  for (const [name, args] of same) {
    it(`${name}: same stdout and exit code as the TypeScript CLI`, async () => {
      const ts = await runRtctl(args);
      const bin = sea(args);
      assert.equal(bin.code, ts.code, bin.stderr);
      assert.equal(bin.stdout, ts.stdout);
    });
  }

  it('compile --target all: byte-identical artifacts and the same summary', async () => {
    const a = path.join(dir, 'ts');
    const b = path.join(dir, 'sea');
    mkdirSync(a);
    mkdirSync(b);
    const ts = await runRtctl(['compile', EXAMPLES, '-o', 'build', '--target', 'all'], a);
    const bin = sea(['compile', EXAMPLES, '-o', 'build', '--target', 'all'], b);
    assert.equal(ts.code, 0, ts.stderr);
    assert.equal(bin.code, 0, bin.stderr);
    assert.equal(bin.stderr, ts.stderr);
    const files = listTree(path.join(a, 'build')).sort();
    assert.ok(files.length > 10, files.join(', '));
    assert.deepEqual(listTree(path.join(b, 'build')).sort(), files);
    for (const f of files) {
      assert.ok(readFileSync(path.join(b, 'build', f)).equals(readFileSync(path.join(a, 'build', f))), f);
    }
  });
});
