// Schema validation with ajv. Every document goes through a first-error validator compiled from the schema
// split into one function per section (the common, clean case ends there). A document that fails is validated
// again: exhaustively, on a bounded copy (clip-for-report.ts, so the cost does not grow with the document),
// and its errors are translated into findings with stable codes and messages that name the field, the value
// and the expectation. The validators of failing documents are compiled only when one fails.
import { Code } from '../diagnostics/codes/code.js';
import { Ajv } from 'ajv';
import type { ErrorObject, ValidateFunction } from 'ajv';
import type { Finding } from '../diagnostics/finding.js';
import { pointerToPath } from '../diagnostics/diagnostic.js';
import { PolicyKind } from '../ir/rule-set.js';
import { clipForReport } from './clip-for-report.js';
import { RUNTIME_HOST_POLICY_SCHEMA, RUNTIME_POLICY_SCHEMA } from './policy-schema.js';

/**
 * A kind's validators, each compiled on first use: `check`, the first-error validator of the split schema
 * (every document goes through it); `first`, the same on the schema as written, whose first error is the one a
 * finding is made of when the exhaustive pass finds none; `full`, the exhaustive one. Only `check` runs on a
 * document that passes.
 */
export class Validators {
  private checkValidator: ValidateFunction | undefined;
  private firstValidator: ValidateFunction | undefined;
  private fullValidator: ValidateFunction | undefined;

  constructor(private readonly schema: SchemaObject) {}

  get check(): ValidateFunction {
    this.checkValidator ??= new Ajv({ ...AJV_OPTIONS, allErrors: false, inlineRefs: false }).compile(
      splitSchema(this.schema),
    );
    return this.checkValidator;
  }

  get first(): ValidateFunction {
    // verbose: the first error is translated when the bounded exhaustive pass finds none.
    this.firstValidator ??= new Ajv({ ...AJV_OPTIONS, allErrors: false, verbose: true }).compile(this.schema);
    return this.firstValidator;
  }

  get full(): ValidateFunction {
    this.fullValidator ??= new Ajv({ ...AJV_OPTIONS, allErrors: true, verbose: true }).compile(this.schema);
    return this.fullValidator;
  }
}

const AJV_OPTIONS = { strict: true, strictRequired: false, formats: { int32: true } } as const;

/** A JSON Schema object, as far as splitting reads it. */
type SchemaObject = { type?: unknown; properties?: Record<string, SchemaObject> } & Record<string, unknown>;

/** True for the schema of a mapping or a list: worth a function of its own. */
function isCollectionSchema(schema: SchemaObject | undefined): boolean {
  return schema?.type === 'object' || schema?.type === 'array';
}

/**
 * The same schema with every collection under `metadata` and `spec` moved to `$defs` and referenced. Compiled
 * with `inlineRefs: false`, each becomes a function of its own: ajv otherwise makes one function of the whole
 * schema, too large for V8 to optimise, and the split one runs several times faster. It accepts exactly what
 * the schema as written accepts (a test holds them to it).
 */
export function splitSchema(schema: SchemaObject): SchemaObject {
  const $defs: Record<string, SchemaObject> = {};
  const properties: Record<string, SchemaObject> = { ...schema.properties };
  for (const top of ['metadata', 'spec']) {
    const node = properties[top];
    if (node?.properties === undefined) continue;
    const inner: Record<string, SchemaObject> = {};
    for (const [name, child] of Object.entries(node.properties)) {
      if (!isCollectionSchema(child)) {
        inner[name] = child;
        continue;
      }
      const def = `${top}_${name}`;
      $defs[def] = child;
      inner[name] = { $ref: `#/$defs/${def}` };
    }
    properties[top] = { ...node, properties: inner };
  }
  return { ...schema, properties, $defs };
}

const VALIDATORS: Record<PolicyKind, Validators> = {
  RuntimePolicy: new Validators(RUNTIME_POLICY_SCHEMA),
  RuntimeHostPolicy: new Validators(RUNTIME_HOST_POLICY_SCHEMA),
};

/** The validators of a kind (for the test that holds the split schema to the schema as written). */
export function getSchemaValidators(kind: PolicyKind): Validators {
  return VALIDATORS[kind];
}

