// The front end as one function: texts in, validated policy documents, a RuleSet and diagnostics out.
// Parsing, checking and lowering are pure; positions are computed only for what is reported and for rules.
import { findCheckers } from './checks/index.js';
import type { CheckContext } from './checks/document-checker.js';
import { CROSS_RULES } from './checks/cross/index.js';
import type { LocatedPolicy } from './checks/cross/cross-rule.js';
import { isPolicyKind } from './checks/policy/policy-checker.js';
import { compareDiagnostics, Severity } from './diagnostics/diagnostic.js';
import type { Diagnostic, Position, RelatedLocation } from './diagnostics/diagnostic.js';
import type { Finding } from './diagnostics/finding.js';
import type { RuleSet } from './ir/rule-set.js';
import { sortPolicies } from './lower/lower.js';
import { lowerPolicy } from './lower/lower-policy.js';
import type { PolicyDocument } from './model/policy-document.js';
import { isRecord } from './model/json-value.js';
import { readNamespacePostures } from './model/posture.js';
import { LineIndex } from './parse/line-index.js';
import { API_GROUP_VERSION } from './schema/policy-schema.js';
import { parseYaml } from './parse/parse-yaml.js';
import type { YamlFile } from './parse/parse-yaml.js';

/** One input text. */
export interface SourceText {
  file: string;
  text: string;
}

/** What lint produced. */
export interface LintResult {
  /** Policy documents without errors, in input order. */
  documents: PolicyDocument[];
  /** Every finding, sorted by file and position. */
  diagnostics: Diagnostic[];
  /** The documents lowered, sorted by kind, namespace and name. */
  ruleSet: RuleSet;
  /** Counts for summaries. */
  stats: { files: number; documents: number; policies: number };
  /** String annotations of every v1 Namespace among the sources, by namespace name (postures live there). */
  namespaceAnnotations: Map<string, Record<string, string>>;
}

/** Options of lint. */
export interface LintOptions {
  /** Invoked after each file, for progress display. */
  onFile?: (done: number, total: number) => void;
}

interface FileState {
  source: SourceText;
  yaml: YamlFile;
  lines?: LineIndex;
}

function lineIndex(state: FileState): LineIndex {
  state.lines ??= new LineIndex(state.source.text);
  return state.lines;
}

function positionOf(state: FileState, offset: number): Position {
  return lineIndex(state).positionAt(offset);
}

/** Places a pointer-located finding into a file. */
function place(
  state: FileState,
  document: number,
  finding: Finding,
  files: Map<string, FileState>,
): Diagnostic {
  const d: Diagnostic = {
    code: finding.code,
    severity: finding.severity,
    message: finding.message,
    file: state.source.file,
    pointer: finding.pointer,
    document,
  };
  const range = state.yaml.locate(document, finding.pointer);
  if (range !== undefined) {
    d.start = positionOf(state, range.offset);
    d.end = positionOf(state, range.endOffset);
  }
  if (finding.related !== undefined && finding.related.length > 0) {
    d.related = finding.related.map((r): RelatedLocation => {
      const other = r.file === undefined ? state : (files.get(r.file) ?? state);
      const doc = r.document ?? document;
      const rel: RelatedLocation = { message: r.message, file: other.source.file, pointer: r.pointer };
      const rr = other.yaml.locate(doc, r.pointer);
      if (rr !== undefined) rel.start = positionOf(other, rr.offset);
      return rel;
    });
  }
  return d;
}

/** Runs every applicable document checker over one parsed object (what the admission webhook calls). */
export function checkObject(object: unknown, context: CheckContext = {}): Finding[] {
  if (!isRecord(object)) {
    return [
      { code: 'RT1009', severity: Severity.Error, pointer: '', message: 'the object is not a mapping' },
    ];
  }
  const { apiVersion, kind } = object;
  if (typeof apiVersion !== 'string' || typeof kind !== 'string') {
    return [
      {
        code: 'RT1010',
        severity: Severity.Error,
        pointer: typeof apiVersion !== 'string' ? '/apiVersion' : '/kind',
        message: `${typeof apiVersion !== 'string' ? 'apiVersion' : 'kind'}: expected a string naming the object's type`,
      },
    ];
  }
  return findCheckers({ apiVersion, kind }).flatMap((c) => c.check(object, context));
}

