// The readable form of an alert for `rtctl logs` without --json: one block per alert, one field per line.
// Values come from workloads (file paths, process names, messages) and are escaped, so a path holding a
// newline cannot forge a `Field: value` line, and control or bidirectional characters cannot rewrite the
// terminal: `\` → `\\`, `\n` → `\n`, `\r` → `\r`, `\t` → `\t`, any other control, line-separator or bidi
// character → `\u{XXXX}`.
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

// C0 and C1 controls, DEL, line and paragraph separators, bidi embeddings, overrides and isolates, BOM.
const UNSAFE =
  // eslint-disable-next-line no-control-regex -- matching control characters is the point
  /[\\\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069\u200e\u200f\u061c\ufeff]/gu;
const NAMED: Readonly<Record<string, string>> = { '\\': '\\\\', '\n': '\\n', '\r': '\\r', '\t': '\\t' };

/** A value on one line, with nothing the terminal would interpret. */
export function escapeAlertValue(value: string): string {
  return value.replace(
    UNSAFE,
    (c) => NAMED[c] ?? `\\u{${(c.codePointAt(0) ?? 0).toString(16).toUpperCase().padStart(4, '0')}}`,
  );
}

/** One alert as a text block ending with a blank line. */
export function formatAlert(alert: AlertRecord): string {
  const lines = [`== Alert ${escapeAlertValue(String(alert.UpdatedTime))} ==`];
  for (const key of ORDER) {
    const v = alert[key];
    if (v === undefined || v === '') continue;
    lines.push(`${key}: ${escapeAlertValue(String(v))}`);
  }
  return `${lines.join('\n')}\n\n`;
}

// What JSON.stringify leaves raw but a terminal would interpret: DEL, C1 controls, line/paragraph separators,
// bidi marks, embeddings, overrides and isolates, BOM (C0 controls it escapes itself).
const UNSAFE_IN_JSON = /[\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069\u200e\u200f\u061c\ufeff]/gu;

/** One alert as indented JSON (`rtctl logs -o pretty`): still JSON, with nothing a terminal interprets. */
export function formatAlertPretty(alert: AlertRecord): string {
  const text = JSON.stringify(alert, null, 2).replace(
    UNSAFE_IN_JSON,
    (c) => `\\u${(c.codePointAt(0) ?? 0).toString(16).padStart(4, '0')}`,
  );
  return `${text}\n`;
}
