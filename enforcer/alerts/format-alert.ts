// The readable form of an alert for `rtctl logs` without --json: one block per alert, one field per line.
import type { AlertRecord } from './alert-record.js';

const ORDER: readonly (keyof AlertRecord)[] = [
  'ClusterName',
  'HostName',
  'NamespaceName',
  'PodName',
  'Labels',
  'ContainerName',
  'ContainerID',
  'ContainerImage',
  'Type',
  'PolicyName',
  'Severity',
  'Tags',
  'Message',
  'Source',
  'Operation',
  'Resource',
  'Data',
  'Enforcer',
  'Action',
  'Result',
  'HostPID',
  'HostPPID',
  'PID',
  'PPID',
  'UID',
  'ProcessName',
  'ParentProcessName',
  'Cwd',
];

/** One alert as a text block ending with a blank line. */
export function formatAlert(alert: AlertRecord): string {
  const lines = [`== Alert ${alert.UpdatedTime} ==`];
  for (const key of ORDER) {
    const v = alert[key];
    if (v === undefined || v === '') continue;
    lines.push(`${key}: ${String(v)}`);
  }
  return `${lines.join('\n')}\n\n`;
}
