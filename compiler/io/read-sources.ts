// Reads policy files from paths given on the command line: files as named, directories searched recursively
// for .yaml and .yml files in sorted order. Bytes are decoded strictly; what cannot be read becomes a diagnostic.
import { Code } from '../diagnostics/codes/code.js';
import { readdir, readFile, stat } from 'node:fs/promises';
import path from 'node:path';
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

async function listYamlFiles(dir: string): Promise<string[]> {
  const out: string[] = [];
  const entries = await readdir(dir, { withFileTypes: true });
  entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  for (const e of entries) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) out.push(...(await listYamlFiles(p)));
    else if (e.isFile() && YAML_FILE.test(e.name)) out.push(p);
  }
  return out;
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
        const found = await listYamlFiles(p);
        if (found.length === 0)
          diagnostics.push(
            fileDiagnostic(Code.noPolicyFiles, p, `directory ${p} holds no .yaml or .yml files`, 'warning'),
          );
        files.push(...found);
      } else if (s.isFile()) {
        files.push(p);
      } else {
        ioFailed = true;
        diagnostics.push(fileDiagnostic(Code.readFailed, p, `${p} is neither a file nor a directory`));
      }
    } catch (err) {
      ioFailed = true;
      diagnostics.push(
        fileDiagnostic(
          Code.readFailed,
          p,
          `cannot read ${p}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`,
        ),
      );
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
      diagnostics.push(
        fileDiagnostic(
          Code.readFailed,
          file,
          `cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`,
        ),
      );
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
