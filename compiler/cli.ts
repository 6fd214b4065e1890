// Subcommands of the compiler: lint, compile, explain. I/O lives here; everything it calls is pure.
import { Command, Option } from 'commander';
import path from 'node:path';
import { resolveTargets, compile } from './compile.js';
import { BACKENDS } from './backends/index.js';
import type { Diagnostic } from './diagnostics/diagnostic.js';
import { registerExplainCommand } from './explain/cli.js';
import { registerHookCommand } from './hook/cli.js';
import { registerTestCommand } from './test-runner/cli.js';
import { formatGithub } from './format/format-github.js';
import { formatJson } from './format/format-json.js';
import { formatJunit } from './format/format-junit.js';
import { formatSarif } from './format/format-sarif.js';
import { formatText } from './format/format-text.js';
import { createProgress } from './io/progress.js';
import { listStaleArtifacts } from './io/prune-output.js';
import { readSources, reportNothingChecked } from './io/read-sources.js';
import { OutputRefusedError, writeArtifacts } from './io/write-artifacts.js';
import { lintTexts } from './lint.js';
import type { SourceText } from './lint.js';
import { ENFORCEMENT_TARGETS, type EnforcementTarget } from './enforcement/enforcement-table.js';
import { DEFAULT_MAX_FILE_BYTES } from './parse/decode-text.js';
import { parseEnforcementTargets } from './enforcement/parse-enforcement-targets.js';
import { RTCTL_VERSION as VERSION } from './model/version.js';

const FORMATS = ['text', 'json', 'sarif', 'junit', 'github'] as const;
type Format = (typeof FORMATS)[number];

function parseInteger(name: string) {
  return (v: string): number => {
    if (!/^\d+$/.test(v)) throw new Error(`${name} expects a whole number, got ${JSON.stringify(v)}`);
    return Number(v);
  };
}

function render(
  format: Format,
  diagnostics: readonly Diagnostic[],
  sources: readonly SourceText[],
  files: readonly string[],
  verbose: boolean,
): string {
  switch (format) {
    case 'json':
      return formatJson(diagnostics.filter((d) => verbose || d.severity !== 'info'));
    case 'sarif':
      return formatSarif(
        diagnostics.filter((d) => d.severity !== 'info'),
        { version: VERSION },
      );
    case 'junit':
      return formatJunit(diagnostics, files);
    case 'github':
      return formatGithub(diagnostics, { verbose });
    case 'text':
      return formatText(diagnostics, {
        texts: new Map(sources.map((s) => [s.file, s.text])),
        verbose,
        color: process.stdout.isTTY === true && process.env['NO_COLOR'] === undefined,
      });
  }
}

const REQUIRE_ENFORCED_FLAG = '--require-enforced <targets>';
const REQUIRE_ENFORCED_HELP = `comma-separated targets (${ENFORCEMENT_TARGETS.map((t) => t.target).join(', ')}) on which every rule must be enforced: what they do not enforce is an error (docs/enforcement.md)`;

function countBy(diagnostics: readonly Diagnostic[], severity: Diagnostic['severity']): number {
  return diagnostics.filter((d) => d.severity === severity).length;
}

