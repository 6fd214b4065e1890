// Real git repositories for tests of the git-facing tools (pre-commit, push hooks): a snapshot of this
// checkout's working tree as a one-commit repository, scratch repositories, and a git runner that fails loudly.
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { REPO_ROOT } from './paths.js';

/** An environment for git in tests: a fixed identity, no user or system configuration. */
export function gitEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  return {
    ...process.env,
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_CONFIG_GLOBAL: '/dev/null',
    GIT_AUTHOR_NAME: 'rtctl test',
    GIT_AUTHOR_EMAIL: 'test@rtctl.invalid',
    GIT_COMMITTER_NAME: 'rtctl test',
    GIT_COMMITTER_EMAIL: 'test@rtctl.invalid',
    ...extra,
  };
}

/** Runs git in `cwd` and returns its stdout; throws with stderr when git fails. */
export function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', args, {
    cwd,
    env: gitEnv(),
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}

/** Creates a repository in `dir` on branch main. */
export function initRepo(dir: string, bare = false): string {
  mkdirSync(dir, { recursive: true });
  git(dir, 'init', '-q', '-b', 'main', ...(bare ? ['--bare'] : []));
  return dir;
}

/**
 * Copies this checkout's working tree (tracked and untracked files that git does not ignore) into a new
 * repository at `dir` with one commit, and returns that commit: what a user would get cloning these files.
 */
export function snapshotWorkingTree(dir: string): string {
  initRepo(dir);
  const files = git(REPO_ROOT, 'ls-files', '-z', '--cached', '--others', '--exclude-standard')
    .split('\0')
    .filter((f) => f !== '');
  for (const f of files) {
    const to = path.join(dir, f);
    mkdirSync(path.dirname(to), { recursive: true });
    try {
      copyFileSync(path.join(REPO_ROOT, f), to);
    } catch (err) {
      // A file deleted in the working tree but still in the index.
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    }
  }
  git(dir, 'add', '-A');
  git(dir, 'commit', '-q', '-m', 'snapshot');
  return git(dir, 'rev-parse', 'HEAD').trim();
}
