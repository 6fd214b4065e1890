// `rtctl hook pre-receive` and `rtctl hook pre-push`: git hooks that lint the policy files a push changes and
// refuse the push on errors. Git gives the updates on stdin; the files are read from git's objects, never
// checked out. Exit 0 accepts the push; 1 refuses it (findings); 2 refuses it too (bad input, git failed).
import { Option, type Command } from 'commander';
import type { Diagnostic } from '../diagnostics/diagnostic.js';
import { parseEnforcementTargets } from '../enforcement/parse-enforcement-targets.js';
import type { EnforcementTarget } from '../enforcement/enforcement-table.js';
import { formatGithub } from '../format/format-github.js';
import { formatJson } from '../format/format-json.js';
import { formatText } from '../format/format-text.js';
import { createGitTree, GitError } from '../io/git-tree.js';
import { DEFAULT_MAX_FILE_BYTES } from '../parse/decode-text.js';
import { lintRefUpdate, type PushLintResult } from './lint-push.js';
import { parsePrePush, parsePreReceive, type ParseUpdatesResult } from './push-updates.js';

const FORMATS = ['text', 'json', 'github'] as const;
type Format = (typeof FORMATS)[number];

interface HookOptions {
  path: string[];
  format: Format;
  maxWarnings?: number;
  maxFileSize: number;
  requireEnforced?: EnforcementTarget[];
}

/** Bound on the hook's stdin: one line per ref, far more refs than any push. */
const MAX_STDIN_BYTES = 16 * 1024 * 1024;

async function readStdin(): Promise<string | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of process.stdin) {
    const b = chunk as Buffer;
    size += b.length;
    if (size > MAX_STDIN_BYTES) return undefined;
    chunks.push(b);
  }
  return Buffer.concat(chunks).toString('utf8');
}

function wholeNumber(name: string) {
  return (v: string): number => {
    if (!/^\d+$/.test(v)) throw new Error(`${name} expects a whole number, got ${JSON.stringify(v)}`);
    return Number(v);
  };
}

function render(format: Format, result: PushLintResult): string {
  const { diagnostics, sources } = result;
  switch (format) {
    case 'json':
      return formatJson(diagnostics.filter((d) => d.severity !== 'info'));
    case 'github':
      return formatGithub(diagnostics);
    case 'text':
      return formatText(diagnostics, { texts: new Map(sources.map((s) => [s.file, s.text])), color: false });
  }
}

function count(diagnostics: readonly Diagnostic[], severity: Diagnostic['severity']): number {
  return diagnostics.filter((d) => d.severity === severity).length;
}

async function runHook(
  name: string,
  parse: (text: string) => ParseUpdatesResult,
  known: string[],
  opts: HookOptions,
) {
  const text = await readStdin();
  if (text === undefined) {
    process.stderr.write(`rtctl hook ${name}: more than ${MAX_STDIN_BYTES} bytes on stdin; push refused\n`);
    process.exitCode = 2;
    return;
  }
  const parsed = parse(text);
  if (!parsed.ok) {
    process.stderr.write(`rtctl hook ${name}: stdin ${parsed.error}; push refused\n`);
    process.exitCode = 2;
    return;
  }
  const git = createGitTree();
  let refused = false;
  for (const update of parsed.updates) {
    let result: PushLintResult;
    try {
      result = await lintRefUpdate(git, update, {
        prefixes: opts.path,
        known,
        maxFileBytes: opts.maxFileSize,
        ...(opts.requireEnforced === undefined ? {} : { requireEnforced: opts.requireEnforced }),
      });
    } catch (err) {
      if (!(err instanceof GitError)) throw err;
      process.stderr.write(`rtctl hook ${name}: ${update.ref}: ${err.message}; push refused\n`);
      process.exitCode = 2;
      return;
    }
    if (result.skipped !== undefined) continue;
    const errors = count(result.diagnostics, 'error');
    const warnings = count(result.diagnostics, 'warning');
    const fails = errors > 0 || (opts.maxWarnings !== undefined && warnings > opts.maxWarnings);
    const n = result.files.length;
    process.stderr.write(
      `rtctl: ${update.ref}: ${n} policy file${n === 1 ? '' : 's'} changed: ${fails ? 'refused' : 'accepted'}\n`,
    );
    if (errors + warnings > 0 || opts.format !== 'text') process.stderr.write(render(opts.format, result));
    if (fails) refused = true;
  }
  process.exitCode = refused ? 1 : 0;
}

function addCommonOptions(command: Command): Command {
  return command
    .option(
      '--path <prefix>',
      'only policy files under this directory or at this path of the repository (repeatable; default: every .yaml/.yml outside dot-folders)',
      (v: string, acc: string[]) => [...acc, v],
      [] as string[],
    )
    .addOption(new Option('-f, --format <format>', 'output format').choices(FORMATS).default('text'))
    .option(
      '--max-warnings <n>',
      'refuse when there are more warnings than this',
      wholeNumber('--max-warnings'),
    )
    .option(
      '--max-file-size <bytes>',
      'largest file read',
      wholeNumber('--max-file-size'),
      DEFAULT_MAX_FILE_BYTES,
    )
    .option(
      '--require-enforced <targets>',
      'comma-separated targets on which every rule must be enforced (docs/enforcement.md)',
      parseEnforcementTargets,
    );
}

/** Registers `rtctl hook` on the root program. */
export function registerHookCommand(program: Command): void {
  const hook = program
    .command('hook')
    .description('git hooks: lint the policy files a push changes, refuse it on errors (docs/ci.md)');
  addCommonOptions(
    hook
      .command('pre-receive')
      .description('server side: reads "<old> <new> <ref>" lines on stdin (install as hooks/pre-receive)'),
  ).action(async (opts: HookOptions) => runHook('pre-receive', parsePreReceive, ['--all'], opts));
  addCommonOptions(
    hook
      .command('pre-push')
      .description('client side: reads git\'s pre-push lines on stdin (install as .git/hooks/pre-push "$@")')
      .argument('[remote]', 'name of the remote (git passes it)')
      .argument('[url]', 'URL of the remote (git passes it)'),
  ).action(async (remote: string | undefined, _url: string | undefined, opts: HookOptions) =>
    runHook(
      'pre-push',
      parsePrePush,
      // What the remote already has, as far as this repository knows: its remote-tracking refs.
      [remote !== undefined && /^[A-Za-z0-9._-]+$/.test(remote) ? `--remotes=${remote}` : '--remotes'],
      opts,
    ),
  );
}
