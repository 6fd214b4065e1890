// `rtctl bundles list|show|coverage`: the hardening bundles, their controls, attacks and profiles. Reads the
// bundle folders (I/O here); everything else is pure (catalog.ts, render.ts).
import { Command, Option } from 'commander';
import { existsSync } from 'node:fs';
import { hasErrors } from '../diagnostics/diagnostic.js';
import { formatText } from '../format/format-text.js';
import { buildCatalog, selectProfile, type Catalog } from './catalog.js';
import { DEFAULT_BUNDLES_ROOT, readBundleSources } from './load.js';
import { PROFILES, type Profile } from './metadata.js';
import { policySummary, renderCoverage, renderList, renderPoliciesYaml, renderPolicyText } from './render.js';

function usage(command: Command, message: string): never {
  command.error(`rtctl bundles: ${message}`, { exitCode: 2, code: 'rtctl.usage' });
}

/** Loads the catalogue; lint errors in the bundles are printed and end the command with 1. */
function load(dir: string, command: Command): Catalog | undefined {
  if (!existsSync(dir)) usage(command, `bundle folder ${dir} does not exist (--dir)`);
  const sources = readBundleSources(dir);
  if (sources.length === 0) usage(command, `bundle folder ${dir} holds no .yaml file`);
  const catalog = buildCatalog(sources);
  if (hasErrors(catalog.diagnostics)) {
    process.stderr.write(
      formatText(catalog.diagnostics, {
        texts: new Map(sources.map((s) => [s.file, s.text])),
        verbose: false,
        color: false,
      }),
    );
    process.exitCode = 1;
    return undefined;
  }
  return catalog;
}

const dirOption = (): Option =>
  new Option('--dir <folder>', 'the bundles root (one folder per bundle)').default(DEFAULT_BUNDLES_ROOT);

/** Registers `rtctl bundles` on the root program. */
export function registerBundlesCommands(program: Command): void {
  const bundles = program
    .command('bundles')
    .description(
      'hardening bundles: policies mapped to CIS, MITRE ATT&CK, NIST 800-53 and DISA STIG controls',
    );

  bundles
    .command('list')
    .description('list the bundles and their policies')
    .addOption(dirOption())
    .addOption(new Option('-o, --output <format>', 'output format').choices(['text', 'json']).default('text'))
    .action((opts: { dir: string; output: 'text' | 'json' }, command: Command) => {
      const catalog = load(opts.dir, command);
      if (catalog === undefined) return;
      process.stdout.write(renderList(catalog, opts.output));
      process.exitCode = 0;
    });

  bundles
    .command('show')
    .description(
      'show one policy (controls, rationale, attack, what it may break), or the policies of a profile or bundle',
    )
    .argument('[policy]', 'policy name')
    .addOption(dirOption())
    .addOption(new Option('--profile <profile>', 'the policies a profile selects').choices([...PROFILES]))
    .option('--bundle <bundle>', 'the policies of one bundle')
    .option('--namespace <ns>', 'with -o yaml: set this namespace on pod policies')
    .addOption(
      new Option('-o, --output <format>', 'output format').choices(['text', 'json', 'yaml']).default('text'),
    )
    .action(
      (
        name: string | undefined,
        opts: { dir: string; profile?: Profile; bundle?: string; namespace?: string; output: string },
        command: Command,
      ) => {
        const chosen = [name !== undefined, opts.profile !== undefined, opts.bundle !== undefined].filter(
          Boolean,
        ).length;
        if (chosen !== 1) usage(command, 'name one policy, or give --profile or --bundle');
        const catalog = load(opts.dir, command);
        if (catalog === undefined) return;
        let selected: typeof catalog.policies;
        if (name !== undefined) {
          selected = catalog.policies.filter((p) => p.name === name);
          if (selected.length === 0) {
            process.stderr.write(
              `rtctl bundles: no policy named ${JSON.stringify(name)} in ${opts.dir} (rtctl bundles list)\n`,
            );
            process.exitCode = 1;
            return;
          }
        } else if (opts.profile !== undefined) selected = selectProfile(catalog, opts.profile);
        else {
          selected = catalog.policies.filter((p) => p.bundle === opts.bundle);
          if (selected.length === 0) {
            process.stderr.write(
              `rtctl bundles: no bundle named ${JSON.stringify(opts.bundle)} in ${opts.dir}\n`,
            );
            process.exitCode = 1;
            return;
          }
        }
        if (opts.output === 'yaml') process.stdout.write(renderPoliciesYaml(selected, opts.namespace));
        else if (opts.output === 'json')
          process.stdout.write(`${JSON.stringify(selected.map(policySummary), null, 2)}\n`);
        else process.stdout.write(selected.map(renderPolicyText).join('\n'));
        process.exitCode = 0;
      },
    );

  bundles
    .command('coverage')
    .description('catalogue controls covered by the bundles (or by one profile)')
    .addOption(dirOption())
    .addOption(new Option('--profile <profile>', 'only the policies of this profile').choices([...PROFILES]))
    .addOption(
      new Option('-o, --output <format>', 'output format')
        .choices(['text', 'json', 'markdown'])
        .default('text'),
    )
    .action(
      (opts: { dir: string; profile?: Profile; output: 'text' | 'json' | 'markdown' }, command: Command) => {
        const catalog = load(opts.dir, command);
        if (catalog === undefined) return;
        const policies = opts.profile === undefined ? catalog.policies : selectProfile(catalog, opts.profile);
        process.stdout.write(renderCoverage(policies, opts.output));
        process.exitCode = 0;
      },
    );
}
