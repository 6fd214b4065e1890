// The hardening metadata convention on a policy (compiler/bundles/metadata.ts, docs/hardening.md): control
// ids written as each catalogue writes them, one-line rationale and attack, a known profile.
import { HARDENING_PREFIX, readHardeningMetadata } from '../../bundles/metadata.js';
import type { Finding } from '../../diagnostics/finding.js';
import type { PolicyObject } from './document-rules.js';

/** True when some key of `map` is under the convention's prefix. */
function hasPrefixedKey(map: Readonly<Record<string, string>> | undefined): boolean {
  if (map === undefined) return false;
  for (const key in map) if (key.startsWith(HARDENING_PREFIX)) return true;
  return false;
}

/** Findings of the hardening annotations and labels of one schema-valid policy. */
export function checkHardeningMetadata(p: PolicyObject): Finding[] {
  // Only keys under the prefix can draw a finding; most policies have none, and nothing is allocated for them.
  if (!hasPrefixedKey(p.metadata.annotations) && !hasPrefixedKey(p.metadata.labels)) return [];
  return readHardeningMetadata(p.metadata).findings;
}
