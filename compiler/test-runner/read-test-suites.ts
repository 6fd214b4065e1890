// Finds the test suites among parsed texts (documents of kind RuntimePolicyTest), validates them with ajv and
// turns each case into a decision request. Pure; a bad suite is diagnostics with file, line and column
// (the schema codes: RT2001 wrong type, RT2002 missing field, RT2003 unknown field, RT2004 value, RT2013 one-of).
import { Ajv, type ErrorObject } from 'ajv';
import { Code } from '../diagnostics/codes/code.js';
import type { Diagnostic } from '../diagnostics/diagnostic.js';
import { pointerToPath } from '../diagnostics/diagnostic.js';
import { WorkloadKind, type OperationRequest, type Workload } from '../decide/decision-input.js';
import type { ExplainRequest } from '../explain/explain-request.js';
import { placeFinding } from '../front-end/place-finding.js';
import { parseText } from '../front-end/parse-text.js';
import type { SourceText } from '../front-end/source-text.js';
import { Operation } from '../ir/rule-set.js';
import type { DeclaredPostures } from '../model/posture.js';
import { TEST_SUITE_KIND, TEST_SUITE_SCHEMA } from './test-suite-schema.js';

/** What a case expects. */
export interface TestExpectation {
  allowed: boolean;
  /** Name of the deciding policy (`DefaultPosture` for the posture); absent: not checked. */
  policy?: string;
  /** The alert's action, or `none` for no alert; absent: not checked. */
  action?: 'Block' | 'Audit' | 'none';
}

/** One case, ready to decide. */
export interface TestCase {
  suite: string;
  name: string;
  file: string;
  line: number;
  column: number;
  /** The request; its postures are the case's own, laid over the namespace's declared ones by the runner. */
  request: ExplainRequest;
  expect: TestExpectation;
}

/** Cases found, and what was wrong with the suites. */
export interface TestSuites {
  cases: TestCase[];
  /** Number of suite documents found. */
  suites: number;
  diagnostics: Diagnostic[];
}

interface RawCase {
  name: string;
  workload?: {
    namespace?: string;
    labels?: Record<string, string>;
    host?: true;
    nodeLabels?: Record<string, string>;
  };
  postures?: DeclaredPostures;
  operation: {
    process?: string;
    file?: string;
    network?: string;
    capability?: string;
    source?: string;
    write?: boolean;
    owner?: boolean;
    tty?: boolean;
    args?: string[];
  };
  expect: TestExpectation;
}

interface RawSuite {
  metadata: { name: string };
  cases: RawCase[];
}

let validator: ReturnType<Ajv['compile']> | undefined;

function codeOf(e: ErrorObject): string {
  switch (e.keyword) {
    case 'type':
      return Code.wrongType;
    case 'required':
      return Code.missingField;
    case 'additionalProperties':
      return Code.unknownField;
    default:
      return Code.notAllowedValue;
  }
}

function describeError(e: ErrorObject): { pointer: string; message: string } {
  const at = e.instancePath;
  switch (e.keyword) {
    case 'required': {
      const missing = String((e.params as { missingProperty: string }).missingProperty);
      return { pointer: at, message: `${pointerToPath(`${at}/${missing}`)}: required field is missing` };
    }
    case 'additionalProperties': {
      const extra = String((e.params as { additionalProperty: string }).additionalProperty);
      return {
        pointer: `${at}/${extra}`,
        message: `${pointerToPath(`${at}/${extra}`)}: unknown field "${extra}"`,
      };
    }
    case 'const':
      return {
        pointer: at,
        message: `${pointerToPath(at)}: must be ${JSON.stringify((e.params as { allowedValue: unknown }).allowedValue)}`,
      };
    case 'enum':
      return {
        pointer: at,
        message: `${pointerToPath(at)}: must be one of ${(e.params as { allowedValues: unknown[] }).allowedValues.map((v) => JSON.stringify(v)).join(', ')}`,
      };
    case 'pattern':
      return { pointer: at, message: `${pointerToPath(at)}: must be an absolute path (start with /)` };
    case 'anyOf':
      return {
        pointer: at,
        message: `${pointerToPath(at)}: a workload is either {namespace, labels} (a pod) or {host: true, nodeLabels} (a node)`,
      };
    default:
      return { pointer: at, message: `${pointerToPath(at)}: ${e.message ?? 'invalid'}` };
  }
}

const OPERATION_KEYS = ['process', 'file', 'network', 'capability'] as const;

