// RT3017: a `fromSource:` left empty (no value, or `[]`). The reference accepts it, so we do too, and read it as
// no source restriction (lowering treats it as absent); the warning says the rule applies to every executable.
import { Code } from '../../diagnostics/codes/code.js';
import type { Finding } from '../../diagnostics/finding.js';
import { isRecord } from '../../model/json-value.js';
import type { DocumentRule } from './document-rules.js';

/** Warns about every rule of any list whose `fromSource` is null or an empty list. */
export const checkEmptyFromSource: DocumentRule = (p) => {
  const out: Finding[] = [];
  for (const sectionName in p.spec) {
    const section = p.spec[sectionName];
    if (!Object.hasOwn(p.spec, sectionName) || !isRecord(section)) continue;
    for (const listName in section) {
      const list = section[listName];
      if (!Object.hasOwn(section, listName) || !Array.isArray(list)) continue;
      for (let i = 0; i < list.length; i++) {
        const rule: unknown = list[i];
        if (!isRecord(rule) || !('fromSource' in rule)) continue;
        const s = rule['fromSource'];
        if (s !== null && !(Array.isArray(s) && s.length === 0)) continue;
        out.push({
          code: Code.emptyFromSource,
          severity: 'warning',
          pointer: `/spec/${sectionName}/${listName}/${i}/fromSource`,
          message: `spec.${sectionName}.${listName}[${i}].fromSource: empty (${s === null ? 'no value' : '[]'}); read as no source restriction, so the rule applies to every executable. Remove the key or list the executables`,
        });
      }
    }
  }
  return out;
};
