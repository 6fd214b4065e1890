// The enforcer's configuration file (`/etc/rtctl/enforcer.yaml`, or `--config <file>`): one YAML document,
// parsed by the compiler's YAML reader (positions for every node), validated with ajv against the schema below,
// and turned into the same flags the command line gives. Flags given on the command line override the file
// (docs/enforcer.md "Configuration file"). Every mistake is a diagnostic with a code, the file, the line and
// the column, printed like lint's.
import { readFileSync } from 'node:fs';
import { Ajv, type ErrorObject } from 'ajv';
import { Code } from '../compiler/diagnostics/codes/code.js';
import { pointerToPath, type Diagnostic } from '../compiler/diagnostics/diagnostic.js';
import { formatText } from '../compiler/format/format-text.js';
import { decodeText } from '../compiler/parse/decode-text.js';
import { LineIndex } from '../compiler/parse/line-index.js';
import { parseYaml } from '../compiler/parse/parse-yaml.js';
import { AlertAddressError, parseAlertAddress } from './alerts/alert-address.js';
import { ConfigError, parseSize, type EnforcerFlags } from './config.js';
import { lookupGroupId } from './io/group-id.js';

/** Where the enforcer looks for its configuration when `--config` is not given. */
export const DEFAULT_CONFIG_FILE = '/etc/rtctl/enforcer.yaml';

/** The configuration file's apiVersion and kind. */
export const CONFIG_API_VERSION = 'security.runtime.com/v1';
export const CONFIG_KIND = 'EnforcerConfiguration';

/** A configuration file bigger than this is refused unread. */
const MAX_CONFIG_BYTES = 1024 * 1024;

const absolutePath = { type: 'string', pattern: '^/[^\\u0000]*$', maxLength: 4096 } as const;
const posture = { type: 'string', enum: ['audit', 'block'] } as const;
const postures = {
  oneOf: [
    posture,
    {
      type: 'object',
      additionalProperties: false,
      properties: { file: posture, network: posture, capabilities: posture },
    },
  ],
} as const;
const namespaceName = {
  type: 'string',
  pattern: '^[a-z0-9]([-a-z0-9]*[a-z0-9])?$',
  maxLength: 63,
} as const;

/** The JSON Schema of the configuration file. */
export const ENFORCER_CONFIG_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  required: ['apiVersion', 'kind'],
  properties: {
    apiVersion: { const: CONFIG_API_VERSION },
    kind: { const: CONFIG_KIND },
    policyDir: absolutePath,
    kubernetes: { type: 'boolean' },
    kubeconfig: absolutePath,
    ruleTable: absolutePath,
    nodeName: { type: 'string', pattern: '^[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$', maxLength: 253 },
    nodeLabels: {
      type: 'object',
      propertyNames: { pattern: '^[A-Za-z0-9]([-A-Za-z0-9_./]*[A-Za-z0-9])?$', maxLength: 316 },
      additionalProperties: { type: 'string', maxLength: 63 },
    },
    clusterName: { type: 'string', minLength: 1, maxLength: 253 },
    dataPlane: { type: 'string', pattern: '^[a-z][-a-z0-9]*$', maxLength: 63 },
    stateDir: absolutePath,
    pollMs: { type: 'integer', minimum: 50, maximum: 3600000 },
    releaseOnExit: { type: 'boolean' },
    postures: {
      type: 'object',
      additionalProperties: false,
      properties: { host: postures, defaults: postures },
    },
    containers: {
      type: 'object',
      additionalProperties: false,
      properties: {
        socket: absolutePath,
        namespaces: {
          type: 'array',
          minItems: 1,
          maxItems: 64,
          uniqueItems: true,
          items: { type: 'string', pattern: '^[A-Za-z0-9][A-Za-z0-9._-]*$', maxLength: 76 },
        },
        nonKubernetesNamespace: namespaceName,
        discovery: { type: 'string', enum: ['events', 'poll'] },
        resyncMs: { type: 'integer', minimum: 1000, maximum: 3600000 },
      },
    },
    alertLog: {
      type: 'object',
      additionalProperties: false,
      required: ['path'],
      properties: {
        path: absolutePath,
        maxBytes: {
          oneOf: [
            { type: 'integer', minimum: 1 },
            { type: 'string', pattern: '^\\d{1,12}([KMGkmg]i?[Bb]?)?$' },
          ],
        },
        files: { type: 'integer', minimum: 1, maximum: 1000 },
      },
    },
    listen: {
      type: 'object',
      additionalProperties: false,
      properties: {
        socket: absolutePath,
        tcp: { type: 'string', minLength: 1, maxLength: 300 },
        group: {
          oneOf: [
            { type: 'string', minLength: 1, maxLength: 64 },
            { type: 'integer', minimum: 0 },
          ],
        },
        maxConnections: { type: 'integer', minimum: 1, maximum: 65536 },
      },
    },
  },
} as const;

