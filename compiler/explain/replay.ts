// `rtctl explain --replay`: re-decides recorded alerts (NDJSON alert records, docs/alerts.md) under the policies
// on disk and says which decisions would change: "what if I switch this rule to Block". Pure: one record line
// in, one outcome out. What an alert does not record is an assumption, stated in docs/policy-tests.md: the file
// owner (taken as not the acting user), a host's node labels (--node-labels), the process's arguments and tty.
import { WorkloadKind, type OperationRequest, type Workload } from '../decide/decision-input.js';
import { getSocketNames } from '../decide/socket-names.js';
import type { NamespacePostures } from '../front-end/checked-documents.js';
import { Operation, type RuleSet } from '../ir/rule-set.js';
import type { DeclaredPostures } from '../model/posture.js';
import { explainRequest, type ExplainRule } from './explain.js';
import type { ExplainRequest } from './explain-request.js';

/** A decision in the terms of an alert: allowed or not, the deciding policy, the alert's action. */
export interface ReplayDecision {
  allowed: boolean;
  /** Policy name; `DefaultPosture` for the posture; `none` when nothing decided. */
  policy: string;
  action: 'Block' | 'Audit' | 'none';
}

/** The outcome of replaying one line. */
export type ReplayOutcome =
  | {
      kind: 'replayed';
      line: number;
      request: ExplainRequest;
      recorded: ReplayDecision;
      now: ReplayDecision;
      rule: ExplainRule | null;
      changed: boolean;
      time: string;
      where: string;
    }
  | { kind: 'skipped'; line: number; reason: string }
  | { kind: 'stream-end'; line: number };

/** What the replay assumes where alerts are silent. */
export interface ReplayContext {
  ruleSet: RuleSet;
  namespacePostures: ReadonlyMap<string, NamespacePostures>;
  /** Postures laid over those declared by Namespace objects (--posture). */
  postures: DeclaredPostures;
  /** Node labels for host alerts (--node-labels). */
  nodeLabels: Readonly<Record<string, string>>;
}

const OPERATIONS: ReadonlySet<string> = new Set(Object.values(Operation));

function str(record: Record<string, unknown>, field: string): string | undefined {
  const v = record[field];
  return typeof v === 'string' ? v : undefined;
}

function parseLabels(text: string): Record<string, string> | undefined {
  const labels: Record<string, string> = {};
  if (text === '') return labels;
  for (const pair of text.split(',')) {
    const eq = pair.indexOf('=');
    if (eq <= 0) return undefined;
    labels[pair.slice(0, eq)] = pair.slice(eq + 1);
  }
  return labels;
}

/** Opened for writing, by the open flags in `Data` (`flags=O_WRONLY|O_CREAT`). */
function isWrite(data: string): boolean {
  const flags = /(?:^|\s)flags=(\S*)/.exec(data)?.[1] ?? '';
  return /O_WRONLY|O_RDWR|O_TRUNC|O_APPEND|O_CREAT/.test(flags);
}

/** The request an alert record describes, or why it cannot be replayed. */
export function toReplayRequest(
  record: Record<string, unknown>,
  nodeLabels: Readonly<Record<string, string>>,
): ExplainRequest | string {
  const operation = str(record, 'Operation');
  const resource = str(record, 'Resource');
  const action = str(record, 'Action');
  const policy = str(record, 'PolicyName');
  if (operation === undefined || resource === undefined || action === undefined || policy === undefined)
    return 'not an alert record (Operation, Resource, Action and PolicyName must be strings)';
  if (!OPERATIONS.has(operation))
    return `operation ${JSON.stringify(operation)} is not decided by policies (Process, File, Network, Capabilities)`;
  if (action !== 'Block' && action !== 'Audit')
    return `Action ${JSON.stringify(action)} is neither Block nor Audit`;
  const namespace = str(record, 'NamespaceName') ?? '';
  const host = str(record, 'Type') === 'MatchedHostPolicy' || namespace === '';
  let workload: Workload;
  if (host) workload = { kind: WorkloadKind.Host, namespace: '', labels: {}, nodeLabels };
  else {
    const labels = parseLabels(str(record, 'Labels') ?? '');
    if (labels === undefined)
      return `Labels ${JSON.stringify(str(record, 'Labels'))} are not k=v pairs separated by commas`;
    workload = { kind: WorkloadKind.Container, namespace, labels, nodeLabels: {} };
  }
  const source = str(record, 'Source') ?? '';
  const req: OperationRequest = {
    operation: operation as Operation,
    resource: operation === Operation.Network ? resource.toLowerCase() : resource,
    write: operation === Operation.File && isWrite(str(record, 'Data') ?? ''),
    owner: false,
  };
  if (operation === Operation.Network) {
    const names = getRecordedSocketNames(resource, str(record, 'Data') ?? '');
    if (names.length > 0) {
      req.resource = names[0] ?? '';
      if (names.length > 1) req.socketNames = names;
    }
  }
  if (source.startsWith('/')) {
    if (operation === Operation.Process) req.parentExecutable = source;
    else req.executable = source;
  }
  return { workload, operation: req, postures: {} };
}

