// The shape of an entry in the diagnostic code list (docs/diagnostics.md is generated from the list).
import type { Severity } from './diagnostic.js';

/** One stable diagnostic code. */
export interface CodeInfo {
  /** `RTnnnn`. */
  code: string;
  /** Default severity. */
  severity: Severity;
  /** Short name, kebab-case (`relative-path`). */
  name: string;
  /** One sentence: what it means and how to fix it. */
  summary: string;
}