/** Validates a policy object of the given kind against its schema; returns [] when valid. */
export function validatePolicySchema(kind: PolicyKind, object: unknown): Finding[] {
  const v = VALIDATORS[kind];
  if (v.check(object)) return [];
  const firstPass = v.first;
  firstPass(object);
  const first = firstPass.errors?.[0];
  const full = v.full;
  full(clipForReport(object).value);
  const findings = (full.errors ?? []).flatMap((e) => translateError(kind, e));
  if (findings.length === 0 && first !== undefined) findings.push(...translateError(kind, first));
  return dedupe(findings);
}

function dedupe(findings: Finding[]): Finding[] {
  const seen = new Set<string>();
  return findings.filter((f) => {
    const key = `${f.code}\u0000${f.pointer}\u0000${f.message}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'object') return 'a mapping';
  return `${typeof value} ${shorten(value)}`;
}

/** JSON of a value, cut to `max` characters for messages. */
function shorten(value: unknown, max = 60): string {
  const s = typeof value === 'string' && value.length > max ? value.slice(0, max) : value;
  const text = JSON.stringify(s) ?? String(s);
  return text.length > max ? `${text.slice(0, max - 3)}...` : text;
}

function finding(code: string, pointer: string, message: string): Finding {
  return { code, severity: 'error', pointer, message: `${pointerToPath(pointer)}: ${message}` };
}

const PATH_FIELDS = new Set(['path']);
const DIR_FIELDS = new Set(['dir']);

/** Levenshtein distance, for "did you mean" hints on unknown fields. */
function distance(a: string, b: string): number {
  const row = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    let prev = row[0] ?? 0;
    row[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const tmp = row[j] ?? 0;
      row[j] = Math.min((row[j] ?? 0) + 1, (row[j - 1] ?? 0) + 1, prev + (a[i - 1] === b[j - 1] ? 0 : 1));
      prev = tmp;
    }
  }
  return row[b.length] ?? 0;
}

/** Longest field name compared for a hint (the distance costs the product of the lengths). */
const MAX_SUGGEST_LENGTH = 64;

function suggest(name: string, candidates: readonly string[]): string {
  if (name.length > MAX_SUGGEST_LENGTH) return '';
  let best: string | undefined;
  let bestD = Infinity;
  for (const c of candidates) {
    const d = distance(name.toLowerCase(), c.toLowerCase());
    if (d < bestD) {
      bestD = d;
      best = c;
    }
  }
  return best !== undefined && bestD <= Math.max(2, Math.floor(name.length / 3))
    ? ` (did you mean "${best}"?)`
    : '';
}

function propertiesOf(schema: unknown): string[] {
  if (schema !== null && typeof schema === 'object' && 'properties' in schema) {
    const props = schema.properties;
    if (props !== null && typeof props === 'object') return Object.keys(props);
  }
  return [];
}

function lastSegment(pointer: string): string {
  const i = pointer.lastIndexOf('/');
  return pointer
    .slice(i + 1)
    .replace(/~1/g, '/')
    .replace(/~0/g, '~');
}

function translateError(kind: PolicyKind, e: ErrorObject): Finding[] {
  // Errors inside a oneOf branch are explained by the oneOf error itself.
  if (e.schemaPath.includes('/oneOf/')) return [];
  const at = e.instancePath;
  const field = lastSegment(at);
  switch (e.keyword) {
    case 'additionalProperties': {
      const name = String((e.params as { additionalProperty: string }).additionalProperty);
      const shown = name.length > 200 ? `${name.slice(0, 200)}...` : name;
      const pointer = `${at}/${name.replace(/~/g, '~0').replace(/\//g, '~1')}`;
      if (kind === PolicyKind.RuntimeHostPolicy && at === '/spec' && name === 'selector') {
        return [
          {
            code: Code.hostPolicyWithSelector,
            severity: 'error',
            pointer,
            message:
              'spec.selector: a RuntimeHostPolicy selects nodes; write spec.nodeSelector.matchLabels instead',
          },
        ];
      }
      const allowed = propertiesOf(e.parentSchema);
      return [
        finding(
          Code.unknownField,
          pointer,
          `unknown field "${shown}"${suggest(name, allowed)}; expected one of: ${allowed.join(', ')}`,
        ),
      ];
    }
    case 'required': {
      const missing = String((e.params as { missingProperty: string }).missingProperty);
      if (at === '/spec' && missing === 'selector') {
        return [
          finding(
            Code.missingSelector,
            at,
            'selector is required: a RuntimePolicy must say which pods it applies to; write `selector: {matchLabels: {}}` to select every pod of the namespace, or list the labels to select',
          ),
        ];
      }
      if (at === '/spec' && missing === 'nodeSelector') {
        return [
          finding(
            Code.missingNodeSelector,
            at,
            'nodeSelector is required: a RuntimeHostPolicy must say which nodes it applies to (`nodeSelector: {matchLabels: {kubernetes.io/hostname: "*"}}` selects every node)',
          ),
        ];
      }
      return [finding(Code.missingField, at, `missing required field "${missing}"`)];
    }
    case 'type': {
      const expected = String((e.params as { type: string }).type);
      return [
        finding(
          Code.wrongType,
          at,
          `expected ${expected === 'object' ? 'a mapping' : expected === 'array' ? 'a list' : expected}, found ${describe(e.data)}`,
        ),
      ];
    }
    case 'enum': {
      const allowed = (e.params as { allowedValues: unknown[] }).allowedValues;
      const list =
        allowed.length > 12
          ? 'a Linux system call name'
          : `one of ${allowed.map((a) => JSON.stringify(a)).join(', ')}`;
      return [finding(Code.notAllowedValue, at, `${describe(e.data)} is not allowed; expected ${list}`)];
    }
    case 'pattern':
      return [translatePattern(at, field, e.data)];
    case 'minimum':
    case 'maximum': {
      const limit = (e.params as { limit: number }).limit;
      return [
        finding(
          Code.outOfRange,
          at,
          `${describe(e.data)} is ${e.keyword === 'minimum' ? 'below the minimum' : 'above the maximum'} ${limit}${field === 'severity' ? ' (severity is 1 to 10)' : ''}`,
        ),
      ];
    }
    case 'maxLength':
    case 'minLength':
    case 'maxItems':
    case 'minItems': {
      const limit = (e.params as { limit: number }).limit;
      const what = e.keyword.endsWith('Length') ? 'characters' : 'items';
      const bound = e.keyword.startsWith('max') ? 'at most' : 'at least';
      return [finding(Code.badLength, at, `expected ${bound} ${limit} ${what}`)];
    }
    case 'oneOf': {
      const names = (e.schema as Array<{ required: string[] }>).map((b) => b.required.join('')).join(' or ');
      return [finding(Code.oneOf, at, `write exactly one of ${names}`)];
    }
    default:
      return [finding(Code.patternMismatch, at, `${describe(e.data)} ${e.message ?? 'is not valid'}`)];
  }
}

function translatePattern(at: string, field: string, data: unknown): Finding {
  const value = typeof data === 'string' ? data : '';
  const shown = shorten(value, 200);
  if (PATH_FIELDS.has(field) || DIR_FIELDS.has(field)) {
    if (!value.startsWith('/')) {
      return finding(
        Code.relativePath,
        at,
        `${shown} is a relative path; rules match absolute paths only (start it with /)`,
      );
    }
    if (DIR_FIELDS.has(field)) {
      return finding(
        Code.directoryWithoutSlash,
        at,
        `directory ${shown} does not end in /; write ${JSON.stringify(`${value}/`)}`,
      );
    }
    if (at.includes('/syscalls/')) {
      return finding(Code.patternMismatch, at, `${shown} is not an absolute file or directory path`);
    }
    return finding(
      Code.pathEndsWithSlash,
      at,
      `path ${shown} ends in /; use matchDirectories with dir: ${shown} for a directory`,
    );
  }
  if (field === 'protocol') {
    return finding(
      Code.unknownProtocol,
      at,
      `unknown protocol ${shown}; expected one of tcp, udp, icmp, icmpv6, raw, sctp, stream, dgram, rdm, seqpacket, dccp, packet, all (lower or upper case)`,
    );
  }
  if (field === 'capability') {
    const hint =
      /^cap_/i.test(value) || value !== value.toLowerCase()
        ? ` (write ${JSON.stringify(value.toLowerCase().replace(/^cap_/, ''))})`
        : '';
    return finding(
      Code.unknownCapability,
      at,
      `unknown capability ${shown}${hint}; expected a capability name such as net_raw or sys_admin`,
    );
  }
  if (field === 'execname') {
    return finding(
      Code.patternMismatch,
      at,
      `execname ${shown} must be a bare binary name without /; use path for a full path`,
    );
  }
  if (/\/matchExpressions\/\d+\/values\/\d+$/.test(at)) {
    return finding(Code.patternMismatch, at, `${shown} must be a label written as key=value`);
  }
  return finding(Code.patternMismatch, at, `${shown} does not have the required form`);
}
