// The backend interface: a pure function from the compiled rule set (and the validated documents) to files.
// Backends are listed in one array in backends/index.ts; `rtctl compile --target` selects among them.
import type { Diagnostic } from '../diagnostics/diagnostic.js';
import type { RuleSet } from '../ir/rule-set.js';
import type { PolicyDocument } from '../model/policy-document.js';

/** One output file, relative to the output directory (`crds/runtimepolicies.yaml`). */
export interface Artifact {
  path: string;
  content: string | Uint8Array;
}

/** What a backend receives: the rule set plus the normalized documents it was lowered from. */
export interface BackendInput {
  ruleSet: RuleSet;
  documents: readonly PolicyDocument[];
}

/** What a backend returns. Diagnostics use RT4xxx codes. Artifacts must be byte-for-byte deterministic. */
export interface BackendOutput {
  artifacts: Artifact[];
  diagnostics: Diagnostic[];
}

/** A compiler backend. */
export interface Backend {
  /** The `--target` name (`crd`, `rules`, `apparmor`, `selinux`). */
  readonly name: string;
  /** One line for `--help`. */
  readonly description: string;
  emit(input: BackendInput): BackendOutput;
}
