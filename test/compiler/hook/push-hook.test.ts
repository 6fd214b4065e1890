// rtctl hook pre-receive and pre-push with real git: a bare repository whose pre-receive hook runs rtctl, real
// `git push` from a clone (good pushes accepted, bad refused with file:line:col diagnostics naming repository
// paths, unrelated files and unchanged bad files ignored, new branches, deletions, renames, force pushes),
// and a client-side pre-push hook. The stdin protocol parsers are tested table-driven.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { isPolicyPath } from '../../../compiler/hook/lint-push.js';
import { parsePrePush, parsePreReceive } from '../../../compiler/hook/push-updates.js';
import { COMPILER_FIXTURES, REPO_ROOT } from '../../support/paths.js';
import { hasCommand, requirePrereqs } from '../../support/prereq.js';
import { writeRtctlCommand } from '../../support/rtctl-on-path.js';
import { git, gitEnv, initRepo } from '../../support/scratch-git.js';

const BAD = readFileSync(path.join(COMPILER_FIXTURES, 'invalid', 'RT2003-unknown-field.yaml'), 'utf8');
const GOOD = readFileSync(
  path.join(REPO_ROOT, 'policies', 'examples', 'block-package-managers.yaml'),
  'utf8',
);
const A = 'a'.repeat(40);
const Z = '0'.repeat(40);

describe('push hook stdin protocols', () => {
  const cases: Array<[string, string, ReturnType<typeof parsePreReceive>]> = [
    [
      'pre-receive update',
      `${A} ${'b'.repeat(40)} refs/heads/main\n`,
      { ok: true, updates: [{ oldId: A, newId: 'b'.repeat(40), ref: 'refs/heads/main' }] },
    ],
    [
      'pre-receive new ref and SHA-256',
      `${Z} ${'c'.repeat(64)} refs/heads/x`,
      { ok: true, updates: [{ oldId: Z, newId: 'c'.repeat(64), ref: 'refs/heads/x' }] },
    ],
    ['pre-receive empty', '', { ok: true, updates: [] }],
    [
      'pre-receive two fields',
      `${A} refs/heads/main\n`,
      { ok: false, error: `line 1: expected "<old> <new> <ref>", got "${A} refs/heads/main"` },
    ],
    [
      'pre-receive option as id',
      `${A} --output=/tmp/x refs/heads/main\n`,
      { ok: false, error: 'line 1: "--output=/tmp/x" is not an object name (40 or 64 hexadecimal digits)' },
    ],
  ];
  for (const [name, text, expected] of cases)
    it(name, () => assert.deepEqual(parsePreReceive(text), expected));

  it('pre-push: local ref, local id, remote ref, remote id → old = remote id, new = local id', () => {
    assert.deepEqual(parsePrePush(`refs/heads/dev ${A} refs/heads/main ${Z}\n`), {
      ok: true,
      updates: [{ oldId: Z, newId: A, ref: 'refs/heads/main' }],
    });
    assert.equal(parsePrePush(`refs/heads/dev ${A} refs/heads/main\n`).ok, false);
  });

  const paths: Array<[string, string[], boolean]> = [
    ['policies/a.yaml', [], true],
    ['policies/a.yml', ['policies'], true],
    ['policies/a.json', [], false],
    ['.github/workflows/ci.yaml', [], false],
    ['policies/.hidden/a.yaml', [], false],
    ['docs/a.yaml', ['policies/'], false],
    ['policiesX/a.yaml', ['policies'], false],
    ['clusters/prod/ns.yaml', ['./clusters/prod/ns.yaml'], true],
  ];
  for (const [p, prefixes, expected] of paths) {
    it(`isPolicyPath(${p}, [${prefixes.join(', ')}]) is ${expected}`, () =>
      assert.equal(isPolicyPath(p, prefixes), expected));
  }
});

