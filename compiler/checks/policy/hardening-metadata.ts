// The hardening metadata convention on a policy (compiler/bundles/metadata.ts, docs/hardening.md): control
// ids written as each catalogue writes them, one-line rationale and attack, a known profile.
import { readHardeningMetadata } from '../../bundles/metadata.js';
import type { Finding } from '../../diagnostics/finding.js';
import type { PolicyObject } from './document-rules.js';

/** Findings of the hardening annotations and labels of one schema-valid policy. */
export function checkHardeningMetadata(p: PolicyObject): Finding[] {
  return readHardeningMetadata(p.metadata).findings;
}
