// Stage 4: the cross checks (compiler/checks/cross) over every lowered policy of the input, with the postures
// of the Namespace objects in the same input; findings placed in the documents they concern.
import { CROSS_RULES } from '../checks/cross/index.js';
import type { CrossRule, LocatedPolicy } from '../checks/cross/cross-rule.js';
import type { Diagnostic } from '../diagnostics/diagnostic.js';
import { resolvePostures } from '../model/posture.js';
import type { NamespacePostures } from './checked-documents.js';
import { placeFinding, type Locators } from './place-finding.js';

/** Runs `rules` (every cross rule unless told) and places their findings. */
export function crossCheck(
  located: readonly LocatedPolicy[],
  namespaces: ReadonlyMap<string, NamespacePostures>,
  locators: Locators,
  rules: readonly CrossRule[] = CROSS_RULES,
): Diagnostic[] {
  const namespacePostures = new Map([...namespaces].map(([ns, n]) => [ns, resolvePostures(n.postures)]));
  const out: Diagnostic[] = [];
  for (const rule of rules) {
    for (const cf of rule(located, { namespacePostures })) {
      const locator = locators.get(cf.file);
      if (locator !== undefined) out.push(placeFinding(locator, cf.document, cf.finding, locators));
    }
  }
  return out;
}
