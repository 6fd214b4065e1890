// Diagnostics of the AppArmor and SELinux backends: a backend code, the rule's place, a message.
import { findBackendCode } from '../../diagnostics/codes/backend.js';
import { Severity, type Diagnostic } from '../../diagnostics/diagnostic.js';
import type { PolicyIR, SourceLocation } from '../../ir/rule-set.js';
import type { PolicyDocument } from '../../model/policy-document.js';

/** Finds the 0-based YAML document index of a policy among the input documents (0 when unknown). */
export function findDocumentIndex(documents: readonly PolicyDocument[], policy: PolicyIR): number {
  const doc = documents.find((d) => d.file === policy.location.file && d.line === policy.location.line);
  return doc?.index ?? 0;
}

/**
 * A backend diagnostic at a rule or policy location. The IR keeps line and column but not the
 * character offset, so `offset` is 0.
 */
export function createBackendDiagnostic(
  code: string,
  message: string,
  location: SourceLocation,
  document: number,
): Diagnostic {
  return {
    code,
    severity: findBackendCode(code)?.severity ?? Severity.Warning,
    message,
    file: location.file,
    start: { line: location.line, column: location.column, offset: 0 },
    pointer: location.pointer,
    document,
  };
}
