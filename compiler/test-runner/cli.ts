// `rtctl test`: runs the test suites (RuntimePolicyTest documents) found among the given files against the
// policies found there. Exit 0 every case passed; 1 a case failed, a suite or policy has errors, or (with
// --require-tests) a policy has no case; 2 usage or I/O failure.
import { Option, type Command } from 'commander';
import { hasErrors } from '../diagnostics/diagnostic.js';
import { formatText } from '../format/format-text.js';
import { readSources } from '../io/read-sources.js';
import { lintTexts } from '../lint.js';
import { formatTestJson, formatTestJunit, formatTestText } from './format-test-results.js';
import { readTestSuites } from './read-test-suites.js';
import { runTests } from './run-tests.js';

const FORMATS = ['text', 'json', 'junit'] as const;
type Format = (typeof FORMATS)[number];

/** Registers `rtctl test` on the root program. */
export function registerTestCommand(program: Command): void {
  program
    .command('test')
    .description(
      'run the expected-decision suites (kind RuntimePolicyTest) against the policies beside them (docs/policy-tests.md)',
    )
    .argument('[paths...]', 'files or directories holding policies and suites', ['.'])
    .addOption(new Option('-f, --format <format>', 'report format').choices(FORMATS).default('text'))
    .option('-o, --output <file>', 'write the report to a file instead of stdout')
    .option('--require-tests', 'fail when a policy is decided by no case and named by none', false)
    .action(async (paths: string[], opts: { format: Format; output?: string; requireTests: boolean }) => {
      const read = await readSources(paths);
      const lint = lintTexts(read.sources);
      const suites = readTestSuites(read.sources);
      const diagnostics = [...read.diagnostics, ...lint.diagnostics, ...suites.diagnostics];
      if (read.ioFailed || hasErrors(diagnostics)) {
        process.stderr.write(
          formatText(diagnostics, {
            texts: new Map(read.sources.map((s) => [s.file, s.text])),
            color: false,
          }),
        );
        process.exitCode = read.ioFailed ? 2 : 1;
        return;
      }
      if (suites.suites === 0) {
        process.stderr.write(
          `rtctl test: no test suite (kind RuntimePolicyTest) in ${paths.join(', ')}; nothing was tested\n`,
        );
        process.exitCode = 1;
        return;
      }
      const run = runTests(lint.ruleSet, lint.namespacePostures, suites.cases);
      const report =
        opts.format === 'json'
          ? formatTestJson(run)
          : opts.format === 'junit'
            ? formatTestJunit(run, opts.requireTests)
            : formatTestText(run, opts.requireTests);
      if (opts.output !== undefined) {
        const { writeFile } = await import('node:fs/promises');
        await writeFile(opts.output, report);
      } else process.stdout.write(report);
      const failed = run.results.some((r) => r.failures.length > 0);
      process.exitCode = failed || (opts.requireTests && run.untested.length > 0) ? 1 : 0;
    });
}
