// Entry for API objects (the enforcer's Kubernetes source): objects as the API server returns them go
// through the same stages as texts, without being written back to YAML. They have no positions: their
// diagnostics carry the input name and the JSON pointer, and rule locations have line and column 0.
import { lintInputs } from './lint-texts.js';
import type { LintOptions, LintResult } from './lint-result.js';
import { readObject } from './read-object.js';
import type { SourceObject } from './source-text.js';

/** Lints API objects: check every object, lower the policies, check them across objects. */
export function lintObjects(sources: readonly SourceObject[], options: LintOptions = {}): LintResult {
  return lintInputs(
    (function* () {
      for (const source of sources) yield readObject(source);
    })(),
    sources.length,
    options,
  );
}
