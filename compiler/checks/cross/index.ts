// Every cross-document check, in one array.
import { checkAllowUnderAudit } from './allow-under-audit.js';
import { checkConflictingRules } from './conflicting-rules.js';
import type { CrossRule } from './cross-rule.js';
import { checkDuplicatePolicies } from './duplicate-policies.js';
import { checkUnreachableSources } from './unreachable-sources.js';

export const CROSS_RULES: readonly CrossRule[] = [
  checkDuplicatePolicies,
  checkConflictingRules,
  checkUnreachableSources,
  checkAllowUnderAudit,
];
