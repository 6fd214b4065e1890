// Reads what a push carries straight from git's object store: which paths a ref update changes, and the
// blobs of those paths in the pushed tree (git ls-tree and git cat-file; nothing is checked out). Runs in the
// repository git runs a hook in (the hook's working directory and GIT_DIR, including a pre-receive hook's
// quarantine directory, which git passes through the environment).
import { execFile, spawn } from 'node:child_process';

/** A path as git stores it (bytes as a latin1 string), decoded as UTF-8 for display. */
export function displayPath(raw: string): string {
  return Buffer.from(raw, 'latin1').toString('utf8');
}

/** A path of a pushed tree and the blob behind it. */
export interface TreeEntry {
  /** The path's bytes as a latin1 string (see displayPath). */
  path: string;
  /** Git file mode: 100644/100755 file, 120000 symbolic link, 160000 submodule. */
  mode: string;
  type: string;
  id: string;
}

/** A git command that failed: the command and git's own message. */
export class GitError extends Error {}

/** Bound on what one git command may print (names of changed paths, tree listings). */
const MAX_GIT_OUTPUT = 256 * 1024 * 1024;

function runGit(args: readonly string[], cwd: string | undefined): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    execFile(
      'git',
      args,
      { cwd, encoding: 'buffer', maxBuffer: MAX_GIT_OUTPUT },
      (err, stdout: Buffer, stderr: Buffer) => {
        if (err !== null) {
          const message = stderr.toString('utf8').trim() || err.message;
          reject(new GitError(`git ${args.join(' ')}: ${message}`));
        } else resolve(stdout);
      },
    );
  });
}

// Paths are kept as git stores them, byte for byte (as latin1 strings, which map each byte to one character),
// so a name that is not UTF-8 is still compared and found; `displayPath` decodes one for people.
function splitNul(b: Buffer): string[] {
  return b
    .toString('latin1')
    .split('\0')
    .filter((s) => s !== '');
}

/** True for the all-zero object name git uses for "no object" (a new ref, a deleted ref). */
export function isZeroId(id: string): boolean {
  return /^0+$/.test(id);
}

/** Reads git objects of the repository in `cwd` (undefined: the process's working directory). */
export interface GitTree {
  /** Paths that differ between two commits' trees (added, modified or deleted; renames as delete + add). */
  diffPaths(from: string, to: string): Promise<string[]>;
  /** Commits reachable from `tip` and from none of `exclude` (rev-list arguments such as `--all`). */
  listNewCommits(tip: string, exclude: readonly string[]): Promise<string[]>;
  /** Paths a commit changes against its first parent (every path of a root commit). */
  commitPaths(commit: string): Promise<string[]>;
  /** Every entry of a commit's tree, recursively. */
  listEntries(commit: string): Promise<TreeEntry[]>;
  /** Sizes of blobs. */
  blobSizes(ids: readonly string[]): Promise<Map<string, number>>;
  /** The bytes of one blob. */
  readBlob(id: string): Promise<Buffer>;
}

/** A GitTree over the repository in `cwd`. */
export function createGitTree(cwd?: string): GitTree {
  const diff = ['diff-tree', '-r', '-z', '--name-only', '--no-renames', '--no-commit-id'];
  return {
    async diffPaths(from, to) {
      return splitNul(await runGit([...diff, from, to, '--'], cwd));
    },
    async listNewCommits(tip, exclude) {
      const out = await runGit(['rev-list', tip, '--not', ...exclude], cwd);
      return out
        .toString('utf8')
        .split('\n')
        .filter((s) => s !== '');
    },
    async commitPaths(commit) {
      const parents = (await runGit(['rev-list', '--parents', '-n', '1', commit], cwd))
        .toString('utf8')
        .trim()
        .split(' ')
        .slice(1);
      const first = parents[0];
      return first === undefined
        ? splitNul(await runGit([...diff, '--root', commit, '--'], cwd))
        : splitNul(await runGit([...diff, first, commit, '--'], cwd));
    },
    async listEntries(commit) {
      const entries: TreeEntry[] = [];
      const out = await runGit(['ls-tree', '-r', '-z', '--full-tree', commit], cwd);
      for (const line of splitNul(out)) {
        const tab = line.indexOf('\t');
        const [mode = '', type = '', id = ''] = line.slice(0, tab).split(' ');
        entries.push({ path: line.slice(tab + 1), mode, type, id });
      }
      return entries;
    },
    async blobSizes(ids) {
      const sizes = new Map<string, number>();
      if (ids.length === 0) return sizes;
      const out = await runGitWithInput(
        ['cat-file', '--batch-check=%(objectname) %(objectsize)'],
        `${ids.join('\n')}\n`,
        cwd,
      );
      for (const line of out.toString('utf8').split('\n')) {
        const [id, size] = line.split(' ');
        if (id !== undefined && size !== undefined && /^\d+$/.test(size)) sizes.set(id, Number(size));
      }
      return sizes;
    },
    async readBlob(id) {
      return runGit(['cat-file', 'blob', id], cwd);
    },
  };
}

function runGitWithInput(args: readonly string[], input: string, cwd: string | undefined): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const child = spawn('git', args, { cwd, stdio: ['pipe', 'pipe', 'pipe'] });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on('data', (b: Buffer) => out.push(b));
    child.stderr.on('data', (b: Buffer) => err.push(b));
    child.on('error', (e) => reject(new GitError(`git ${args.join(' ')}: ${e.message}`)));
    child.on('close', (code) => {
      if (code === 0) resolve(Buffer.concat(out));
      else reject(new GitError(`git ${args.join(' ')}: ${Buffer.concat(err).toString('utf8').trim()}`));
    });
    child.stdin.end(input);
  });
}
