// Evaluates the IMDS policy over one object of a kind in the node-kinds table: resolves each option (set,
// or the kind's default), then applies the policy. Pure: returns findings with JSON pointers.
import { JSONPath } from 'jsonpath-plus';
import { Severity } from '../diagnostics/diagnostic.js';
import type { Finding } from '../diagnostics/finding.js';
import { AdmissionCode } from '../diagnostics/codes/admission.js';
import {
  HttpEndpoint,
  HttpTokens,
  InstanceMetadataTags,
  HOP_LIMIT_MAX,
  HOP_LIMIT_MIN,
  isOneOf,
  isValidHopLimit,
} from '../instance-metadata-options/options.js';
import { describeValue, isRecord } from '../model/json-value.js';
import { ImdsOption, type FieldSpec, type ImdsValues, type NodeKind } from './node-kinds.js';

/** The annotation that accepts a hop limit above 1; its value is the reason, echoed in the warning. */
export const ALLOW_POD_IMDS_ANNOTATION = 'security.runtime.com/allow-pod-imds';

/** One option after resolution: its value, where it is (or would be), and whether it was defaulted. */
interface Resolved<T> {
  value: T;
  pointer: string;
  field: string;
  /** The value as written (for messages), absent when defaulted. */
  raw?: unknown;
  /** Set when another field forced the value (eksctl's disablePodIMDS: true makes tokens required). */
  impliedBy?: string;
}

type ResolvedOptions = { [K in keyof ImdsValues]: Resolved<ImdsValues[K]> };

