// Decisions: what every admission rule returns. A decision is findings with their JSON paths; combining
// decisions and rendering one as an AdmissionResponse are pure functions.
import { AdmissionCode } from '../compiler/diagnostics/codes/admission.js';
import { Severity, pointerToPath } from '../compiler/diagnostics/diagnostic.js';
import type { Finding } from '../compiler/diagnostics/finding.js';
import type { AdmissionResponse } from './admission-review.js';

/** One finding as admission reports it: the code, the dotted JSON path and the message. */
export interface DecisionItem {
  code: string;
  path: string;
  message: string;
}

/** The verdict of one rule (or of all of them). */
export interface Decision {
  allowed: boolean;
  errors: DecisionItem[];
  warnings: DecisionItem[];
}

/** The decision that admits without remarks. */
export const ALLOW: Decision = Object.freeze({ allowed: true, errors: [], warnings: [] });

/** Errors and warnings listed per object (each list); the rest are counted in one RT5031 line. */
export const MAX_LISTED_FINDINGS = 50;
/** Characters kept of a path or a message. */
const MAX_TEXT = 512;

function cut(text: string): string {
  return text.length > MAX_TEXT ? `${text.slice(0, MAX_TEXT)}…` : text;
}

function toItem(f: Finding): DecisionItem {
  const path = pointerToPath(f.pointer);
  // Compiler messages may already begin with the path; say it once.
  const message = f.message.startsWith(`${path}: `) ? f.message.slice(path.length + 2) : f.message;
  return { code: f.code, path: cut(path), message: cut(message) };
}

function truncated(more: number, what: string): DecisionItem {
  return {
    code: AdmissionCode.FindingsTruncated,
    path: '.',
    message: `and ${more} more ${what}${more === 1 ? '' : 's'} not listed; run rtctl lint on the object to see them all`,
  };
}

/**
 * Turns findings into a decision: any error denies; warnings and infos become warnings. At most
 * MAX_LISTED_FINDINGS errors and as many warnings are listed, then one RT5031 line counts the rest, so the
 * response stays small whatever the object.
 */
export function decideFromFindings(findings: readonly Finding[]): Decision {
  const errors: DecisionItem[] = [];
  const warnings: DecisionItem[] = [];
  let moreErrors = 0;
  let moreWarnings = 0;
  for (const f of findings) {
    if (f.severity === Severity.Error) {
      if (errors.length < MAX_LISTED_FINDINGS) errors.push(toItem(f));
      else moreErrors += 1;
    } else if (warnings.length < MAX_LISTED_FINDINGS) warnings.push(toItem(f));
    else moreWarnings += 1;
  }
  if (moreErrors > 0) errors.push(truncated(moreErrors, 'error'));
  if (moreWarnings > 0) warnings.push({ ...truncated(moreWarnings, 'warning') });
  return { allowed: errors.length === 0, errors, warnings };
}

/** Combines the decisions of several rules: denied when any denies, every error and warning kept in order. */
export function combineDecisions(decisions: readonly Decision[]): Decision {
  const errors = decisions.flatMap((d) => d.errors);
  const warnings = decisions.flatMap((d) => d.warnings);
  return { allowed: decisions.every((d) => d.allowed) && errors.length === 0, errors, warnings };
}

/** `RTnnnn <json path>: <message>`, the line format of status messages and warnings. */
export function formatItem(item: DecisionItem): string {
  return `${item.code} ${item.path}: ${item.message}`;
}

/** Renders a decision as the response for request `uid`. */
export function renderDecision(uid: string, decision: Decision): AdmissionResponse {
  const response: AdmissionResponse = decision.allowed
    ? { uid, allowed: true, status: { code: 200, message: 'allowed' } }
    : {
        uid,
        allowed: false,
        status: { code: 403, reason: 'Forbidden', message: decision.errors.map(formatItem).join('\n') },
      };
  if (decision.warnings.length > 0) response.warnings = decision.warnings.map(formatItem);
  return response;
}
