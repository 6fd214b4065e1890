// GitHub Actions workflow commands: one `::error file=…,line=…,col=…,title=RTnnnn::message` line per finding,
// which the runner turns into annotations on the pull request. Escaping follows the runner's rules: in the
// message `%`, CR and LF are percent-encoded; in property values `:` and `,` are too, so a file name or a
// message cannot end the command early or start a second one.
import path from 'node:path';
import type { Diagnostic, Severity } from '../diagnostics/diagnostic.js';

/** Options of the GitHub format. */
export interface GithubOptions {
  /** Directory that file properties are relative to (the workspace); defaults to the working directory. */
  baseDir?: string;
  /** Include `info` diagnostics (as `notice`). */
  verbose?: boolean;
}

// eslint-disable-next-line no-control-regex
const OTHER_CONTROL = /[\u0000-\u0009\u000b\u000c\u000e-\u001f\u007f-\u009f]/g;

/** Control characters other than CR and LF (an escape sequence in a runner's log) written as `\uNNNN`. */
function escapeOtherControl(s: string): string {
  return s.replace(OTHER_CONTROL, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/** Escapes the message part of a workflow command. */
export function escapeGithubData(s: string): string {
  return s.replace(/%/g, '%25').replace(/\r/g, '%0D').replace(/\n/g, '%0A');
}

/** Escapes a property value of a workflow command. */
export function escapeGithubProperty(s: string): string {
  return escapeGithubData(s).replace(/:/g, '%3A').replace(/,/g, '%2C');
}

function command(s: Severity): 'error' | 'warning' | 'notice' {
  return s === 'error' ? 'error' : s === 'warning' ? 'warning' : 'notice';
}

function relative(file: string, baseDir: string): string {
  if (file === '' || file.startsWith('<')) return file;
  return path.relative(baseDir, path.resolve(baseDir, file)).split(path.sep).join('/');
}

/** Formats diagnostics as GitHub workflow commands, one line each, and a summary line. */
export function formatGithub(diagnostics: readonly Diagnostic[], options: GithubOptions = {}): string {
  const baseDir = options.baseDir ?? process.cwd();
  const lines: string[] = [];
  for (const d of diagnostics) {
    if (d.severity === 'info' && options.verbose !== true) continue;
    const props = [`file=${escapeGithubProperty(escapeOtherControl(relative(d.file, baseDir)))}`];
    if (d.start !== undefined) {
      props.push(`line=${d.start.line}`, `col=${d.start.column}`);
      if (d.end !== undefined && d.end.offset > d.start.offset) {
        props.push(`endLine=${d.end.line}`);
        if (d.end.line === d.start.line) props.push(`endColumn=${d.end.column}`);
      }
    }
    props.push(`title=${escapeGithubProperty(d.code)}`);
    const related = (d.related ?? []).map((r) => {
      const file = relative(r.file, baseDir);
      const at = r.start === undefined ? file : `${file}:${r.start.line}:${r.start.column}`;
      return `\n${at}: ${r.message}`;
    });
    lines.push(
      `::${command(d.severity)} ${props.join(',')}::${escapeGithubData(escapeOtherControl(d.message + related.join('')))}`,
    );
  }
  const errors = diagnostics.filter((d) => d.severity === 'error').length;
  const warnings = diagnostics.filter((d) => d.severity === 'warning').length;
  lines.push(`${errors} error${errors === 1 ? '' : 's'}, ${warnings} warning${warnings === 1 ? '' : 's'}`);
  return `${lines.join('\n')}\n`;
}
