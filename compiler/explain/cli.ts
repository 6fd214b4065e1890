// `rtctl explain`: the decision oracle on the command line. Reads and lints the policies (I/O here),
// then decides one operation for one workload and prints the decision, the alert and the rule.
// Exit 0 whatever the decision; 1 when the policies have errors; 2 on usage or I/O errors.
import type { Command } from 'commander';
import { hasErrors } from '../diagnostics/diagnostic.js';
import { formatText } from '../format/format-text.js';
import { readSources } from '../io/read-sources.js';
import { lintTexts } from '../lint.js';
import { explainRequest, formatExplainJson, formatExplainText } from './explain.js';
import { parseExplainOptions, type ExplainOptions } from './explain-request.js';

/** Registers `rtctl explain` on the root program. */
export function registerExplainCommand(program: Command): void {
  program
    .command('explain')
    .description(
      'decide one operation of one workload under the given policies: the decision, the alert, the rule (file:line)',
    )
    .argument('<paths...>', 'policy files or directories')
    .option('--namespace <ns>', 'namespace of the pod (default: default)')
    .option('--labels <k=v,...>', 'labels of the pod')
    .option('--host', 'the operation happens on a node, outside containers (host policies apply)')
    .option('--node-labels <k=v,...>', 'labels of the node (with --host)')
    .option(
      '--posture <class=value,...>',
      'namespace postures: file, network, capabilities = audit|block (process follows file)',
    )
    .option('--exec <path>', 'a process executes this binary')
    .option('--open <path>', 'a process opens this file (for reading unless --write)')
    .option('--write', 'with --open: open for writing')
    .option('--owner', 'the acting user owns the file or binary')
    .option('--connect <protocol>', 'a process opens a socket of this protocol (tcp, udp, icmp, raw, ...)')
    .option('--capability <name>', 'a process uses this capability (net_raw, sys_admin, ...)')
    .option('--source <path>', 'the acting executable (for --exec: the parent that executes it)')
    .option('--tty', 'the process has a terminal (for pts rules)')
    .option('--args <a,b,...>', 'with --exec: the arguments (for allowedArgs rules)')
    .option('--json', 'print JSON')
    .action(async (paths: string[], options: ExplainOptions, command: Command) => {
      const parsed = parseExplainOptions(options);
      if (!parsed.ok) command.error(`rtctl explain: ${parsed.error}`, { exitCode: 2, code: 'rtctl.usage' });
      const read = await readSources(paths);
      const lint = lintTexts(read.sources);
      const diagnostics = [...read.diagnostics, ...lint.diagnostics];
      if (read.ioFailed || hasErrors(diagnostics)) {
        process.stderr.write(
          formatText(diagnostics, {
            texts: new Map(read.sources.map((s) => [s.file, s.text])),
            verbose: false,
            color: false,
          }),
        );
        process.exitCode = read.ioFailed ? 2 : 1;
        return;
      }
      // Postures of the pod's namespace from Namespace objects among the files (lint's own parse), then
      // --posture on top.
      const request = parsed.request;
      const declared =
        request.workload.kind === 'container'
          ? lint.namespacePostures.get(request.workload.namespace)
          : undefined;
      const result = explainRequest(lint.ruleSet, {
        ...request,
        postures: { ...declared?.postures, ...request.postures },
      });
      if (declared !== undefined) result.postureSource = declared.file;
      process.stdout.write(options.json === true ? formatExplainJson(result) : formatExplainText(result));
      process.exitCode = 0;
    });
}