/** Registers the compiler subcommands on the root program. */
export function registerCompilerCommands(program: Command): void {
  program
    .command('lint')
    .description(
      'check policy files and node-settings manifests; exit 0 clean, 1 findings, 2 usage or I/O failure',
    )
    .argument('<paths...>', 'files or directories (searched for .yaml/.yml)')
    .addOption(new Option('-f, --format <format>', 'output format').choices(FORMATS).default('text'))
    .option(
      '--max-warnings <n>',
      'fail when there are more warnings than this',
      parseInteger('--max-warnings'),
    )
    .option(
      '--max-file-size <bytes>',
      'largest file read',
      parseInteger('--max-file-size'),
      DEFAULT_MAX_FILE_BYTES,
    )
    .option('-o, --output <file>', 'write the report to a file instead of stdout')
    .option('--verbose', 'also show info diagnostics (documents passed over)', false)
    .option(REQUIRE_ENFORCED_FLAG, REQUIRE_ENFORCED_HELP, parseEnforcementTargets)
    .action(
      async (
        paths: string[],
        opts: {
          format: Format;
          maxWarnings?: number;
          maxFileSize: number;
          output?: string;
          verbose: boolean;
          requireEnforced?: EnforcementTarget[];
        },
      ) => {
        const read = await readSources(paths, opts.maxFileSize);
        const progress = createProgress('lint', read.sources.length);
        const result = lintTexts(read.sources, {
          ...(progress === undefined ? {} : { onFile: progress }),
          ...(opts.requireEnforced === undefined ? {} : { requireEnforced: opts.requireEnforced }),
        });
        const diagnostics = [...read.diagnostics, ...result.diagnostics];
        const nothing = reportNothingChecked(paths, result.stats.documents, diagnostics);
        if (nothing !== undefined) diagnostics.push(nothing);
        const files = [...read.sources.map((s) => s.file), ...read.diagnostics.map((d) => d.file)];
        const report = render(opts.format, diagnostics, read.sources, [...new Set(files)], opts.verbose);
        if (opts.output !== undefined) {
          const { writeFile } = await import('node:fs/promises');
          await writeFile(opts.output, report);
        } else process.stdout.write(report);
        const warnings = countBy(diagnostics, 'warning');
        if (read.ioFailed) process.exitCode = 2;
        else if (
          countBy(diagnostics, 'error') > 0 ||
          (opts.maxWarnings !== undefined && warnings > opts.maxWarnings)
        )
          process.exitCode = 1;
        else process.exitCode = 0;
      },
    );

  program
    .command('compile')
    .description(
      'compile policies into CRDs and manifests (and node artifacts with --target); nothing is written when there are errors',
    )
    .argument('<paths...>', 'files or directories (searched for .yaml/.yml)')
    .requiredOption('-o, --out <dir>', 'output directory')
    .option(
      '-t, --target <targets>',
      `comma-separated targets: ${[...BACKENDS.map((b) => b.name), 'all'].join(', ')}`,
      'crd',
    )
    .option(
      '--max-file-size <bytes>',
      'largest file read',
      parseInteger('--max-file-size'),
      DEFAULT_MAX_FILE_BYTES,
    )
    .addOption(new Option('-f, --format <format>', 'diagnostics format').choices(FORMATS).default('text'))
    .option(REQUIRE_ENFORCED_FLAG, REQUIRE_ENFORCED_HELP, parseEnforcementTargets)
    .action(
      async (
        paths: string[],
        opts: {
          out: string;
          target: string;
          maxFileSize: number;
          format: Format;
          requireEnforced?: EnforcementTarget[];
        },
      ) => {
        const targets = resolveTargets(
          opts.target
            .split(',')
            .map((t) => t.trim())
            .filter((t) => t !== ''),
        );
        const read = await readSources(paths, opts.maxFileSize);
        const progress = createProgress('compile', read.sources.length);
        const result = compile(read.sources, {
          targets,
          ...(progress === undefined ? {} : { onFile: progress }),
          ...(opts.requireEnforced === undefined ? {} : { requireEnforced: opts.requireEnforced }),
        });
        const diagnostics = [...read.diagnostics, ...result.diagnostics];
        const nothing = reportNothingChecked(paths, result.lint.stats.documents, diagnostics);
        if (nothing !== undefined) diagnostics.push(nothing);
        const errors = countBy(diagnostics, 'error');
        if (diagnostics.some((d) => d.severity !== 'info') || opts.format !== 'text') {
          const files = [
            ...new Set([...read.sources.map((s) => s.file), ...read.diagnostics.map((d) => d.file)]),
          ];
          const out = render(opts.format, diagnostics, read.sources, files, false);
          (opts.format === 'text' ? process.stderr : process.stdout).write(out);
        }
        if (read.ioFailed) {
          process.exitCode = 2;
          return;
        }
        if (errors > 0 || result.artifacts.length === 0) {
          process.stderr.write(
            `rtctl: ${errors} error${errors === 1 ? '' : 's'}; nothing written to ${opts.out}\n`,
          );
          process.exitCode = 1;
          return;
        }
        let removed: string[];
        try {
          removed = await listStaleArtifacts(opts.out, new Set(result.artifacts.map((a) => a.path)));
          await writeArtifacts(opts.out, result.artifacts, removed);
        } catch (err) {
          process.stderr.write(
            err instanceof OutputRefusedError
              ? `rtctl: ${err.message}; nothing written to ${opts.out}\n`
              : `rtctl: cannot write ${opts.out}: ${String((err as NodeJS.ErrnoException).code ?? err)}\n`,
          );
          process.exitCode = 2;
          return;
        }
        const s = result.lint.stats;
        const rules = result.ruleSet.policies.reduce((n, p) => n + p.rules.length, 0);
        process.stderr.write(
          `compiled ${s.policies} polic${s.policies === 1 ? 'y' : 'ies'} (${rules} rules) from ${s.files} file${s.files === 1 ? '' : 's'}: ` +
            `${result.artifacts.length} artifacts for ${targets.join(', ')} in ${path.normalize(opts.out)}` +
            `${removed.length > 0 ? `, ${removed.length} stale removed` : ''}; ${countBy(diagnostics, 'warning')} warnings\n`,
        );
        process.exitCode = 0;
      },
    );

  registerExplainCommand(program);
  registerHookCommand(program);
  registerTestCommand(program);
}
