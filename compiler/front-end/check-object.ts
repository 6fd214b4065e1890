// The document checks of one object, whatever it came from: its head (apiVersion and kind), then every
// checker that applies to it (compiler/checks/index.ts). Pure; never throws for bad input.
import { Code } from '../diagnostics/codes/code.js';
import { findCheckers } from '../checks/index.js';
import type { CheckContext } from '../checks/document-checker.js';
import { Severity } from '../diagnostics/diagnostic.js';
import type { Finding } from '../diagnostics/finding.js';
import { isRecord } from '../model/json-value.js';

/** What checking one object found, and whether any checker knows its kind. */
export interface ObjectCheck {
  findings: Finding[];
  /** False when the object has a head no checker applies to (lint passes it over). */
  checked: boolean;
}

/** Runs the head checks and every applicable document checker over one object. */
export function checkObjectDocument(object: unknown, context: CheckContext = {}): ObjectCheck {
  if (!isRecord(object)) {
    return {
      findings: [
        {
          code: Code.notAMapping,
          severity: Severity.Error,
          pointer: '',
          message: 'the object is not a mapping',
        },
      ],
      checked: true,
    };
  }
  const { apiVersion, kind } = object;
  if (typeof apiVersion !== 'string' || typeof kind !== 'string') {
    return {
      findings: [
        {
          code: Code.missingTypeFields,
          severity: Severity.Error,
          pointer: typeof apiVersion !== 'string' ? '/apiVersion' : '/kind',
          message: `${typeof apiVersion !== 'string' ? 'apiVersion' : 'kind'}: expected a string naming the object's type`,
        },
      ],
      checked: true,
    };
  }
  const checkers = findCheckers({ apiVersion, kind });
  return { findings: checkers.flatMap((c) => c.check(object, context)), checked: checkers.length > 0 };
}
