// Reads policy files from paths given on the command line: files as named, directories searched recursively
// for .yaml and .yml files in sorted order. Symbolic links are followed to regular files and directories
// (a Kubernetes ConfigMap volume is `p.yaml -> ..data/p.yaml`), each directory once (loops end there), to a
// bounded depth; names starting with "." are passed over (a volume's `..data` internals, `.git`). A subfolder
// that cannot be read is reported by its own name and the walk goes on. Bytes are decoded strictly; what cannot
// be read becomes a diagnostic. The enforcer's directory source reads through here too.
import { readdir, readFile, realpath, stat } from 'node:fs/promises';
import path from 'node:path';
import { Code } from '../diagnostics/codes/code.js';
import type { Diagnostic } from '../diagnostics/diagnostic.js';
import { decodeText, DEFAULT_MAX_FILE_BYTES } from '../parse/decode-text.js';
import { LineIndex } from '../parse/line-index.js';
import type { SourceText } from '../lint.js';

/** Sources read, diagnostics for what could not be read, and whether an I/O failure happened. */
export interface ReadResult {
  sources: SourceText[];
  diagnostics: Diagnostic[];
  ioFailed: boolean;
}

const YAML_FILE = /\.ya?ml$/i;
/** Directory levels followed below a named directory. */
const MAX_WALK_DEPTH = 32;

function errnoOf(err: unknown): string {
  return (err as NodeJS.ErrnoException).code ?? String(err);
}

interface Walk {
  files: string[];
  diagnostics: Diagnostic[];
  /** Real paths of the directories entered, so a link back up is not followed again. */
  visited: Set<string>;
  ioFailed: boolean;
}

async function listYamlFiles(dir: string, depth: number, walk: Walk): Promise<void> {
  let real: string;
  let entries;
  try {
    real = await realpath(dir);
    if (walk.visited.has(real)) return;
    walk.visited.add(real);
    entries = await readdir(dir, { withFileTypes: true });
  } catch (err) {
    walk.ioFailed = true;
    walk.diagnostics.push(
      fileDiagnostic(Code.readFailed, dir, `cannot read directory ${dir}: ${errnoOf(err)}`),
    );
    return;
  }
  entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  for (const e of entries) {
    if (e.name.startsWith('.')) continue;
    const p = path.join(dir, e.name);
    let isDirectory = e.isDirectory();
    let isFile = e.isFile();
    if (e.isSymbolicLink()) {
      try {
        const target = await stat(p);
        isDirectory = target.isDirectory();
        isFile = target.isFile();
      } catch (err) {
        // A dangling link named like a policy file is a file the user expects read.
        if (YAML_FILE.test(e.name)) {
          walk.ioFailed = true;
          walk.diagnostics.push(
            fileDiagnostic(
              Code.readFailed,
              p,
              `cannot read ${p}: symbolic link to nothing readable (${errnoOf(err)})`,
            ),
          );
        }
        continue;
      }
    }
    if (isDirectory) {
      if (depth >= MAX_WALK_DEPTH) {
        walk.diagnostics.push(
          fileDiagnostic(
            Code.readFailed,
            p,
            `${p} is more than ${MAX_WALK_DEPTH} directories deep; not read`,
            'warning',
          ),
        );
        continue;
      }
      await listYamlFiles(p, depth + 1, walk);
    } else if (isFile && YAML_FILE.test(e.name)) walk.files.push(p);
  }
}

function fileDiagnostic(
  code: string,
  file: string,
  message: string,
  severity: Diagnostic['severity'] = 'error',
): Diagnostic {
  return { code, severity, message, file, pointer: '', document: 0 };
}

/** Reads every named file and every YAML file below every named directory. */
export async function readSources(
  paths: readonly string[],
  maxFileBytes = DEFAULT_MAX_FILE_BYTES,
): Promise<ReadResult> {
  const files: string[] = [];
  const diagnostics: Diagnostic[] = [];
  let ioFailed = false;
  for (const p of paths) {
    try {
      const s = await stat(p);
      if (s.isDirectory()) {
        const walk: Walk = { files: [], diagnostics: [], visited: new Set(), ioFailed: false };
        await listYamlFiles(p, 0, walk);
        diagnostics.push(...walk.diagnostics);
        if (walk.ioFailed) ioFailed = true;
        if (walk.files.length === 0)
          diagnostics.push(
            fileDiagnostic(
              Code.noPolicyFiles,
              p,
              `directory ${p} holds no .yaml or .yml file that can be read; nothing was checked`,
            ),
          );
        files.push(...walk.files);
      } else if (s.isFile()) {
        files.push(p);
      } else {
        ioFailed = true;
        diagnostics.push(fileDiagnostic(Code.readFailed, p, `${p} is neither a file nor a directory`));
      }
    } catch (err) {
      ioFailed = true;
      diagnostics.push(fileDiagnostic(Code.readFailed, p, `cannot read ${p}: ${errnoOf(err)}`));
    }
  }
  const sources: SourceText[] = [];
  for (const file of [...new Set(files)]) {
    let bytes: Buffer;
    try {
      const s = await stat(file);
      if (s.size > maxFileBytes) {
        diagnostics.push(
          fileDiagnostic(
            Code.fileTooLarge,
            file,
            `file is ${s.size} bytes; the limit is ${maxFileBytes} bytes (--max-file-size)`,
          ),
        );
        continue;
      }
      bytes = await readFile(file);
    } catch (err) {
      ioFailed = true;
      diagnostics.push(fileDiagnostic(Code.readFailed, file, `cannot read ${file}: ${errnoOf(err)}`));
      continue;
    }
    const decoded = decodeText(bytes, maxFileBytes);
    if (decoded.ok) {
      sources.push({ file, text: decoded.text });
    } else {
      // Position of an invalid byte: decode the valid prefix to count lines.
      const prefix = new TextDecoder('utf-8').decode(bytes.subarray(0, decoded.offset));
      const start = new LineIndex(prefix).positionAt(prefix.length);
      diagnostics.push({ ...fileDiagnostic(decoded.finding.code, file, decoded.finding.message), start });
    }
  }
  return { sources, diagnostics, ioFailed };
}

/**
 * RT1013 when the named paths held no document at all and nothing else explains it (every file empty or only
 * comments): a run that checked nothing must not look like a clean one.
 */
export function reportNothingChecked(
  paths: readonly string[],
  documents: number,
  diagnostics: readonly Diagnostic[],
): Diagnostic | undefined {
  if (documents > 0 || diagnostics.some((d) => d.severity === 'error')) return undefined;
  const named = paths.join(', ');
  return fileDiagnostic(
    Code.noPolicyFiles,
    paths[0] ?? '',
    `${named} ${paths.length === 1 ? 'holds' : 'hold'} no YAML document; nothing was checked`,
  );
}
