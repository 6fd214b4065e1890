// Diagnostic codes of the admission area. See ../code-info.ts; docs/diagnostics.md is generated from all lists.
import type { CodeInfo } from '../code-info.js';

export const ADMISSION_CODES: readonly CodeInfo[] = [];
