// SARIF 2.1.0, as GitHub code scanning reads it: one run, every rtctl code as a reporting descriptor, each
// diagnostic a result with a physical location relative to the repository root.
import path from 'node:path';
import type { Diagnostic, Severity } from '../diagnostics/diagnostic.js';
import { ALL_CODES } from '../diagnostics/codes/index.js';

/** Options of the SARIF format. */
export interface SarifOptions {
  /** Directory that artifact URIs are relative to (the repository root); defaults to the working directory. */
  baseDir?: string;
  version: string;
}

function level(s: Severity): 'error' | 'warning' | 'note' {
  return s === 'error' ? 'error' : s === 'warning' ? 'warning' : 'note';
}

function uri(file: string, baseDir: string): string {
  const rel = path.relative(baseDir, path.resolve(baseDir, file));
  return rel.split(path.sep).map(encodeURIComponent).join('/');
}

/** Formats diagnostics as a SARIF 2.1.0 log. */
export function formatSarif(diagnostics: readonly Diagnostic[], options: SarifOptions): string {
  const baseDir = options.baseDir ?? process.cwd();
  const rules = ALL_CODES.map((c) => ({
    id: c.code,
    name: c.name,
    shortDescription: { text: c.summary },
    helpUri: `https://github.com/rtctl/rtctl/blob/main/docs/diagnostics.md#${c.code.toLowerCase()}`,
    defaultConfiguration: { level: level(c.severity) },
  }));
  const index = new Map(rules.map((r, i) => [r.id, i]));
  const results = diagnostics.map((d) => {
    const region =
      d.start === undefined
        ? undefined
        : {
            startLine: d.start.line,
            startColumn: d.start.column,
            ...(d.end !== undefined && d.end.offset >= d.start.offset
              ? { endLine: d.end.line, endColumn: d.end.column }
              : {}),
          };
    return {
      ruleId: d.code,
      ...(index.has(d.code) ? { ruleIndex: index.get(d.code) } : {}),
      level: level(d.severity),
      message: { text: d.message },
      locations: [
        {
          physicalLocation: {
            artifactLocation: { uri: uri(d.file, baseDir), uriBaseId: '%SRCROOT%' },
            ...(region === undefined ? {} : { region }),
          },
        },
      ],
      ...(d.related !== undefined && d.related.length > 0
        ? {
            relatedLocations: d.related.map((r, i) => ({
              id: i,
              message: { text: r.message },
              physicalLocation: {
                artifactLocation: { uri: uri(r.file, baseDir), uriBaseId: '%SRCROOT%' },
                ...(r.start === undefined
                  ? {}
                  : { region: { startLine: r.start.line, startColumn: r.start.column } }),
              },
            })),
          }
        : {}),
    };
  });
  const log = {
    $schema: 'https://json.schemastore.org/sarif-2.1.0.json',
    version: '2.1.0',
    runs: [
      {
        tool: {
          driver: {
            name: 'rtctl',
            version: options.version,
            informationUri: 'https://github.com/rtctl/rtctl',
            rules,
          },
        },
        results,
      },
    ],
  };
  return `${JSON.stringify(log, null, 2)}\n`;
}
