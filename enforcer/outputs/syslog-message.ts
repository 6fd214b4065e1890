// One alert as an RFC 5424 syslog message (pure): `<PRI>1 TIMESTAMP HOSTNAME APP-NAME PROCID MSGID SD MSG`.
// PRI is facility × 8 + a syslog severity taken from the alert's numeric `Severity` (syslogSeverityOf). The
// structured data element `rtctl@32473` carries the key fields (format json) or every field (format sd);
// MSG is the alert record as one JSON line (format json) or a one-line summary (format sd). 32473 is the
// enterprise number RFC 5612 reserves for documentation: rtctl has none of its own.
// Nothing the workload controls can break the frame: header fields are reduced to printable ASCII, SD values
// escape `"`, `\` and `]`, and the JSON line has every control character (C0, DEL, C1) as a \u escape, so a
// receiver that escapes control characters (rsyslog does) leaves it intact.
import type { AlertRecord } from '../alerts/alert-record.js';

/** The SD-ID of rtctl's structured data element. */
export const SD_ID = 'rtctl@32473';

/** Syslog severities (RFC 5424 table 2) used for alerts. */
export const SyslogSeverity = { Critical: 2, Error: 3, Warning: 4, Notice: 5, Informational: 6 } as const;

/** The syslog severity of an alert: rtctl 9–10 critical, 7–8 error, 4–6 warning, 1–3 notice, 0 informational. */
export function syslogSeverityOf(alert: Pick<AlertRecord, 'Severity'>): number {
  const n = Number(alert.Severity);
  if (!Number.isFinite(n) || n <= 0) return SyslogSeverity.Informational;
  if (n >= 9) return SyslogSeverity.Critical;
  if (n >= 7) return SyslogSeverity.Error;
  if (n >= 4) return SyslogSeverity.Warning;
  return SyslogSeverity.Notice;
}

/** Options of the message. */
export interface SyslogMessageOptions {
  facility: number;
  appName: string;
  format: 'json' | 'sd';
  /** PROCID: the sending process's id. */
  procId: number;
}

/** Fields in the structured data element of format json. */
const KEY_FIELDS: readonly (keyof AlertRecord)[] = [
  'PolicyName',
  'Action',
  'Severity',
  'Operation',
  'NamespaceName',
  'PodName',
  'ContainerName',
  'Resource',
  'Source',
  'Result',
];

/** A header field: printable US-ASCII without space, at most `max` characters, `-` when empty. */
function headerField(value: string, max: number): string {
  const clean = value.replace(/[^\x21-\x7e]/g, '_').slice(0, max);
  return clean === '' ? '-' : clean;
}

const RFC3339 = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d{1,6})?Z$/;

function timestampOf(alert: AlertRecord): string {
  if (typeof alert.UpdatedTime === 'string' && RFC3339.test(alert.UpdatedTime)) return alert.UpdatedTime;
  if (Number.isSafeInteger(alert.Timestamp) && alert.Timestamp > 0)
    return new Date(alert.Timestamp * 1000).toISOString();
  return '-';
}

/** Escapes a PARAM-VALUE (RFC 5424 §6.3.3) and control characters. */
function sdValue(value: string): string {
  return escapeControls(value.replace(/["\\\]]/g, (c) => `\\${c}`));
}

/** Control characters (C0, DEL, C1) and line/paragraph separators as \uXXXX (valid inside JSON strings). */
export function escapeControls(text: string): string {
  return text.replace(
    // eslint-disable-next-line no-control-regex -- escaping control characters is the point
    /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
}

function structuredData(alert: AlertRecord, fields: readonly string[]): string {
  const record = alert as unknown as Record<string, unknown>;
  const params: string[] = [];
  for (const key of fields) {
    const v = record[key];
    if (typeof v !== 'string' && typeof v !== 'number' && typeof v !== 'boolean') continue;
    // SD-NAME: 1–32 printable ASCII characters except `=`, space, `]`, `"`.
    if (!/^[\x21-\x7e]{1,32}$/.test(key) || /[= \]"]/.test(key)) continue;
    params.push(`${key}="${sdValue(String(v))}"`);
  }
  return `[${SD_ID}${params.length > 0 ? ` ${params.join(' ')}` : ''}]`;
}

/** The alert's one-line summary (format sd). */
function summaryOf(alert: AlertRecord): string {
  const where = [alert.NamespaceName, alert.PodName].filter((s) => s !== '').join('/') || alert.HostName;
  return escapeControls(
    `${alert.Action} ${alert.Operation} ${alert.Resource} by ${alert.Source} in ${where} (policy ${alert.PolicyName})`,
  );
}

/** The RFC 5424 message of one alert (no framing, no trailing newline). */
export function formatSyslogMessage(alert: AlertRecord, options: SyslogMessageOptions): string {
  const pri = options.facility * 8 + syslogSeverityOf(alert);
  const header = [
    `<${pri}>1`,
    timestampOf(alert),
    headerField(String(alert.HostName ?? ''), 255),
    headerField(options.appName, 48),
    headerField(String(options.procId), 128),
    headerField(String(alert.Action ?? ''), 32),
  ].join(' ');
  if (options.format === 'sd')
    return `${header} ${structuredData(alert, Object.keys(alert))} ${summaryOf(alert)}`;
  return `${header} ${structuredData(alert, KEY_FIELDS)} ${escapeControls(JSON.stringify(alert))}`;
}

/** Octet-counting framing (RFC 6587 §3.4.1): `LEN SP MSG`. */
export function frameOctetCounted(message: string): Buffer {
  const body = Buffer.from(message, 'utf8');
  return Buffer.concat([Buffer.from(`${body.length} `, 'ascii'), body]);
}
