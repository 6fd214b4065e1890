// The `--alert-output <spec>` syntax (docs/alerts.md "Alert outputs"), parsed as data. One spec is a URL whose
// scheme names the output; the query holds the output's options:
//   stdout[?minSeverity=N]                                   JSON lines on standard output
//   syslog+udp://HOST:PORT[?…]  syslog+tcp://HOST:PORT[?…]   RFC 5424 (TCP framed by octet counting, RFC 6587)
//   syslog+unix:///ABS/PATH[?…]                              RFC 5424 over a unix stream socket, octet-counted
//   http://HOST[:PORT]/PATH[?…]  https://…                   batched POSTs; option names below are taken out
//                                                            of the query, any other parameter stays in the URL
// Every output takes `minSeverity` (0–10: alerts below it are counted as filtered, never sent) and `name` (the
// output's name in /status and /metrics; default `<kind>-<position>`).
import { isIP } from 'node:net';

/** The kinds of output. */
export const OutputKind = { Stdout: 'stdout', Syslog: 'syslog', Http: 'http' } as const;
export type OutputKind = (typeof OutputKind)[keyof typeof OutputKind];

/** Syslog transports. */
export type SyslogTransport = 'udp' | 'tcp' | 'unix';

/** Options every output has. */
interface OutputCommon {
  name: string;
  /** Alerts with a lower numeric `Severity` are filtered (counted, not sent). 0 keeps every alert. */
  minSeverity: number;
  /** The spec as given, without credentials (for messages). */
  display: string;
}

/** JSON lines on stdout. */
export interface StdoutOutputSpec extends OutputCommon {
  kind: typeof OutputKind.Stdout;
  /** Bytes waiting in stdout at most; more alerts are dropped (counted). */
  maxBufferBytes: number;
}

/** RFC 5424 syslog. */
export interface SyslogOutputSpec extends OutputCommon {
  kind: typeof OutputKind.Syslog;
  transport: SyslogTransport;
  host: string;
  port: number;
  /** The unix socket path (transport unix). */
  path: string;
  /** Facility code 0–23. */
  facility: number;
  appName: string;
  /** `json`: the alert record as MSG (key fields in structured data too); `sd`: every field in structured data. */
  format: 'json' | 'sd';
  /** Frames waiting (stream transports) at most; more are dropped (counted). */
  queueSize: number;
}

/** HTTP webhook. */
export interface HttpOutputSpec extends OutputCommon {
  kind: typeof OutputKind.Http;
  url: string;
  /** `ndjson` (application/x-ndjson, one record per line) or `json` (a JSON array). */
  format: 'ndjson' | 'json';
  batchSize: number;
  flushMs: number;
  queueSize: number;
  /** Retries of one batch after its first attempt. */
  retries: number;
  backoffMs: number;
  maxBackoffMs: number;
  timeoutMs: number;
}

/** A parsed output spec. */
export type OutputSpec = StdoutOutputSpec | SyslogOutputSpec | HttpOutputSpec;

/** A refused spec: the message names the spec, the option and what was expected. */
export class OutputSpecError extends Error {
  readonly code = 'RT_OUTPUT_SPEC';
}

/** Syslog facility names (RFC 5424 table 1) and their codes. */
export const SYSLOG_FACILITIES: Readonly<Record<string, number>> = {
  kern: 0,
  user: 1,
  mail: 2,
  daemon: 3,
  auth: 4,
  syslog: 5,
  lpr: 6,
  news: 7,
  uucp: 8,
  cron: 9,
  authpriv: 10,
  ftp: 11,
  ntp: 12,
  security: 13,
  console: 14,
  solaris_cron: 15,
  local0: 16,
  local1: 17,
  local2: 18,
  local3: 19,
  local4: 20,
  local5: 21,
  local6: 22,
  local7: 23,
};

/** Defaults of the options. */
export const OUTPUT_DEFAULTS = {
  stdoutMaxBufferBytes: 4 * 1024 * 1024,
  facility: SYSLOG_FACILITIES['local0'] ?? 16,
  appName: 'rtctl',
  syslogQueueSize: 10000,
  httpBatchSize: 100,
  httpFlushMs: 1000,
  httpQueueSize: 10000,
  httpRetries: 5,
  httpBackoffMs: 500,
  httpMaxBackoffMs: 30000,
  httpTimeoutMs: 10000,
} as const;

