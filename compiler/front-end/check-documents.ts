// Stage 2: documents → checked documents. Every document gets the document checks (check-object.ts);
// objects of a kind no checker knows are reported once as passed over (RT1011, info); policy documents
// without errors go on to lowering; core/v1 Namespace objects give their declared postures.
import { Code } from '../diagnostics/codes/code.js';
import type { CheckContext } from '../checks/document-checker.js';
import { isPolicyKind } from '../checks/policy/policy-checker.js';
import { Severity } from '../diagnostics/diagnostic.js';
import type { Finding } from '../diagnostics/finding.js';
import { isRecord } from '../model/json-value.js';
import type { PolicyDocument } from '../model/policy-document.js';
import { readDeclaredPostures } from '../model/posture.js';
import { API_GROUP_VERSION } from '../schema/policy-schema.js';
import type { CheckedDocuments, CheckedPolicy } from './checked-documents.js';
import { checkObjectDocument } from './check-object.js';
import { placeFinding, type Locators } from './place-finding.js';
import type { DocumentLocator } from './document-locator.js';
import type { SourceDocument } from './source-document.js';

/** An empty result, to check inputs one at a time into. */
export function createCheckedDocuments(): CheckedDocuments {
  return { policies: [], namespaces: new Map(), diagnostics: [], documentCount: 0 };
}

/**
 * A checked policy document of a text; its line is computed on first read only. Its accessor is on the
 * prototype (no closure per document); JSON gives the same fields as a plain document.
 */
class SourcePolicyDocument {
  readonly file: string;
  readonly index: number;

  constructor(
    readonly kind: string,
    readonly object: Record<string, unknown>,
    private readonly locator: DocumentLocator,
    index: number,
  ) {
    this.file = locator.file;
    this.index = index;
  }

  get line(): number {
    return this.locator.documentStart(this.index)?.line ?? 0;
  }

  toJSON(): Record<string, unknown> {
    return { kind: this.kind, object: this.object, file: this.file, index: this.index, line: this.line };
  }
}

/** The policy document of a checked policy object; its line is computed on first read only. */
export function toPolicyDocument(
  source: SourceDocument,
  kind: string,
  object: Record<string, unknown>,
): PolicyDocument {
  return new SourcePolicyDocument(kind, object, source.locator, source.index) as unknown as PolicyDocument;
}

/** True for a policy of the served version whose checks found no error: it goes on to lowering. */
export function isLowerable(kind: string, apiVersion: string, findings: readonly Finding[]): boolean {
  return (
    isPolicyKind(kind) &&
    apiVersion === API_GROUP_VERSION &&
    !findings.some((f) => f.severity === Severity.Error)
  );
}

/** Checks documents into `into` (the checks of each document are independent of the others). */
export function checkDocuments(
  documents: readonly SourceDocument[],
  locators: Locators,
  into: CheckedDocuments = createCheckedDocuments(),
  context: CheckContext = {},
): CheckedDocuments {
  for (const source of documents) {
    into.documentCount++;
    const { locator, index, value } = source;
    const { findings, checked } = checkObjectDocument(value, context);
    for (const f of findings) into.diagnostics.push(placeFinding(locator, index, f, locators));
    if (!isRecord(value)) continue;
    const kind = typeof value['kind'] === 'string' ? value['kind'] : '';
    const apiVersion = typeof value['apiVersion'] === 'string' ? value['apiVersion'] : '';
    if (findings.length === 0 && !checked && kind !== '' && apiVersion !== '') {
      const message = `kind: ${apiVersion} ${kind} is not checked by rtctl; passed over`;
      into.diagnostics.push(
        placeFinding(
          locator,
          index,
          { code: Code.unknownKind, severity: Severity.Info, pointer: '/kind', message },
          locators,
        ),
      );
    }
    if (kind === 'Namespace' && apiVersion === 'v1') {
      const md = value['metadata'];
      if (isRecord(md) && typeof md['name'] === 'string') {
        const annotations = isRecord(md['annotations']) ? md['annotations'] : undefined;
        into.namespaces.set(md['name'], { postures: readDeclaredPostures(annotations), file: locator.file });
      }
    }
    if (isLowerable(kind, apiVersion, findings)) {
      const policy: CheckedPolicy = { document: toPolicyDocument(source, kind, value), source };
      into.policies.push(policy);
    }
  }
  return into;
}
