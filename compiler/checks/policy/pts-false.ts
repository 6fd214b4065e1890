// RT3025: `pts: false`. The reference blocks only processes with a terminal when a rule names `pts`, whatever
// its value, so lowering reads `pts: false` as `pts: true` (a rule on processes with a terminal); the warning
// says so, and how to write a rule for every process (leave `pts` out).
import { Code } from '../../diagnostics/codes/code.js';
import type { Finding } from '../../diagnostics/finding.js';
import { isRecord } from '../../model/json-value.js';
import type { DocumentRule } from './document-rules.js';

/** Warns about every rule of any list that says `pts: false`. */
export const checkPtsFalse: DocumentRule = (p) => {
  const out: Finding[] = [];
  for (const sectionName in p.spec) {
    const section = p.spec[sectionName];
    if (!Object.hasOwn(p.spec, sectionName) || !isRecord(section)) continue;
    for (const listName in section) {
      const list = section[listName];
      if (!Object.hasOwn(section, listName) || !Array.isArray(list)) continue;
      for (let i = 0; i < list.length; i++) {
        const rule: unknown = list[i];
        if (!isRecord(rule) || rule['pts'] !== false) continue;
        out.push({
          code: Code.ptsFalse,
          severity: 'warning',
          pointer: `/spec/${sectionName}/${listName}/${i}/pts`,
          message: `spec.${sectionName}.${listName}[${i}].pts: false is read as the reference reads it: the rule applies only to processes with a terminal (as pts: true). Remove pts to apply it to every process`,
        });
      }
    }
  }
  return out;
};