/** Semantic checks the schema cannot say: exactly one operation; options that belong to one. */
function checkCase(c: RawCase, pointer: string): Array<{ code: string; pointer: string; message: string }> {
  const out: Array<{ code: string; pointer: string; message: string }> = [];
  const op = c.operation;
  const chosen = OPERATION_KEYS.filter((k) => op[k] !== undefined);
  if (chosen.length !== 1) {
    out.push({
      code: Code.oneOf,
      pointer: `${pointer}/operation`,
      message: `${pointerToPath(`${pointer}/operation`)}: give exactly one of process, file, network, capability${chosen.length > 1 ? `, got ${chosen.join(' and ')}` : ''}`,
    });
  }
  if (op.write !== undefined && op.file === undefined)
    out.push({
      code: Code.oneOf,
      pointer: `${pointer}/operation/write`,
      message: 'operation.write goes with operation.file',
    });
  if (op.args !== undefined && op.process === undefined)
    out.push({
      code: Code.oneOf,
      pointer: `${pointer}/operation/args`,
      message: 'operation.args goes with operation.process',
    });
  return out;
}

function toRequest(c: RawCase): ExplainRequest {
  const w = c.workload;
  const workload: Workload =
    w?.host === true
      ? { kind: WorkloadKind.Host, namespace: '', labels: {}, nodeLabels: w.nodeLabels ?? {} }
      : {
          kind: WorkloadKind.Container,
          namespace: w?.namespace ?? 'default',
          labels: w?.labels ?? {},
          nodeLabels: {},
        };
  const op = c.operation;
  let operation: OperationRequest;
  if (op.process !== undefined) {
    operation = {
      operation: Operation.Process,
      resource: op.process,
      write: false,
      owner: op.owner === true,
    };
    if (op.source !== undefined) operation.parentExecutable = op.source;
    if (op.args !== undefined) operation.args = op.args;
  } else {
    operation =
      op.file !== undefined
        ? { operation: Operation.File, resource: op.file, write: op.write === true, owner: op.owner === true }
        : op.network !== undefined
          ? { operation: Operation.Network, resource: op.network.toLowerCase(), write: false, owner: false }
          : { operation: Operation.Capabilities, resource: op.capability ?? '', write: false, owner: false };
    if (op.source !== undefined) operation.executable = op.source;
  }
  if (op.tty === true) operation.tty = true;
  return { workload, operation, postures: { ...c.postures } };
}

/** True when a parsed document is a test suite (by kind). */
export function isTestSuiteDocument(value: unknown): boolean {
  return (
    typeof value === 'object' &&
    value !== null &&
    (value as Record<string, unknown>)['kind'] === TEST_SUITE_KIND
  );
}

/** Reads the test suites among `sources`. */
export function readTestSuites(sources: readonly SourceText[]): TestSuites {
  validator ??= new Ajv({ allErrors: true, strict: true }).compile(TEST_SUITE_SCHEMA);
  const result: TestSuites = { cases: [], suites: 0, diagnostics: [] };
  for (const source of sources) {
    const parsed = parseText(source);
    const locators = new Map([[source.file, parsed.locator]]);
    for (const doc of parsed.documents) {
      if (!isTestSuiteDocument(doc.value)) continue;
      result.suites++;
      const place = (f: { code: string; pointer: string; message: string }): Diagnostic =>
        placeFinding(parsed.locator, doc.index, { ...f, severity: 'error' }, locators);
      if (!validator(doc.value)) {
        for (const e of validator.errors ?? []) {
          // anyOf reports its branches' errors too; the anyOf message says it all.
          if (e.keyword !== 'anyOf' && /\/workload$/.test(e.instancePath)) continue;
          result.diagnostics.push(place({ code: codeOf(e), ...describeError(e) }));
        }
        continue;
      }
      const suite = doc.value as RawSuite;
      for (const [i, c] of suite.cases.entries()) {
        const pointer = `/cases/${i}`;
        const problems = checkCase(c, pointer);
        if (problems.length > 0) {
          result.diagnostics.push(...problems.map(place));
          continue;
        }
        const start = parsed.locator.locate(doc.index, pointer)?.start;
        result.cases.push({
          suite: suite.metadata.name,
          name: c.name,
          file: source.file,
          line: start?.line ?? 0,
          column: start?.column ?? 0,
          request: toRequest(c),
          expect: c.expect,
        });
      }
    }
  }
  return result;
}
