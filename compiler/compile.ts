// lint, then the selected backends, then index.json (the sha256 of every artifact). Nothing is emitted when
// lint found errors: half a build is worse than none.
import { hash } from 'node:crypto';
import type { Artifact } from './backends/backend.js';
import { BACKENDS, findBackend } from './backends/index.js';
import { compareDiagnostics, hasErrors } from './diagnostics/diagnostic.js';
import type { Diagnostic } from './diagnostics/diagnostic.js';
import type { RuleSet } from './ir/rule-set.js';
import { lintTexts } from './lint.js';
import type { LintOptions, LintResult, SourceText } from './lint.js';

/** Options of compile. */
export interface CompileOptions extends LintOptions {
  /** Backend names, or `all`. */
  targets: readonly string[];
}

/** What compile produced. */
export interface CompileResult {
  artifacts: Artifact[];
  diagnostics: Diagnostic[];
  ruleSet: RuleSet;
  lint: LintResult;
}

/** Backend names selected by `targets` (`all` selects every backend). Unknown names throw: a usage error. */
export function resolveTargets(targets: readonly string[]): string[] {
  const names = targets.includes('all') ? BACKENDS.map((b) => b.name) : [...new Set(targets)];
  for (const n of names) {
    if (findBackend(n) === undefined) {
      throw new Error(
        `unknown target ${JSON.stringify(n)}; expected one of ${[...BACKENDS.map((b) => b.name), 'all'].join(', ')}`,
      );
    }
  }
  return names;
}

/** One-shot hashing: no Hash object per artifact (a compile hashes thousands). */
function sha256(content: string | Uint8Array): string {
  return hash('sha256', content, 'hex');
}

/** Compiles sources for the given targets. */
export function compile(sources: readonly SourceText[], options: CompileOptions): CompileResult {
  const names = resolveTargets(options.targets);
  const lint = lintTexts(sources, options);
  const diagnostics = [...lint.diagnostics];
  if (hasErrors(diagnostics)) return { artifacts: [], diagnostics, ruleSet: lint.ruleSet, lint };
  const artifacts: Artifact[] = [];
  for (const name of names) {
    const backend = findBackend(name);
    if (backend === undefined) continue;
    const out = backend.emit({ ruleSet: lint.ruleSet, documents: lint.documents });
    // One at a time: a spread of more than about 100 000 arguments overflows the stack.
    for (const a of out.artifacts) artifacts.push(a);
    for (const d of out.diagnostics) diagnostics.push(d);
  }
  artifacts.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  const index = {
    generator: 'rtctl',
    targets: names,
    artifacts: artifacts.map((a) => ({
      path: a.path,
      sha256: sha256(a.content),
      bytes: typeof a.content === 'string' ? Buffer.byteLength(a.content) : a.content.length,
    })),
  };
  artifacts.push({ path: 'index.json', content: `${JSON.stringify(index, null, 2)}\n` });
  diagnostics.sort(compareDiagnostics);
  return { artifacts, diagnostics, ruleSet: lint.ruleSet, lint };
}
