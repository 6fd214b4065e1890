// Parses the options of `rtctl explain` into a workload, an operation and postures. Pure: a bad
// option is an error value naming the option and what was expected, never an exception.
import { Operation } from '../ir/rule-set.js';
import { WorkloadKind, type OperationRequest, type Workload } from '../decide/decision-input.js';
import { isPosture, isPostureClass, type DeclaredPostures } from '../model/posture.js';

/** The raw options as commander gives them. */
export interface ExplainOptions {
  namespace?: string;
  labels?: string;
  host?: boolean;
  nodeLabels?: string;
  posture?: string;
  exec?: string;
  open?: string;
  write?: boolean;
  owner?: boolean;
  connect?: string;
  capability?: string;
  source?: string;
  tty?: boolean;
  args?: string;
  json?: boolean;
}

/** What to decide. */
export interface ExplainRequest {
  workload: Workload;
  operation: OperationRequest;
  postures: DeclaredPostures;
}

/** A parsed request, or a usage error message. */
export type ParseExplainResult = { ok: true; request: ExplainRequest } | { ok: false; error: string };

/** Parses `k=v,k=v` (empty: no labels). */
export function parseLabelList(option: string, text: string | undefined): Record<string, string> | string {
  const labels: Record<string, string> = {};
  if (text === undefined || text.trim() === '') return labels;
  for (const raw of text.split(',')) {
    const item = raw.trim();
    const eq = item.indexOf('=');
    if (eq <= 0) return `${option} expects key=value pairs separated by commas, got ${JSON.stringify(item)}`;
    labels[item.slice(0, eq)] = item.slice(eq + 1);
  }
  return labels;
}

/** Parses `file=block,network=audit`. */
export function parsePostureList(text: string | undefined): DeclaredPostures | string {
  const postures: DeclaredPostures = {};
  if (text === undefined || text.trim() === '') return postures;
  const pairs = parseLabelList('--posture', text);
  if (typeof pairs === 'string') return pairs;
  for (const [cls, value] of Object.entries(pairs)) {
    if (!isPostureClass(cls)) {
      return `--posture: unknown class ${JSON.stringify(cls)}; expected file, network or capabilities (process follows file)`;
    }
    if (!isPosture(value)) {
      return `--posture: ${cls} must be audit or block, got ${JSON.stringify(value)}`;
    }
    postures[cls] = value;
  }
  return postures;
}

function isAbsolutePath(p: string): boolean {
  return p.startsWith('/');
}

/** Turns the command-line options into a request. */
export function parseExplainOptions(options: ExplainOptions): ParseExplainResult {
  const chosen = (['exec', 'open', 'connect', 'capability'] as const).filter((k) => options[k] !== undefined);
  if (chosen.length !== 1) {
    return {
      ok: false,
      error:
        chosen.length === 0
          ? 'say which operation: one of --exec <path>, --open <path> [--write], --connect <protocol>, --capability <name>'
          : `give only one operation, got ${chosen.map((c) => `--${c}`).join(' and ')}`,
    };
  }
  if (options.write === true && options.open === undefined)
    return { ok: false, error: '--write goes with --open' };
  if (options.host === true && (options.namespace !== undefined || options.labels !== undefined)) {
    return {
      ok: false,
      error: '--host describes the node itself; use --node-labels, not --namespace or --labels',
    };
  }
  if (options.host !== true && options.nodeLabels !== undefined) {
    return { ok: false, error: '--node-labels goes with --host' };
  }
  const labels = parseLabelList('--labels', options.labels);
  if (typeof labels === 'string') return { ok: false, error: labels };
  const nodeLabels = parseLabelList('--node-labels', options.nodeLabels);
  if (typeof nodeLabels === 'string') return { ok: false, error: nodeLabels };
  const postures = parsePostureList(options.posture);
  if (typeof postures === 'string') return { ok: false, error: postures };
  if (options.args !== undefined && options.exec === undefined)
    return { ok: false, error: '--args goes with --exec' };
  if (options.source !== undefined && !isAbsolutePath(options.source)) {
    return {
      ok: false,
      error: `--source expects an absolute executable path, got ${JSON.stringify(options.source)}`,
    };
  }

  const workload: Workload =
    options.host === true
      ? { kind: WorkloadKind.Host, namespace: '', labels: {}, nodeLabels }
      : { kind: WorkloadKind.Container, namespace: options.namespace ?? 'default', labels, nodeLabels: {} };

  let operation: OperationRequest;
  if (options.exec !== undefined) {
    if (!isAbsolutePath(options.exec))
      return { ok: false, error: `--exec expects an absolute path, got ${JSON.stringify(options.exec)}` };
    operation = {
      operation: Operation.Process,
      resource: options.exec,
      write: false,
      owner: options.owner === true,
    };
    if (options.source !== undefined) operation.parentExecutable = options.source;
    if (options.args !== undefined) operation.args = options.args.split(',').filter((a) => a !== '');
  } else {
    if (options.open !== undefined) {
      if (!isAbsolutePath(options.open))
        return { ok: false, error: `--open expects an absolute path, got ${JSON.stringify(options.open)}` };
      operation = {
        operation: Operation.File,
        resource: options.open,
        write: options.write === true,
        owner: options.owner === true,
      };
    } else if (options.connect !== undefined) {
      // One name (`tcp`), or every name of the socket (`raw,icmp`: a raw ICMP socket, docs/semantics.md).
      const names = options.connect
        .toLowerCase()
        .split(',')
        .map((n) => n.trim());
      if (names.some((n) => n === ''))
        return {
          ok: false,
          error: `--connect expects a protocol or names separated by commas (raw,icmp), got ${JSON.stringify(options.connect)}`,
        };
      operation = {
        operation: Operation.Network,
        resource: names[0] ?? '',
        write: false,
        owner: false,
      };
      if (names.length > 1) operation.socketNames = names;
    } else {
      operation = {
        operation: Operation.Capabilities,
        resource: options.capability ?? '',
        write: false,
        owner: false,
      };
    }
    if (options.source !== undefined) operation.executable = options.source;
  }
  if (options.tty === true) operation.tty = true;
  return { ok: true, request: { workload, operation, postures } };
}
