// Lints what one ref update of a push changes: the policy files (YAML, outside dot-folders, under the given
// prefixes) that differ between what the receiving side has and what is pushed, read from the pushed tree.
// A new ref's changes are those of the commits the receiving side does not have yet; a force push is judged
// by its trees, old against new; a deleted file or ref needs no check. Diagnostics name paths in the repository.
import { Code } from '../diagnostics/codes/code.js';
import type { Diagnostic } from '../diagnostics/diagnostic.js';
import type { EnforcementTarget } from '../enforcement/enforcement-table.js';
import { displayPath, type GitTree } from '../io/git-tree.js';
import { lintTexts, type SourceText } from '../lint.js';
import { decodeText } from '../parse/decode-text.js';
import { LineIndex } from '../parse/line-index.js';
import { isCreation, isDeletion, type RefUpdate } from './push-updates.js';

/** How to choose and lint the files of a push. */
export interface PushLintOptions {
  /** Path prefixes (directories or files, relative to the repository root); empty: everywhere. */
  prefixes: readonly string[];
  /** rev-list arguments naming what the receiving side already has (`--all` in pre-receive). */
  known: readonly string[];
  maxFileBytes: number;
  requireEnforced?: readonly EnforcementTarget[];
}

/** What was linted for one ref update. */
export interface PushLintResult {
  update: RefUpdate;
  /** Policy files linted, as named in diagnostics. */
  files: string[];
  sources: SourceText[];
  diagnostics: Diagnostic[];
  /** Why nothing was linted, when nothing was. */
  skipped?: 'deleted' | 'no-policy-change';
}

const YAML_FILE = /\.ya?ml$/i;

/** True for a path `rtctl lint <dir>` would read: YAML, no component starting with ".", under a prefix. */
export function isPolicyPath(p: string, prefixes: readonly string[]): boolean {
  if (!YAML_FILE.test(p)) return false;
  if (p.split('/').some((c) => c.startsWith('.'))) return false;
  if (prefixes.length === 0) return true;
  return prefixes.some((raw) => {
    const prefix = raw.replace(/^\.\/+/, '').replace(/\/+$/, '');
    return prefix === '' || p === prefix || p.startsWith(`${prefix}/`);
  });
}

function fileDiagnostic(
  code: string,
  file: string,
  message: string,
  severity: Diagnostic['severity'],
): Diagnostic {
  return { code, severity, message, file, pointer: '', document: 0 };
}

async function listChangedPaths(
  git: GitTree,
  update: RefUpdate,
  known: readonly string[],
): Promise<Set<string>> {
  if (!isCreation(update)) return new Set(await git.diffPaths(update.oldId, update.newId));
  const changed = new Set<string>();
  for (const commit of await git.listNewCommits(update.newId, known)) {
    for (const p of await git.commitPaths(commit)) changed.add(p);
  }
  return changed;
}

/** Lints the policy files one ref update changes, as the pushed tree has them. */
export async function lintRefUpdate(
  git: GitTree,
  update: RefUpdate,
  options: PushLintOptions,
): Promise<PushLintResult> {
  const result: PushLintResult = { update, files: [], sources: [], diagnostics: [] };
  if (isDeletion(update)) return { ...result, skipped: 'deleted' };
  const changed = [...(await listChangedPaths(git, update, options.known))].filter((p) =>
    isPolicyPath(displayPath(p), options.prefixes),
  );
  if (changed.length === 0) return { ...result, skipped: 'no-policy-change' };
  const wanted = new Set(changed);
  // Paths changed but absent from the pushed tree were deleted: nothing to check there.
  const entries = (await git.listEntries(update.newId)).filter((e) => wanted.has(e.path));
  entries.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  const blobs = entries.filter((e) => e.type === 'blob' && e.mode !== '120000');
  const sizes = await git.blobSizes(blobs.map((e) => e.id));
  for (const e of entries) {
    const file = displayPath(e.path);
    result.files.push(file);
    if (e.type !== 'blob' || e.mode === '120000') {
      result.diagnostics.push(
        fileDiagnostic(
          Code.readFailed,
          file,
          `${file} is ${e.mode === '120000' ? 'a symbolic link' : `a ${e.type}`} in the pushed tree; not read (a link's target is checked when it changes)`,
          'warning',
        ),
      );
      continue;
    }
    const size = sizes.get(e.id) ?? 0;
    if (size > options.maxFileBytes) {
      result.diagnostics.push(
        fileDiagnostic(
          Code.fileTooLarge,
          file,
          `file is ${size} bytes; the limit is ${options.maxFileBytes} bytes (--max-file-size)`,
          'error',
        ),
      );
      continue;
    }
    const bytes = await git.readBlob(e.id);
    const decoded = decodeText(bytes, options.maxFileBytes);
    if (decoded.ok) result.sources.push({ file, text: decoded.text });
    else {
      const prefix = new TextDecoder('utf-8').decode(bytes.subarray(0, decoded.offset));
      result.diagnostics.push({
        ...fileDiagnostic(decoded.finding.code, file, decoded.finding.message, 'error'),
        start: new LineIndex(prefix).positionAt(prefix.length),
      });
    }
  }
  const lint = lintTexts(
    result.sources,
    options.requireEnforced === undefined ? {} : { requireEnforced: [...options.requireEnforced] },
  );
  result.diagnostics.push(...lint.diagnostics);
  return result;
}