/**
 * The socket names of a Network alert (docs/semantics.md "Socket names"): from the socket's numbers in `Data`
 * (`domain=2 type=3 protocol=1`, BPF-LSM), else from a `protocol=raw,icmp` resource (cgroup plane); none
 * when the record says neither.
 */
export function getRecordedSocketNames(resource: string, data: string): string[] {
  const numbers = /(?:^| )domain=(\d+) type=(\d+) protocol=(\d+)(?: |$)/.exec(data);
  if (numbers !== null)
    return getSocketNames({
      family: Number(numbers[1]),
      type: Number(numbers[2]),
      protocol: Number(numbers[3]),
    });
  const named = /^protocol=([a-z0-9]+(?:,[a-z0-9]+)*)$/i.exec(resource);
  return named === null ? [] : (named[1] ?? '').toLowerCase().split(',');
}

/** Replays one line of an alert log (1-based line number). */
export function replayAlertLine(
  context: ReplayContext,
  lineNumber: number,
  text: string,
): ReplayOutcome | undefined {
  if (text.trim() === '') return undefined;
  let record: unknown;
  try {
    record = JSON.parse(text);
  } catch {
    return { kind: 'skipped', line: lineNumber, reason: 'not JSON' };
  }
  if (typeof record !== 'object' || record === null || Array.isArray(record))
    return { kind: 'skipped', line: lineNumber, reason: 'not a JSON object' };
  const r = record as Record<string, unknown>;
  if ('rtctlStreamEnd' in r) return { kind: 'stream-end', line: lineNumber };
  const request = toReplayRequest(r, context.nodeLabels);
  if (typeof request === 'string') return { kind: 'skipped', line: lineNumber, reason: request };
  const w = request.workload;
  const declared =
    w.kind === WorkloadKind.Container ? context.namespacePostures.get(w.namespace)?.postures : undefined;
  request.postures = { ...declared, ...context.postures };
  const result = explainRequest(context.ruleSet, request);
  const action = str(r, 'Action') === 'Block' ? 'Block' : 'Audit';
  const recorded: ReplayDecision = {
    allowed: action !== 'Block',
    policy: str(r, 'PolicyName') ?? '',
    action,
  };
  const now: ReplayDecision = {
    allowed: result.allowed,
    policy: result.rule?.policy ?? result.alert?.PolicyName ?? 'none',
    action: result.alert?.Action ?? 'none',
  };
  const pod = str(r, 'PodName') ?? '';
  return {
    kind: 'replayed',
    line: lineNumber,
    request,
    recorded,
    now,
    rule: result.rule,
    changed:
      recorded.allowed !== now.allowed || recorded.policy !== now.policy || recorded.action !== now.action,
    time: str(r, 'UpdatedTime') ?? (typeof r['Timestamp'] === 'number' ? String(r['Timestamp']) : ''),
    where: w.kind === WorkloadKind.Host ? `host ${str(r, 'HostName') ?? ''}`.trim() : `${w.namespace}/${pod}`,
  };
}

/** `denied by X (Block)` / `allowed by X (Audit)` / `allowed, no alert`. */
export function describeReplayDecision(d: ReplayDecision): string {
  if (d.action === 'none')
    return `${d.allowed ? 'allowed' : 'denied'}${d.policy === 'none' ? '' : ` by ${d.policy}`}, no alert`;
  return `${d.allowed ? 'allowed' : 'denied'} by ${d.policy} (${d.action})`;
}
