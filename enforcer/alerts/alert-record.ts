// The alert record (DESIGN.md "Alert record"): exactly the seed's fields and types, plus optional Tags,
// Message, Cwd and UID. Built (pure) from a data-plane event and the identity of its workload.
import {
  AlertResult,
  AlertType,
  DEFAULT_POSTURE_POLICY,
  DEFAULT_POSTURE_SEVERITY,
} from '../../compiler/decide/decision.js';
import { Action } from '../../compiler/ir/rule-set.js';
import { DecisionKind, type DataPlaneEvent } from '../data-plane.js';
import { formatLabels, type Workload } from '../workload.js';

/** One alert, one JSON object per line on the stream. */
export interface AlertRecord {
  Timestamp: number;
  UpdatedTime: string;
  ClusterName: string;
  HostName: string;
  NamespaceName: string;
  PodName: string;
  Labels: string;
  ContainerID: string;
  ContainerName: string;
  ContainerImage: string;
  HostPPID: number;
  HostPID: number;
  PPID: number;
  PID: number;
  ParentProcessName: string;
  ProcessName: string;
  PolicyName: string;
  Severity: string;
  Type: string;
  Source: string;
  Operation: string;
  Resource: string;
  Data: string;
  Enforcer: string;
  Action: string;
  Result: string;
  Tags?: string;
  Message?: string;
  Cwd?: string;
  UID?: number;
}

/** Node facts every alert carries. */
export interface AlertContext {
  clusterName: string;
  hostName: string;
  /** `Enforcer` for denials, and for audits (they differ on BPF-LSM). */
  enforcer: string;
  auditEnforcer: string;
}

const ERRNO_TEXT: Readonly<Record<number, string>> = {
  1: 'Operation not permitted',
  13: AlertResult.PermissionDenied,
};

/** The `Result` of a decision: `Passed`, or the text of the errno the caller saw. */
export function describeResult(event: Pick<DataPlaneEvent, 'action' | 'errno'>): string {
  if (event.action !== Action.Block) return AlertResult.Passed;
  return ERRNO_TEXT[event.errno] ?? AlertResult.PermissionDenied;
}

/** Milliseconds since the epoch of an event (what alertTimeMs reads back from its record's UpdatedTime). */
export function eventTimeMs(event: Pick<DataPlaneEvent, 'timeNs'>): number {
  return Number(event.timeNs / 1_000_000n);
}

// Alerts come in bursts within one millisecond: the ISO text of the last millisecond is kept.
let lastMs = NaN;
let lastIso = '';

/** ISO-8601 UTC with microseconds, from nanoseconds since the epoch. */
function formatTime(ns: bigint, ms: number): string {
  if (ms !== lastMs) {
    const iso = new Date(ms).toISOString();
    lastIso = iso.slice(0, -1); // without the Z
    lastMs = ms;
  }
  const micros = Number(ns % 1_000_000n) / 1000;
  const digits = Math.floor(micros) % 1000;
  return `${lastIso}${digits < 10 ? '00' : digits < 100 ? '0' : ''}${digits}Z`;
}

// The Labels text of a workload, made once per workload object (workloads are rebuilt when they change).
const labelsText = new WeakMap<Workload, string>();

function labelsOf(workload: Workload): string {
  let text = labelsText.get(workload);
  if (text === undefined) {
    text = formatLabels(workload.podLabels);
    labelsText.set(workload, text);
  }
  return text;
}

/** Builds the alert record of one event of one workload. */
export function buildAlertRecord(
  event: DataPlaneEvent,
  workload: Workload,
  context: AlertContext,
): AlertRecord {
  const processOp = event.operation === 'Process';
  // Process: the acting process is the one calling exec (its executable becomes ProcessName's parent);
  // File: the process opening the file.
  const processName = processOp ? event.resource : event.processName;
  const parentName = processOp ? event.processName : event.parentProcessName;
  const data = event.syscallArgs
    ? `syscall=${event.syscall} ${event.syscallArgs}`
    : `syscall=${event.syscall}`;
  const ms = eventTimeMs(event);
  const record: AlertRecord = {
    Timestamp: Math.floor(ms / 1000),
    UpdatedTime: formatTime(event.timeNs, ms),
    ClusterName: context.clusterName,
    HostName: context.hostName,
    NamespaceName: workload.namespace,
    PodName: workload.podName,
    Labels: labelsOf(workload),
    ContainerID: workload.containerId,
    ContainerName: workload.containerName,
    ContainerImage: workload.image,
    HostPPID: event.hostPpid,
    HostPID: event.hostPid,
    PPID: event.ppid,
    PID: event.pid,
    ParentProcessName: parentName,
    ProcessName: processName,
    PolicyName: event.kind === DecisionKind.Posture ? DEFAULT_POSTURE_POLICY : event.policyName,
    Severity: event.kind === DecisionKind.Posture ? DEFAULT_POSTURE_SEVERITY : String(event.severity),
    Type: workload.kind === 'host' ? AlertType.MatchedHostPolicy : AlertType.MatchedPolicy,
    Source: event.processName,
    Operation: event.operation,
    Resource: event.resource,
    Data: data,
    Enforcer: event.enforcer ?? (event.action === Action.Block ? context.enforcer : context.auditEnforcer),
    Action: event.action,
    Result: describeResult(event),
  };
  if (event.tags.length > 0) record.Tags = event.tags.join(',');
  if (event.message !== '') record.Message = event.message;
  if (event.cwd !== undefined) record.Cwd = event.cwd;
  if (event.uid >= 0) record.UID = event.uid;
  return record;
}
