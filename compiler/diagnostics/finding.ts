// A finding is a diagnostic before it is placed: a rule (schema, semantic, admission) reports the JSON pointer
// of the offending node; the lint pipeline turns pointers into file positions only when there is a finding,
// and the webhook turns them into JSON paths. Rules therefore never deal with positions.
import type { Severity } from './diagnostic.js';

/** A located-by-pointer finding. */
export interface Finding {
  code: string;
  severity: Severity;
  message: string;
  /** JSON pointer inside the document (`/spec/file/matchPaths/0/path`). */
  pointer: string;
  /** Other places involved, possibly in another document or file. */
  related?: RelatedFinding[];
}

/** The other side of a finding (for conflicts across policies). */
export interface RelatedFinding {
  message: string;
  pointer: string;
  /** Set when the related place is in another document: its file and document index. */
  file?: string;
  document?: number;
}