/** The configuration file could not be used: every diagnostic, and the file's text for code frames. */
export class ConfigFileError extends ConfigError {
  constructor(
    readonly diagnostics: Diagnostic[],
    readonly text: string | undefined,
  ) {
    super(
      formatText(diagnostics, {
        texts: new Map(text === undefined ? [] : diagnostics.map((d) => [d.file, text])),
      }).trimEnd(),
    );
  }
}

let validator: ReturnType<Ajv['compile']> | undefined;

/** What the file sets, as flags (`EnforcerFlags` keys), before the command line overrides them. */
export type FileFlags = Partial<EnforcerFlags>;

/** One finding at a JSON pointer of the document (or the whole file). */
interface Problem {
  code: string;
  pointer: string;
  message: string;
}

function describeValue(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'object') return 'a mapping';
  const text = JSON.stringify(value) ?? typeof value;
  return `${typeof value} ${text.length > 60 ? `${text.slice(0, 57)}...` : text}`;
}

/** ajv errors as problems with stable codes; `oneOf` branches are summarized by the schema's alternatives. */
function translate(errors: readonly ErrorObject[]): Problem[] {
  const problems: Problem[] = [];
  // A value that fits no alternative of a `oneOf`: a mapping is reported by the mapping alternative's own
  // errors (an unknown class, a bad value); anything else by one message naming the alternatives.
  const oneOfData = new Map(errors.filter((e) => e.keyword === 'oneOf').map((e) => [e.instancePath, e.data]));
  const isMapping = (v: unknown): boolean => v !== null && typeof v === 'object' && !Array.isArray(v);
  for (const e of errors) {
    const at = e.instancePath;
    if (e.keyword === 'oneOf' && isMapping(e.data) && e.schemaPath.includes('postures')) continue;
    if (e.keyword !== 'oneOf' && e.schemaPath.includes('/oneOf/')) {
      const owner = [...oneOfData.keys()]
        .filter((p) => at === p || at.startsWith(`${p}/`))
        .sort((a, b) => b.length - a.length)[0];
      if (owner !== undefined) {
        const data = oneOfData.get(owner);
        if (!isMapping(data) || !/\/oneOf\/1\//.test(e.schemaPath)) continue;
      }
    }
    switch (e.keyword) {
      case 'additionalProperties': {
        const key = (e.params as { additionalProperty: string }).additionalProperty;
        const known = Object.keys((e.parentSchema as { properties?: object }).properties ?? {});
        problems.push({
          code: Code.unknownField,
          pointer: `${at}/${key.replace(/~/g, '~0').replace(/\//g, '~1')}`,
          message: `unknown field "${key}"${known.length > 0 ? ` (known: ${known.join(', ')})` : ''}`,
        });
        break;
      }
      case 'required':
        problems.push({
          code: Code.missingField,
          pointer: at,
          message: `missing field "${(e.params as { missingProperty: string }).missingProperty}"`,
        });
        break;
      case 'type':
        problems.push({
          code: Code.wrongType,
          pointer: at,
          message: `expected ${String((e.params as { type: string }).type)}, found ${describeValue(e.data)}`,
        });
        break;
      case 'const':
        problems.push({
          code: Code.notAllowedValue,
          pointer: at,
          message: `must be ${JSON.stringify((e.params as { allowedValue: unknown }).allowedValue)}, found ${describeValue(e.data)}`,
        });
        break;
      case 'enum':
        problems.push({
          code: Code.notAllowedValue,
          pointer: at,
          message: `must be one of ${(e.params as { allowedValues: unknown[] }).allowedValues.map((v) => JSON.stringify(v)).join(', ')}, found ${describeValue(e.data)}`,
        });
        break;
      case 'oneOf': {
        const alternatives = at.endsWith('/maxBytes')
          ? 'a size in bytes (67108864) or with a suffix ("64M", "1G")'
          : at.endsWith('/group')
            ? 'a group name or a group id'
            : 'audit, block, or a mapping of file, network, capabilities to audit or block';
        problems.push({
          code: Code.wrongType,
          pointer: at,
          message: `expected ${alternatives}, found ${describeValue(e.data)}`,
        });
        break;
      }
      case 'pattern':
        problems.push({
          code: Code.patternMismatch,
          pointer: at,
          message:
            at.endsWith('Dir') ||
            at.endsWith('/path') ||
            at.endsWith('/socket') ||
            at.endsWith('config') ||
            at.endsWith('ruleTable')
              ? `expected an absolute path, found ${describeValue(e.data)}`
              : `${describeValue(e.data)} does not have the required form (${String((e.params as { pattern: string }).pattern)})`,
        });
        break;
      case 'propertyNames':
        break; // the pattern error of the name itself follows
      case 'minimum':
      case 'maximum':
        problems.push({
          code: Code.outOfRange,
          pointer: at,
          message: `${describeValue(e.data)} is out of range (${e.keyword} ${String((e.params as { limit: number }).limit)})`,
        });
        break;
      default:
        problems.push({
          code: Code.wrongType,
          pointer: at,
          message: `${describeValue(e.data)}: ${e.message ?? 'not valid'}`,
        });
    }
  }
  const seen = new Set<string>();
  return problems.filter((p) => {
    const key = `${p.code}\u0000${p.pointer}\u0000${p.message}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

type Doc = Record<string, unknown>;

const get = (doc: Doc, section: string): Doc | undefined => {
  const v = doc[section];
  return v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Doc) : undefined;
};

function postureFlag(value: unknown): string | undefined {
  if (value === undefined) return undefined;
  if (typeof value === 'string') return value;
  return Object.entries(value as Record<string, string>)
    .map(([k, v]) => `${k}=${v}`)
    .join(',');
}

/**
 * Checks what the schema cannot (addresses, groups, sizes, one policy source, one listen address) and maps the
 * document to flags. Problems are collected, not thrown.
 */
function toFlags(doc: Doc, problems: Problem[], lookupGroup: typeof lookupGroupId): FileFlags {
  const flags: FileFlags = {};
  const sources = (['policyDir', 'kubernetes', 'ruleTable'] as const).filter((k) =>
    k === 'kubernetes' ? doc[k] === true : doc[k] !== undefined,
  );
  if (sources.length > 1)
    problems.push({
      code: Code.notAllowedValue,
      pointer: `/${sources[1] ?? ''}`,
      message: `give one policy source: ${sources.join(' and ')} are both set`,
    });
  if (typeof doc['policyDir'] === 'string') flags.policyDir = doc['policyDir'];
  if (doc['kubernetes'] === true) flags.kubernetes = true;
  if (typeof doc['kubeconfig'] === 'string') flags.kubeconfig = doc['kubeconfig'];
  if (typeof doc['ruleTable'] === 'string') flags.ruleTable = doc['ruleTable'];
  if (typeof doc['nodeName'] === 'string') flags.nodeName = doc['nodeName'];
  const labels = get(doc, 'nodeLabels');
  if (labels) flags.nodeLabel = Object.entries(labels).map(([k, v]) => `${k}=${String(v)}`);
  if (typeof doc['clusterName'] === 'string') flags.clusterName = doc['clusterName'];
  if (typeof doc['dataPlane'] === 'string') flags.dataPlane = doc['dataPlane'];
  if (typeof doc['stateDir'] === 'string') flags.stateDir = doc['stateDir'];
  if (typeof doc['pollMs'] === 'number') flags.pollMs = String(doc['pollMs']);
  if (typeof doc['releaseOnExit'] === 'boolean') flags.releaseOnExit = doc['releaseOnExit'];
  const postures = get(doc, 'postures');
  const host = postureFlag(postures?.['host']);
  const defaults = postureFlag(postures?.['defaults']);
  if (host !== undefined) flags.hostPosture = host;
  if (defaults !== undefined) flags.defaultPosture = defaults;
  const containers = get(doc, 'containers');
  if (typeof containers?.['socket'] === 'string') flags.containerdSocket = containers['socket'];
  if (Array.isArray(containers?.['namespaces']))
    flags.containerdNamespace = (containers['namespaces'] as string[]).join(',');
  if (typeof containers?.['nonKubernetesNamespace'] === 'string')
    flags.nonKubernetesNamespace = containers['nonKubernetesNamespace'];
  if (typeof containers?.['discovery'] === 'string') flags.containerDiscovery = containers['discovery'];
  if (typeof containers?.['resyncMs'] === 'number') flags.resyncMs = String(containers['resyncMs']);
  const alertLog = get(doc, 'alertLog');
  if (typeof alertLog?.['path'] === 'string') flags.alertLog = alertLog['path'];
  const maxBytes = alertLog?.['maxBytes'];
  if (typeof maxBytes === 'number' || typeof maxBytes === 'string') {
    try {
      parseSize('size', String(maxBytes));
      flags.alertLogMaxBytes = String(maxBytes);
    } catch (err) {
      if (!(err instanceof ConfigError)) throw err;
      problems.push({ code: Code.outOfRange, pointer: '/alertLog/maxBytes', message: err.message });
    }
  }
  if (typeof alertLog?.['files'] === 'number') flags.alertLogFiles = String(alertLog['files']);
  const listen = get(doc, 'listen');
  const socket = listen?.['socket'];
  const tcp = listen?.['tcp'];
  if (typeof socket === 'string' && typeof tcp === 'string') {
    problems.push({
      code: Code.notAllowedValue,
      pointer: '/listen/tcp',
      message:
        'the alert stream is served on one address: give listen.socket or listen.tcp (opt-in), not both',
    });
  }
  for (const [key, value] of [
    ['socket', typeof socket === 'string' ? `unix:${socket}` : undefined],
    ['tcp', tcp],
  ] as const) {
    if (typeof value !== 'string') continue;
    try {
      const address = parseAlertAddress(value);
      if (key === 'tcp' && address.kind !== 'tcp') throw new AlertAddressError(`"${value}" is not host:port`);
      flags.listen = value;
    } catch (err) {
      if (!(err instanceof AlertAddressError)) throw err;
      problems.push({ code: Code.patternMismatch, pointer: `/listen/${key}`, message: err.message });
    }
  }
  const group = listen?.['group'];
  if (typeof group === 'string' || typeof group === 'number') {
    if (lookupGroup(String(group)) === undefined)
      problems.push({ code: Code.notAllowedValue, pointer: '/listen/group', message: `no group "${group}"` });
    else flags.group = String(group);
  }
  if (typeof listen?.['maxConnections'] === 'number') flags.maxConnections = String(listen['maxConnections']);
  return flags;
}

/** Parses and validates a configuration text; throws ConfigFileError with every problem found. */
export function parseEnforcerConfigText(
  file: string,
  text: string,
  lookupGroup: typeof lookupGroupId = lookupGroupId,
): FileFlags {
  const yaml = parseYaml(text);
  const lines = new LineIndex(text);
  const diagnostics: Diagnostic[] = [];
  const place = (
    code: string,
    message: string,
    offset: number,
    endOffset: number | undefined,
    pointer: string,
  ): void => {
    const d: Diagnostic = {
      code,
      severity: 'error',
      message,
      file,
      start: lines.positionAt(offset),
      pointer,
      document: 0,
    };
    if (endOffset !== undefined) d.end = lines.positionAt(endOffset);
    diagnostics.push(d);
  };
  for (const f of yaml.findings) {
    if (f.finding.severity === 'error') place(f.finding.code, f.finding.message, f.offset, f.endOffset, '');
  }
  if (diagnostics.length > 0) throw new ConfigFileError(diagnostics, text);
  const docs = yaml.documents.filter((d) => d.value !== null && d.value !== undefined);
  if (docs.length !== 1) {
    place(
      Code.notAMapping,
      docs.length === 0
        ? `the file holds no configuration: expected one mapping with apiVersion: ${CONFIG_API_VERSION} and kind: ${CONFIG_KIND}`
        : `the file holds ${docs.length} YAML documents; the configuration is one`,
      docs.length === 0 ? 0 : yaml.documentOffset(docs[1]?.index ?? 0),
      undefined,
      '',
    );
    throw new ConfigFileError(diagnostics, text);
  }
  const doc = docs[0];
  if (doc === undefined) throw new Error('unreachable');
  if (typeof doc.value !== 'object' || Array.isArray(doc.value)) {
    place(
      Code.notAMapping,
      `the configuration must be a mapping, found ${describeValue(doc.value)}`,
      yaml.documentOffset(doc.index),
      undefined,
      '',
    );
    throw new ConfigFileError(diagnostics, text);
  }
  validator ??= new Ajv({ strict: true, allErrors: true, verbose: true }).compile(ENFORCER_CONFIG_SCHEMA);
  const problems: Problem[] = [];
  if (!validator(doc.value)) problems.push(...translate(validator.errors ?? []));
  // What the schema cannot check is checked too, so one run shows every mistake.
  const semantic: Problem[] = [];
  const flags = toFlags(doc.value as Doc, semantic, lookupGroup);
  const reported = new Set(problems.map((p) => p.pointer));
  problems.push(...semantic.filter((p) => !reported.has(p.pointer)));
  for (const p of problems) {
    const range = yaml.locate(doc.index, p.pointer);
    const path = pointerToPath(p.pointer);
    place(
      p.code,
      path === '' ? p.message : `${path}: ${p.message}`,
      range?.offset ?? yaml.documentOffset(doc.index),
      range?.endOffset,
      p.pointer,
    );
  }
  if (diagnostics.length > 0) {
    diagnostics.sort((a, b) => (a.start?.offset ?? 0) - (b.start?.offset ?? 0));
    throw new ConfigFileError(diagnostics, text);
  }
  return flags;
}

/**
 * Reads the configuration file. A missing file is no error when it is the default path and was not asked for
 * (`required` false): the flags alone configure the enforcer then.
 */
export function readEnforcerConfigFile(
  file: string,
  options: { required: boolean; lookupGroup?: typeof lookupGroupId },
): FileFlags | undefined {
  let bytes: Buffer;
  try {
    bytes = readFileSync(file);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' && !options.required) return undefined;
    throw new ConfigFileError(
      [
        {
          code: Code.readFailed,
          severity: 'error',
          message: `cannot read the configuration file: ${code ?? (err instanceof Error ? err.message : String(err))}`,
          file,
          pointer: '',
          document: 0,
        },
      ],
      undefined,
    );
  }
  const decoded = decodeText(bytes, MAX_CONFIG_BYTES);
  if (!decoded.ok) {
    throw new ConfigFileError(
      [
        {
          code: decoded.finding.code,
          message: decoded.finding.message,
          file,
          pointer: '',
          document: 0,
          severity: 'error',
        },
      ],
      undefined,
    );
  }
  return parseEnforcerConfigText(file, decoded.text, options.lookupGroup);
}

/** Flags of the command line over the file's: a policy source given on the command line replaces the file's. */
export function mergeConfigFlags(
  defaults: EnforcerFlags,
  file: FileFlags | undefined,
  explicit: Partial<EnforcerFlags>,
): EnforcerFlags {
  const base: Partial<EnforcerFlags> = { ...file };
  const cliSource =
    explicit.policyDir !== undefined || explicit.kubernetes === true || explicit.ruleTable !== undefined;
  if (cliSource) {
    delete base.policyDir;
    delete base.kubernetes;
    delete base.ruleTable;
    delete base.kubeconfig;
  }
  const merged: EnforcerFlags = { ...defaults, ...base, ...explicit };
  // Node labels: the file's, then the command line's (a key given on both takes the command line's value).
  merged.nodeLabel = [...(file?.nodeLabel ?? []), ...(explicit.nodeLabel ?? [])];
  return merged;
}

/**
 * The flags `rtctl enforcer run` runs with: the configuration file's (`config`: a path, or false for
 * `--no-config`) under the ones given on the command line (`isExplicit` tells them from commander's defaults).
 */
export function resolveEnforcerFlags(
  flags: EnforcerFlags & { config?: string | false },
  isExplicit: (key: string) => boolean,
): EnforcerFlags {
  const { config, ...rest } = flags;
  const defaults: EnforcerFlags = { ...rest };
  const explicit: Partial<EnforcerFlags> = {};
  for (const [key, value] of Object.entries(rest)) {
    if (isExplicit(key)) (explicit as Record<string, unknown>)[key] = value;
  }
  if (config === false) return rest;
  const path = config ?? DEFAULT_CONFIG_FILE;
  const file = readEnforcerConfigFile(path, { required: config !== undefined && isExplicit('config') });
  return mergeConfigFlags(defaults, file, explicit);
}
