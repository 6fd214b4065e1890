// Diagnostic codes of the backend area. See ../code-info.ts; docs/diagnostics.md is generated from all lists.
import type { CodeInfo } from '../code-info.js';

export const BACKEND_CODES: readonly CodeInfo[] = [];