const COMMON_KEYS = ['minSeverity', 'name'] as const;
const SYSLOG_KEYS = [...COMMON_KEYS, 'facility', 'appName', 'format', 'queueSize'] as const;
const HTTP_KEYS = [
  ...COMMON_KEYS,
  'format',
  'batchSize',
  'flushMs',
  'queueSize',
  'retries',
  'backoffMs',
  'maxBackoffMs',
  'timeoutMs',
] as const;
const STDOUT_KEYS = [...COMMON_KEYS, 'maxBufferBytes'] as const;

type Params = Map<string, string>;

function fail(display: string, message: string): never {
  throw new OutputSpecError(`--alert-output "${display}": ${message}`);
}

function takeInt(
  params: Params,
  key: string,
  min: number,
  max: number,
  fallback: number,
  display: string,
): number {
  const text = params.get(key);
  if (text === undefined) return fallback;
  if (!/^\d{1,10}$/.test(text) || Number(text) < min || Number(text) > max)
    fail(display, `${key}: "${text}" is not an integer from ${min} to ${max}`);
  return Number(text);
}

function takeName(params: Params, fallback: string, display: string): string {
  const name = params.get('name') ?? fallback;
  if (!/^[A-Za-z0-9][A-Za-z0-9_.-]{0,62}$/.test(name))
    fail(
      display,
      `name: "${name}" must be 1–63 letters, digits, '_', '.', '-' (starting with a letter or digit)`,
    );
  return name;
}

/** Refuses options the kind does not know (a typo is an error, never ignored). */
function checkKeys(params: Params, known: readonly string[], kind: string, display: string): void {
  for (const key of params.keys())
    if (!known.includes(key))
      fail(display, `unknown option "${key}" for ${kind} (known: ${known.join(', ')})`);
}

function queryParams(search: string, display: string): Params {
  const params: Params = new Map();
  for (const [k, v] of new URLSearchParams(search)) {
    if (params.has(k)) fail(display, `option "${k}" given twice`);
    params.set(k, v);
  }
  return params;
}

/** The spec without user:password, for messages and /status. */
function redact(text: string): string {
  return text.replace(/^([a-z+]+:\/\/)[^@/]*@/i, '$1***@');
}

function parseSyslog(
  text: string,
  transport: SyslogTransport,
  position: number,
  display: string,
): SyslogOutputSpec {
  const rest = text.slice(`syslog+${transport}://`.length);
  const q = rest.indexOf('?');
  const target = q < 0 ? rest : rest.slice(0, q);
  const params = queryParams(q < 0 ? '' : rest.slice(q + 1), display);
  checkKeys(params, SYSLOG_KEYS, `syslog+${transport}`, display);
  let host = '';
  let port = 0;
  let path = '';
  if (transport === 'unix') {
    path = decodeURIComponent(target);
    if (!path.startsWith('/'))
      fail(display, 'syslog+unix needs an absolute socket path (syslog+unix:///run/x.sock)');
    if (path.includes('\0') || Buffer.byteLength(path) > 107)
      fail(display, 'a unix socket path is at most 107 bytes and holds no NUL');
  } else {
    const m = /^(?:\[([^\]]+)\]|([^:[\]/]+)):(\d{1,5})$/.exec(target);
    if (m === null)
      fail(display, `syslog+${transport} needs HOST:PORT (IPv6 as [addr]:port), got "${target}"`);
    host = m[1] ?? m[2] ?? '';
    port = Number(m[3]);
    if (port < 1 || port > 65535) fail(display, `port ${port} is not from 1 to 65535`);
    if (isIP(host) === 0 && !/^[A-Za-z0-9.-]{1,253}$/.test(host)) fail(display, `"${host}" is not a host`);
  }
  const facilityText = params.get('facility') ?? 'local0';
  const facility = /^\d{1,2}$/.test(facilityText) ? Number(facilityText) : SYSLOG_FACILITIES[facilityText];
  if (facility === undefined || facility > 23)
    fail(
      display,
      `facility: "${facilityText}" is neither 0–23 nor a name (${Object.keys(SYSLOG_FACILITIES).join(', ')})`,
    );
  const appName = params.get('appName') ?? OUTPUT_DEFAULTS.appName;
  // RFC 5424 APP-NAME: 1–48 printable US-ASCII characters, no space.
  if (!/^[\x21-\x7e]{1,48}$/.test(appName))
    fail(display, `appName: "${appName}" must be 1–48 printable ASCII characters without spaces`);
  const format = params.get('format') ?? 'json';
  if (format !== 'json' && format !== 'sd') fail(display, `format: "${format}" is neither json nor sd`);
  return {
    kind: OutputKind.Syslog,
    name: takeName(params, `syslog-${position}`, display),
    minSeverity: takeInt(params, 'minSeverity', 0, 10, 0, display),
    display,
    transport,
    host,
    port,
    path,
    facility,
    appName,
    format,
    queueSize: takeInt(params, 'queueSize', 1, 1_000_000, OUTPUT_DEFAULTS.syslogQueueSize, display),
  };
}