describe('rtctl hook with real git push (bare repository, pre-receive and pre-push hooks)', function () {
  this.timeout(120_000);
  let dir: string;
  let bare: string;
  let work: string;
  let rtctl: string;

  function write(repo: string, file: string, text: string): void {
    mkdirSync(path.dirname(path.join(repo, file)), { recursive: true });
    writeFileSync(path.join(repo, file), text);
  }
  function commit(repo: string, message: string): string {
    git(repo, 'add', '-A');
    git(repo, 'commit', '-q', '-m', message);
    return git(repo, 'rev-parse', 'HEAD').trim();
  }
  function push(repo: string, ...args: string[]) {
    const r = spawnSync('git', ['push', '--porcelain', 'origin', ...args], {
      cwd: repo,
      env: gitEnv(),
      encoding: 'utf8',
    });
    return { code: r.status, out: `${r.stdout}${r.stderr}` };
  }
  function remoteRef(ref: string): string {
    const r = spawnSync('git', ['rev-parse', '--verify', '-q', ref], {
      cwd: bare,
      env: gitEnv(),
      encoding: 'utf8',
    });
    return r.stdout.trim();
  }
  function installHook(repoHooks: string, name: string, args: string): void {
    mkdirSync(repoHooks, { recursive: true });
    writeFileSync(
      path.join(repoHooks, name),
      `#!/bin/sh\nexec ${JSON.stringify(rtctl)} hook ${name} ${args}\n`,
    );
    chmodSync(path.join(repoHooks, name), 0o755);
  }

  before(function () {
    requirePrereqs(this, [[hasCommand('git'), 'git']]);
    dir = mkdtempSync(path.join(os.tmpdir(), 'rtctl-push-'));
    rtctl = path.join(writeRtctlCommand(path.join(dir, 'bin')), 'rtctl');
    bare = initRepo(path.join(dir, 'remote.git'), true);
    work = path.join(dir, 'work');
    git(dir, 'clone', '-q', bare, work);
    git(work, 'checkout', '-q', '-b', 'main');
    // Before the hook exists: the remote already holds a bad policy, which later pushes do not touch.
    write(work, 'policies/good.yaml', GOOD);
    write(work, 'policies/legacy-bad.yaml', BAD);
    write(work, 'README.md', 'policies\n');
    commit(work, 'initial');
    assert.equal(push(work, 'main').code, 0);
    installHook(path.join(bare, 'hooks'), 'pre-receive', '--path policies');
  });
  after(() => {
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  });

  it('accepts a push that changes only unrelated files (the unchanged bad policy is not linted)', () => {
    write(work, 'README.md', 'policies, documented\n');
    write(work, 'docs/not-a-policy.yaml', 'services: {web: {image: nginx}}\n');
    const head = commit(work, 'docs');
    const r = push(work, 'main');
    assert.equal(r.code, 0, r.out);
    assert.equal(remoteRef('main'), head);
    assert.doesNotMatch(r.out, /legacy-bad|RT1010/);
  });

  it('refuses a bad policy with file:line:col of the repository path; the remote ref does not move', () => {
    const before = remoteRef('main');
    write(work, 'policies/team/bad.yaml', BAD);
    write(
      work,
      'policies/team/also-good.yaml',
      GOOD.replace('name: block-package-managers', 'name: also-good'),
    );
    commit(work, 'bad');
    const r = push(work, 'main');
    assert.notEqual(r.code, 0, r.out);
    assert.match(r.out, /remote: rtctl: refs\/heads\/main: 2 policy files changed: refused/);
    assert.match(
      r.out,
      /remote: policies\/team\/bad\.yaml:10:5: error RT2003 spec\.file\.matchPath: unknown field "matchPath"/,
    );
    assert.match(r.out, /pre-receive hook declined/);
    assert.equal(remoteRef('main'), before);
  });

  it('accepts the fix (the push carries both commits; the file as the pushed tree has it is what counts)', () => {
    write(work, 'policies/team/bad.yaml', GOOD.replace('name: block-package-managers', 'name: fixed'));
    const head = commit(work, 'fix');
    const r = push(work, 'main');
    assert.equal(r.code, 0, r.out);
    assert.match(r.out, /rtctl: refs\/heads\/main: 2 policy files changed: accepted/);
    assert.equal(remoteRef('main'), head);
  });

  it('a rename is a change of the new path: renaming the legacy bad policy is refused', () => {
    git(work, 'mv', 'policies/legacy-bad.yaml', 'policies/renamed.yaml');
    commit(work, 'rename');
    const r = push(work, 'main');
    assert.notEqual(r.code, 0, r.out);
    assert.match(r.out, /remote: policies\/renamed\.yaml:10:5: error RT2003/);
    git(work, 'reset', '-q', '--hard', 'HEAD~1');
  });

  it('deleting a bad policy is accepted (nothing left to check)', () => {
    git(work, 'rm', '-q', 'policies/legacy-bad.yaml');
    const head = commit(work, 'delete legacy');
    const r = push(work, 'main');
    assert.equal(r.code, 0, r.out);
    assert.equal(remoteRef('main'), head);
  });

  it('a new branch is judged by the commits the remote does not have; one at a known commit passes', () => {
    git(work, 'checkout', '-q', '-b', 'feature');
    const known = push(work, 'feature');
    assert.equal(known.code, 0, known.out);
    assert.equal(remoteRef('feature'), git(work, 'rev-parse', 'HEAD').trim());
    git(work, 'checkout', '-q', '-b', 'feature-bad');
    write(work, 'policies/new.yaml', BAD);
    commit(work, 'new bad');
    write(work, 'README.md', 'later commit, not touching the policy\n');
    commit(work, 'later');
    const r = push(work, 'feature-bad');
    assert.notEqual(r.code, 0, r.out);
    assert.match(r.out, /remote: policies\/new\.yaml:10:5: error RT2003/);
    assert.equal(remoteRef('feature-bad'), '');
    git(work, 'checkout', '-q', 'main');
  });

  it('deleting a branch is accepted', () => {
    const r = push(work, '--delete', 'feature');
    assert.equal(r.code, 0, r.out);
    assert.equal(remoteRef('feature'), '');
  });

  it('a force push is judged by its tree against the remote tip', () => {
    const tip = remoteRef('main');
    // Rewrite the last commit so it also breaks good.yaml: refused.
    write(work, 'policies/good.yaml', BAD);
    git(work, 'add', '-A');
    git(work, 'commit', '-q', '--amend', '-m', 'rewritten');
    const r = push(work, '--force', 'main');
    assert.notEqual(r.code, 0, r.out);
    assert.match(r.out, /remote: policies\/good\.yaml:10:5: error RT2003/);
    assert.equal(remoteRef('main'), tip);
    // Rewrite it again as a good change (a sibling of the remote tip, so still a force push): accepted.
    git(work, 'reset', '-q', '--hard', 'HEAD~1');
    git(work, 'rm', '-q', 'policies/legacy-bad.yaml');
    write(work, 'policies/good.yaml', GOOD.replace('name: block-package-managers', 'name: renamed-policy'));
    const head = commit(work, 'rewritten again');
    const again = push(work, '--force', 'main');
    assert.equal(again.code, 0, again.out);
    assert.match(again.out, /rtctl: refs\/heads\/main: 1 policy file changed: accepted/);
    assert.equal(remoteRef('main'), head);
  });

  it('pre-push (client side): refuses before anything is sent, with the diagnostics', () => {
    installHook(path.join(work, '.git', 'hooks'), 'pre-push', '--path policies "$@"');
    const before = remoteRef('main');
    write(work, 'policies/client.yaml', BAD);
    commit(work, 'client bad');
    const r = push(work, 'main');
    assert.notEqual(r.code, 0, r.out);
    assert.match(r.out, /^policies\/client\.yaml:10:5: error RT2003/m);
    assert.match(r.out, /failed to push some refs/);
    assert.equal(remoteRef('main'), before);
    write(work, 'policies/client.yaml', GOOD.replace('name: block-package-managers', 'name: client'));
    commit(work, 'client fix');
    const ok = push(work, 'main');
    assert.equal(ok.code, 0, ok.out);
    assert.equal(remoteRef('main'), git(work, 'rev-parse', 'HEAD').trim());
  });

  it('refuses stdin that is not the protocol with exit 2 and a message', () => {
    const r = spawnSync(rtctl, ['hook', 'pre-receive'], { cwd: bare, input: 'nonsense\n', encoding: 'utf8' });
    assert.equal(r.status, 2);
    assert.match(
      r.stderr,
      /rtctl hook pre-receive: stdin line 1: expected "<old> <new> <ref>", got "nonsense"; push refused/,
    );
  });
});