/** Lints texts: parse, check every document, lower policies, check across documents. */
export function lintTexts(sources: readonly SourceText[], options: LintOptions = {}): LintResult {
  const files = new Map<string, FileState>();
  const diagnostics: Diagnostic[] = [];
  const documents: PolicyDocument[] = [];
  const located: LocatedPolicy[] = [];
  const namespaceAnnotations = new Map<string, Record<string, string>>();
  let documentCount = 0;

  sources.forEach((source, n) => {
    const state: FileState = { source, yaml: parseYaml(source.text) };
    files.set(source.file, state);
    for (const pf of state.yaml.findings) {
      const d: Diagnostic = {
        code: pf.finding.code,
        severity: pf.finding.severity,
        message: pf.finding.message,
        file: source.file,
        pointer: '',
        document: Math.max(pf.document, 0),
        start: positionOf(state, pf.offset),
      };
      if (pf.endOffset !== undefined) d.end = positionOf(state, pf.endOffset);
      diagnostics.push(d);
    }
    for (const doc of state.yaml.documents) {
      if (doc.value === null || doc.value === undefined) continue;
      documentCount++;
      const findings = checkObject(doc.value, { crossChecked: true });
      let hasError = false;
      for (const f of findings) {
        if (f.severity === Severity.Error) hasError = true;
        diagnostics.push(place(state, doc.index, f, files));
      }
      const value = doc.value as Record<string, unknown>;
      const kind = typeof value['kind'] === 'string' ? value['kind'] : '';
      const apiVersion = typeof value['apiVersion'] === 'string' ? value['apiVersion'] : '';
      if (
        findings.length === 0 &&
        findCheckers({ apiVersion, kind }).length === 0 &&
        isRecord(value) &&
        kind !== '' &&
        apiVersion !== ''
      ) {
        diagnostics.push(
          place(
            state,
            doc.index,
            {
              code: 'RT1011',
              severity: Severity.Info,
              pointer: '/kind',
              message: `kind: ${apiVersion} ${kind} is not checked by rtctl; passed over`,
            },
            files,
          ),
        );
      }
      if (kind === 'Namespace' && apiVersion === 'v1') {
        const md = value['metadata'];
        if (isRecord(md) && typeof md['name'] === 'string') {
          const ann = isRecord(md['annotations']) ? md['annotations'] : {};
          const strings: Record<string, string> = {};
          for (const [k, v] of Object.entries(ann)) if (typeof v === 'string') strings[k] = v;
          namespaceAnnotations.set(md['name'], strings);
        }
      }
      if (hasError || !isPolicyKind(kind) || apiVersion !== API_GROUP_VERSION) continue;
      // Lines are computed on first read only: a clean compile never parses positions.
      const docLine = (): number => positionOf(state, state.yaml.documentOffset(doc.index)).line;
      const pd = {
        kind,
        object: value,
        file: source.file,
        index: doc.index,
        get line() {
          return docLine();
        },
      } as PolicyDocument;
      documents.push(pd);
      const policy = lowerPolicy(pd, (pointer) => {
        const r = state.yaml.locate(doc.index, pointer);
        const p = positionOf(state, r?.offset ?? state.yaml.documentOffset(doc.index));
        return { line: p.line, column: p.column };
      });
      located.push({ policy, file: source.file, document: doc.index });
    }
    options.onFile?.(n + 1, sources.length);
  });

  const namespacePostures = new Map(
    [...namespaceAnnotations].map(([ns, ann]) => [ns, readNamespacePostures(ann)]),
  );
  for (const rule of CROSS_RULES) {
    for (const cf of rule(located, { namespacePostures })) {
      const state = files.get(cf.file);
      if (state !== undefined) diagnostics.push(place(state, cf.document, cf.finding, files));
    }
  }
  diagnostics.sort(compareDiagnostics);
  return {
    documents,
    diagnostics,
    ruleSet: { policies: sortPolicies(located.map((l) => l.policy)) },
    stats: { files: sources.length, documents: documentCount, policies: documents.length },
    namespaceAnnotations,
  };
}