function parseHttp(text: string, position: number, display: string): HttpOutputSpec {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    fail(display, 'not a URL');
  }
  const params: Params = new Map();
  for (const key of HTTP_KEYS) {
    const all = url.searchParams.getAll(key);
    if (all.length > 1) fail(display, `option "${key}" given twice`);
    if (all[0] !== undefined) params.set(key, all[0]);
    url.searchParams.delete(key);
  }
  const format = params.get('format') ?? 'ndjson';
  if (format !== 'ndjson' && format !== 'json')
    fail(display, `format: "${format}" is neither ndjson nor json`);
  const backoffMs = takeInt(params, 'backoffMs', 1, 600_000, OUTPUT_DEFAULTS.httpBackoffMs, display);
  const maxBackoffMs = takeInt(
    params,
    'maxBackoffMs',
    1,
    3_600_000,
    OUTPUT_DEFAULTS.httpMaxBackoffMs,
    display,
  );
  if (maxBackoffMs < backoffMs)
    fail(display, `maxBackoffMs (${maxBackoffMs}) is below backoffMs (${backoffMs})`);
  const batchSize = takeInt(params, 'batchSize', 1, 10_000, OUTPUT_DEFAULTS.httpBatchSize, display);
  const queueSize = takeInt(params, 'queueSize', 1, 1_000_000, OUTPUT_DEFAULTS.httpQueueSize, display);
  if (queueSize < batchSize) fail(display, `queueSize (${queueSize}) is below batchSize (${batchSize})`);
  return {
    kind: OutputKind.Http,
    name: takeName(params, `http-${position}`, display),
    minSeverity: takeInt(params, 'minSeverity', 0, 10, 0, display),
    display,
    url: url.toString(),
    format,
    batchSize,
    flushMs: takeInt(params, 'flushMs', 1, 3_600_000, OUTPUT_DEFAULTS.httpFlushMs, display),
    queueSize,
    retries: takeInt(params, 'retries', 0, 100, OUTPUT_DEFAULTS.httpRetries, display),
    backoffMs,
    maxBackoffMs,
    timeoutMs: takeInt(params, 'timeoutMs', 1, 600_000, OUTPUT_DEFAULTS.httpTimeoutMs, display),
  };
}

/** Parses one spec (`position` is its 1-based place among the flags, for the default name). */
export function parseOutputSpec(text: string, position = 1): OutputSpec {
  const display = redact(text);
  if (text.length > 4096) fail(display.slice(0, 64), 'longer than 4096 characters');
  if (text === 'stdout' || text.startsWith('stdout?')) {
    const params = queryParams(text.slice('stdout'.length + 1), display);
    checkKeys(params, STDOUT_KEYS, 'stdout', display);
    return {
      kind: OutputKind.Stdout,
      name: takeName(params, `stdout-${position}`, display),
      minSeverity: takeInt(params, 'minSeverity', 0, 10, 0, display),
      display,
      maxBufferBytes: takeInt(
        params,
        'maxBufferBytes',
        1024,
        1 << 30,
        OUTPUT_DEFAULTS.stdoutMaxBufferBytes,
        display,
      ),
    };
  }
  for (const transport of ['udp', 'tcp', 'unix'] as const)
    if (text.startsWith(`syslog+${transport}://`)) return parseSyslog(text, transport, position, display);
  if (text.startsWith('http://') || text.startsWith('https://')) return parseHttp(text, position, display);
  return fail(
    display,
    'unknown output: expected stdout, syslog+udp://HOST:PORT, syslog+tcp://HOST:PORT, syslog+unix:///PATH, http(s)://URL',
  );
}

/** Parses every spec; names must be unique. */
export function parseOutputSpecs(texts: readonly string[]): OutputSpec[] {
  const specs = texts.map((t, i) => parseOutputSpec(t, i + 1));
  const seen = new Set<string>();
  for (const s of specs) {
    if (seen.has(s.name))
      throw new OutputSpecError(`--alert-output "${s.display}": name "${s.name}" is used twice`);
    seen.add(s.name);
  }
  return specs;
}
