// The composite action (action.yml): its lint step's shell script, run by real bash with the environment a
// GitHub runner gives it (inputs as RTCTL_* variables, GITHUB_OUTPUT, the rtctl entry point). No GitHub runner
// exists here: the test sets those variables itself and does not run the setup-node or install steps.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parse } from 'yaml';
import { COMPILER_FIXTURES, REPO_ROOT } from '../support/paths.js';
import { RTCTL_ENTRY, TSX_LOADER_URL } from '../support/rtctl-on-path.js';

interface ActionStep {
  id?: string;
  run?: string;
  shell?: string;
  env?: Record<string, string>;
}
interface Action {
  inputs: Record<string, { default?: string }>;
  runs: { using: string; steps: ActionStep[] };
}

const action = parse(readFileSync(path.join(REPO_ROOT, 'action.yml'), 'utf8')) as Action;
const lintStep = action.runs.steps.find((s) => s.id === 'lint');
const good = readFileSync(
  path.join(REPO_ROOT, 'policies', 'examples', 'block-package-managers.yaml'),
  'utf8',
);
const bad = readFileSync(path.join(COMPILER_FIXTURES, 'invalid', 'RT2003-unknown-field.yaml'), 'utf8');

/** Runs the lint step in `workspace` with the inputs given (defaults from action.yml otherwise). */
function runLintStep(workspace: string, inputs: Record<string, string>) {
  assert.ok(lintStep?.run !== undefined);
  const outputFile = path.join(workspace, '..', 'github-output');
  writeFileSync(outputFile, '');
  const env: Record<string, string> = {
    PATH: process.env['PATH'] ?? '',
    HOME: os.tmpdir(),
    GITHUB_OUTPUT: outputFile,
    RTCTL_CLI: RTCTL_ENTRY,
    NODE_OPTIONS: `--import=${TSX_LOADER_URL}`,
  };
  for (const [variable, expression] of Object.entries(lintStep.env ?? {})) {
    const input = /^\$\{\{ inputs\.([a-z-]+) \}\}$/.exec(expression)?.[1];
    assert.ok(input !== undefined, `${variable}: ${expression}`);
    env[variable] = inputs[input] ?? action.inputs[input]?.default ?? '';
  }
  const r = spawnSync('bash', ['-e', '-c', lintStep.run], { cwd: workspace, env, encoding: 'utf8' });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr, outputs: readFileSync(outputFile, 'utf8') };
}

describe('action.yml (composite action; lint step under real bash, runner variables set by the test)', function () {
  this.timeout(60_000);
  let dir: string;
  let workspace: string;
  before(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'rtctl-action-'));
    workspace = path.join(dir, 'ws');
    mkdirSync(path.join(workspace, 'policies'), { recursive: true });
    mkdirSync(path.join(workspace, 'other policies'), { recursive: true });
    writeFileSync(path.join(workspace, 'policies', 'good.yaml'), good);
    writeFileSync(path.join(workspace, 'other policies', 'bad.yaml'), bad);
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('is a composite action whose every run step names its shell and splices no input into a script', () => {
    assert.equal(action.runs.using, 'composite');
    for (const step of action.runs.steps.filter((s) => s.run !== undefined)) {
      assert.equal(step.shell, 'bash');
      assert.doesNotMatch(step.run ?? '', /\$\{\{/);
    }
    assert.deepEqual(Object.keys(action.inputs).sort(), [
      'format',
      'max-warnings',
      'node-version',
      'output',
      'paths',
      'require-enforced',
    ]);
  });

  it('clean paths: exit 0 and no annotation', () => {
    const r = runLintStep(workspace, { paths: 'policies' });
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.doesNotMatch(r.stdout, /^::error/m);
    assert.match(r.stdout, /0 errors/);
  });

  it('a bad policy: exit 1 and an ::error annotation at its line, paths with spaces kept whole', () => {
    const r = runLintStep(workspace, { paths: 'policies\nother policies' });
    assert.equal(r.code, 1, r.stdout + r.stderr);
    assert.match(
      r.stdout,
      /^::error file=other policies\/bad\.yaml,line=10,col=5,.*title=RT2003::spec\.file\.matchPath: unknown field/m,
    );
  });

  it('format sarif: writes rtctl.sarif, names it as the step output and hints at upload-sarif', () => {
    const r = runLintStep(workspace, { paths: 'other policies', format: 'sarif' });
    assert.equal(r.code, 1, r.stdout + r.stderr);
    assert.match(r.outputs, /^report=rtctl\.sarif$/m);
    const sarif = JSON.parse(readFileSync(path.join(workspace, 'rtctl.sarif'), 'utf8')) as {
      runs: Array<{ results: Array<{ ruleId: string }> }>;
    };
    assert.deepEqual(
      sarif.runs[0]?.results.map((x) => x.ruleId),
      ['RT2003'],
    );
    assert.match(
      r.stdout,
      /^::notice title=rtctl::SARIF written to rtctl\.sarif; upload it with github\/codeql-action\/upload-sarif/m,
    );
  });

  it('max-warnings and require-enforced reach rtctl', () => {
    const strict = runLintStep(workspace, { paths: 'policies', 'require-enforced': 'fanotify' });
    const loose = runLintStep(workspace, { paths: 'policies', 'max-warnings': '0' });
    // block-package-managers.yaml is enforced everywhere: both pass; a bad target name is a usage error.
    assert.equal(strict.code, 0, strict.stdout + strict.stderr);
    assert.equal(loose.code, 0, loose.stdout + loose.stderr);
    const wrong = runLintStep(workspace, { paths: 'policies', 'require-enforced': 'ebpf' });
    assert.equal(wrong.code, 2, wrong.stdout + wrong.stderr);
  });
});
