// `rtctl explain`: the decision oracle on the command line. Reads and lints the policies (I/O here),
// then decides one operation for one workload and prints the decision, the alert and the rule.
// Exit 0 whatever the decision; 1 when the policies have errors; 2 on usage or I/O errors.
import { createReadStream } from 'node:fs';
import { createInterface } from 'node:readline';
import type { Command } from 'commander';
import type { Diagnostic } from '../diagnostics/diagnostic.js';
import { hasErrors } from '../diagnostics/diagnostic.js';
import { formatText } from '../format/format-text.js';
import { readSources } from '../io/read-sources.js';
import { lintTexts } from '../lint.js';
import { explainRequest, formatExplainJson, formatExplainText } from './explain.js';
import {
  parseExplainOptions,
  parseLabelList,
  parsePostureList,
  type ExplainOptions,
} from './explain-request.js';
import { describeReplayDecision, replayAlertLine, type ReplayOutcome } from './replay.js';

/** Longest alert record line read; a longer one is reported, not replayed. */
const MAX_REPLAY_LINE = 1024 * 1024;

function printDiagnostics(diagnostics: readonly Diagnostic[], texts: ReadonlyMap<string, string>): void {
  process.stderr.write(formatText(diagnostics, { texts, verbose: false, color: false }));
}

async function runReplay(
  paths: string[],
  log: string,
  options: ExplainOptions,
  command: Command,
): Promise<void> {
  const operationFlags = (
    ['exec', 'open', 'connect', 'capability', 'labels', 'namespace', 'host'] as const
  ).filter((k) => options[k] !== undefined);
  if (operationFlags.length > 0)
    command.error(
      `rtctl explain: --replay takes the operations from the log; drop --${operationFlags.join(', --')}`,
      {
        exitCode: 2,
        code: 'rtctl.usage',
      },
    );
  const postures = parsePostureList(options.posture);
  const nodeLabels = parseLabelList('--node-labels', options.nodeLabels);
  const usage =
    typeof postures === 'string' ? postures : typeof nodeLabels === 'string' ? nodeLabels : undefined;
  if (usage !== undefined || typeof postures === 'string' || typeof nodeLabels === 'string')
    return command.error(`rtctl explain: ${usage ?? ''}`, { exitCode: 2, code: 'rtctl.usage' });
  const read = await readSources(paths);
  const lint = lintTexts(read.sources);
  const diagnostics = [...read.diagnostics, ...lint.diagnostics];
  if (read.ioFailed || hasErrors(diagnostics)) {
    printDiagnostics(diagnostics, new Map(read.sources.map((s) => [s.file, s.text])));
    process.exitCode = read.ioFailed ? 2 : 1;
    return;
  }
  const context = { ruleSet: lint.ruleSet, namespacePostures: lint.namespacePostures, postures, nodeLabels };
  const changed: ReplayOutcome[] = [];
  const skipped: ReplayOutcome[] = [];
  let replayed = 0;
  let streamEnds = 0;
  let lineNumber = 0;
  try {
    const lines = createInterface({ input: createReadStream(log), crlfDelay: Infinity });
    for await (const text of lines) {
      lineNumber++;
      const outcome =
        text.length > MAX_REPLAY_LINE
          ? ({
              kind: 'skipped',
              line: lineNumber,
              reason: `longer than ${MAX_REPLAY_LINE} characters`,
            } as const)
          : replayAlertLine(context, lineNumber, text);
      if (outcome === undefined) continue;
      if (outcome.kind === 'stream-end') streamEnds++;
      else if (outcome.kind === 'skipped') skipped.push(outcome);
      else {
        replayed++;
        if (outcome.changed) changed.push(outcome);
      }
    }
  } catch (err) {
    process.stderr.write(
      `rtctl explain: cannot read ${log}: ${String((err as NodeJS.ErrnoException).code ?? err)}\n`,
    );
    process.exitCode = 2;
    return;
  }
  if (options.json === true) {
    process.stdout.write(`${JSON.stringify({ replayed, changed, skipped, streamEnds }, null, 2)}\n`);
  } else {
    const out: string[] = [];
    for (const o of changed) {
      if (o.kind !== 'replayed') continue;
      const op = o.request.operation;
      const by = op.parentExecutable ?? op.executable;
      const rule = o.rule === null ? '' : ` (${o.rule.file}:${o.rule.line}:${o.rule.column})`;
      out.push(
        `${log}:${o.line}: ${o.time} ${o.where} ${op.operation} ${op.resource}${op.write ? ' (write)' : ''}${by === undefined ? '' : ` by ${by}`}: ` +
          `${describeReplayDecision(o.recorded)} -> ${describeReplayDecision(o.now)}${rule}`,
      );
    }
    for (const o of skipped)
      if (o.kind === 'skipped') out.push(`${log}:${o.line}: not replayed: ${o.reason}`);
    out.push(
      `${replayed} alert${replayed === 1 ? '' : 's'} replayed: ${changed.length} would change, ${replayed - changed.length} unchanged` +
        `${skipped.length > 0 ? `; ${skipped.length} line${skipped.length === 1 ? '' : 's'} not replayed` : ''}` +
        `${streamEnds > 0 ? `; ${streamEnds} stream-end marker${streamEnds === 1 ? '' : 's'}` : ''}`,
    );
    process.stdout.write(`${out.join('\n')}\n`);
  }
  process.exitCode = skipped.length > 0 ? 1 : 0;
}

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
    .option(
      '--connect <protocol>',
      'a process opens a socket of this protocol (tcp, udp, icmp, raw, ...), or with these names (raw,icmp: a raw ICMP socket)',
    )
    .option('--capability <name>', 'a process uses this capability (net_raw, sys_admin, ...)')
    .option('--source <path>', 'the acting executable (for --exec: the parent that executes it)')
    .option('--tty', 'the process has a terminal (for pts rules)')
    .option('--args <a,b,...>', 'with --exec: the arguments (for allowedArgs rules)')
    .option('--json', 'print JSON')
    .option(
      '--replay <alert-log>',
      're-decide every alert of an NDJSON alert log (docs/alerts.md) and list what would change (with --posture, --node-labels)',
    )
    .action(async (paths: string[], options: ExplainOptions & { replay?: string }, command: Command) => {
      if (options.replay !== undefined) {
        await runReplay(paths, options.replay, options, command);
        return;
      }
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
