// The front end's named entries. The stages are compiler/front-end/*: texts → documents (parse-text.ts, or
// read-object.ts for API objects) → checked documents (check-documents.ts) → lowered rule set
// (lower-documents.ts) → cross checks (cross-check.ts). Parsing, checking and lowering are pure; positions are
// computed only for what is reported and for rules.
export { lintTexts } from './front-end/lint-texts.js';
export { lintObjects } from './front-end/lint-objects.js';
export { checkAdmissionObject } from './front-end/check-admission-object.js';
export type { LintOptions, LintResult } from './front-end/lint-result.js';
export type { NamespacePostures } from './front-end/checked-documents.js';
export type { SourceObject, SourceText } from './front-end/source-text.js';