function escapePointerSegment(s: string): string {
  return s.replace(/~/g, '~0').replace(/\//g, '~1');
}

/** Matches of a JSONPath, each with its absolute pointer (prefixed by `base`). */
function queryAll(path: string, json: unknown, base: string): { pointer: string; value: unknown }[] {
  if (path === '$') return [{ pointer: base, value: json }];
  if (typeof json !== 'object' || json === null) return [];
  const results = JSONPath<unknown>({ path, json, resultType: 'all', eval: false, wrap: true });
  if (!Array.isArray(results)) return [];
  const out: { pointer: string; value: unknown }[] = [];
  for (const r of results as unknown[]) {
    if (isRecord(r) && typeof r['pointer'] === 'string')
      out.push({ pointer: base + r['pointer'], value: r['value'] });
  }
  return out;
}

/** The pointer a JSONPath of plain names would have (`$.a.b[*]` → `/a/b`): where a missing object would go. */
function anchorOf(path: string): string {
  const names = path
    .replace(/^\$\.?/, '')
    .replace(/\[\*\]/g, '')
    .split('.')
    .filter((s) => s !== '');
  return names.map((n) => `/${escapePointerSegment(n)}`).join('');
}

const ALLOWED: Record<ImdsOption, string> = {
  tokens: '"optional" or "required"',
  hopLimit: `an integer from ${HOP_LIMIT_MIN} to ${HOP_LIMIT_MAX}`,
  endpoint: '"enabled" or "disabled"',
  tags: '"enabled" or "disabled"',
};

/** Translates a written value into the vocabulary, or undefined when it is not acceptable. */
function normalize(option: ImdsOption, spec: FieldSpec, raw: unknown): string | number | undefined {
  let v: unknown = raw;
  if (spec.map !== undefined) {
    const hit = spec.map.find(([from]) => from === raw);
    if (hit === undefined) return undefined;
    v = hit[1];
  }
  switch (option) {
    case ImdsOption.Tokens:
      return isOneOf(HttpTokens, v) ? v : undefined;
    case ImdsOption.Endpoint:
      return isOneOf(HttpEndpoint, v) ? v : undefined;
    case ImdsOption.Tags:
      return isOneOf(InstanceMetadataTags, v) ? v : undefined;
    case ImdsOption.HopLimit:
      return isValidHopLimit(v) ? v : undefined;
  }
}

function expectedOf(option: ImdsOption, spec: FieldSpec): string {
  if (spec.map === undefined) return ALLOWED[option];
  return spec.map.map(([from]) => JSON.stringify(from)).join(' or ');
}

/** Resolves the options of one unit; invalid values become findings and the option is then skipped. */
function resolveUnit(
  entry: NodeKind,
  unitPointer: string,
  unit: Record<string, unknown>,
  findings: Finding[],
): Partial<ResolvedOptions> {
  const candidates: { pointer: string; value: Record<string, unknown> }[] = [];
  for (const path of entry.options) {
    for (const m of queryAll(path, unit, unitPointer)) {
      if (m.value === undefined || m.value === null) continue;
      if (!isRecord(m.value)) {
        findings.push({
          code: AdmissionCode.ImdsInvalidValue,
          severity: Severity.Error,
          message: `instance metadata options must be an object; found ${describeValue(m.value)}`,
          pointer: m.pointer,
        });
        continue;
      }
      candidates.push({ pointer: m.pointer, value: m.value });
    }
  }
  const defaultBase = candidates[0]?.pointer ?? unitPointer + anchorOf(entry.options[0] ?? '$');
  const out: Partial<ResolvedOptions> = {};
  for (const option of Object.values(ImdsOption)) {
    const spec = entry.fields[option];
    const holder = spec === undefined ? undefined : candidates.find((c) => c.value[spec.field] !== undefined);
    if (spec === undefined || holder === undefined) {
      const field = spec?.field ?? option;
      setResolved(out, option, {
        value: entry.defaults[option],
        pointer: `${defaultBase}/${escapePointerSegment(field)}`,
        field,
      });
      continue;
    }
    const raw = holder.value[spec.field];
    const pointer = `${holder.pointer}/${escapePointerSegment(spec.field)}`;
    const value = normalize(option, spec, raw);
    if (value === undefined) {
      findings.push({
        code: AdmissionCode.ImdsInvalidValue,
        severity: Severity.Error,
        message: `${spec.field} is ${describeValue(raw)}; expected ${expectedOf(option, spec)}`,
        pointer,
      });
      continue;
    }
    setResolved(out, option, { value, pointer, field: spec.field, raw });
  }
  for (const rule of entry.implies ?? []) {
    const holder = candidates.find((c) => c.value[rule.field] === rule.equals);
    if (holder === undefined) continue;
    const current = out[rule.option];
    setResolved(out, rule.option, {
      value: rule.value,
      pointer: current?.pointer ?? `${holder.pointer}/${escapePointerSegment(rule.field)}`,
      field: current?.field ?? rule.field,
      raw: rule.value,
      impliedBy: `${rule.field}: ${String(rule.equals)}`,
    });
  }
  return out;
}

function setResolved(
  out: Partial<ResolvedOptions>,
  option: ImdsOption,
  r: { value: string | number; pointer: string; field: string; raw?: unknown; impliedBy?: string },
): void {
  // The value was validated by normalize() or comes from the typed defaults, so the casts only name the key.
  (out as Record<ImdsOption, Resolved<string | number>>)[option] = r;
}

function written(r: Resolved<unknown>, kind: string): string {
  if (r.impliedBy !== undefined) return `${r.field} is ${describeValue(r.value)} because ${r.impliedBy}`;
  return 'raw' in r
    ? `${r.field} is ${describeValue(r.raw)}`
    : `${r.field} is not set and defaults to ${describeValue(r.value)} for ${kind}`;
}

/** Reads the allow-pod-imds annotation: a reason, a finding for an unusable value, or nothing. */
function readAllowReason(object: Record<string, unknown>, findings: Finding[]): string | undefined {
  const metadata = object['metadata'];
  if (!isRecord(metadata)) return undefined;
  const annotations = metadata['annotations'];
  if (!isRecord(annotations) || !(ALLOW_POD_IMDS_ANNOTATION in annotations)) return undefined;
  const reason = annotations[ALLOW_POD_IMDS_ANNOTATION];
  if (typeof reason === 'string' && reason.trim() !== '') return reason.trim();
  findings.push({
    code: AdmissionCode.ImdsAllowReasonEmpty,
    severity: Severity.Error,
    message: `annotation ${ALLOW_POD_IMDS_ANNOTATION} is ${describeValue(reason)}; it must give the reason pods need the metadata service`,
    pointer: `/metadata/annotations/${escapePointerSegment(ALLOW_POD_IMDS_ANNOTATION)}`,
  });
  return undefined;
}

/** The setting that fixes an option, in the kind's own spelling (`httpTokens: required`, `disableIMDSv1: true`). */
function fixOf(entry: NodeKind, option: ImdsOption, value: string | number): string {
  const spec = entry.fields[option];
  if (spec === undefined) return `${option}: ${String(value)}`;
  const written = spec.map?.find(([, to]) => to === value)?.[0] ?? value;
  return `${spec.field}: ${String(written)}`;
}

/** Applies the IMDS policy to resolved options. */
function judge(
  entry: NodeKind,
  o: Partial<ResolvedOptions>,
  allowReason: string | undefined,
  findings: Finding[],
): void {
  const kind = entry.kind;
  const { tokens, hopLimit, endpoint, tags } = o;
  // With the endpoint off nothing on the node can reach the service: tokens and hop limit do not matter then.
  const reachable = endpoint?.value !== HttpEndpoint.Disabled;
  if (reachable && tokens !== undefined && tokens.value !== HttpTokens.Required) {
    findings.push({
      code: AdmissionCode.ImdsTokensOptional,
      severity: Severity.Error,
      message: `${written(tokens, kind)}: metadata tokens are optional, so any process on the node can read the role credentials with a plain GET; set ${fixOf(entry, ImdsOption.Tokens, HttpTokens.Required)}`,
      pointer: tokens.pointer,
    });
  }
  if (reachable && hopLimit !== undefined && hopLimit.value > 1) {
    const what = `${written(hopLimit, kind)}: hop limit ${hopLimit.value} lets pods reach the metadata service and the node role credentials`;
    if (allowReason !== undefined) {
      findings.push({
        code: AdmissionCode.ImdsHopLimitAllowed,
        severity: Severity.Warning,
        // Warnings reach kubectl through the API server, which may cut long ones: keep this one short.
        message: `${written(hopLimit, kind)}: pods can reach the metadata service; allowed by ${ALLOW_POD_IMDS_ANNOTATION}: ${describeValue(allowReason)}`,
        pointer: hopLimit.pointer,
      });
    } else {
      findings.push({
        code: AdmissionCode.ImdsHopLimit,
        severity: Severity.Error,
        message: `${what}; set ${fixOf(entry, ImdsOption.HopLimit, 1)}, or annotate the object with ${ALLOW_POD_IMDS_ANNOTATION}: "<reason>"`,
        pointer: hopLimit.pointer,
      });
    }
  }
  if (endpoint !== undefined && endpoint.value === HttpEndpoint.Disabled) {
    findings.push({
      code: AdmissionCode.ImdsEndpointDisabled,
      severity: Severity.Warning,
      message: `${written(endpoint, kind)}: node components that rely on the metadata service will fail (tokens and hop limit do not apply while it is off)`,
      pointer: endpoint.pointer,
    });
  }
  if (tags !== undefined && tags.value === InstanceMetadataTags.Enabled) {
    findings.push({
      code: AdmissionCode.ImdsMetadataTags,
      severity: Severity.Warning,
      message: `${written(tags, kind)}: instance tags are readable through the metadata service`,
      pointer: tags.pointer,
    });
  }
}

/** Every IMDS finding for one object of the kind `entry` describes. Never throws for bad input. */
export function evaluateNodeSettings(entry: NodeKind, object: unknown): Finding[] {
  if (!isRecord(object)) return [];
  const findings: Finding[] = [];
  const allowReason = readAllowReason(object, findings);
  for (const unitPath of entry.units) {
    for (const unit of queryAll(unitPath, object, '')) {
      if (unit.value === undefined || unit.value === null) continue;
      if (!isRecord(unit.value)) {
        findings.push({
          code: AdmissionCode.ImdsInvalidValue,
          severity: Severity.Error,
          message: `node settings must be an object; found ${describeValue(unit.value)}`,
          pointer: unit.pointer,
        });
        continue;
      }
      judge(entry, resolveUnit(entry, unit.pointer, unit.value, findings), allowReason, findings);
    }
  }
  return findings;
}
