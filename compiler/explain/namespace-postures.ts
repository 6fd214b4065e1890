// Postures declared by Namespace objects among the explained files (`runtime-file-posture`, ...):
// the defaults of `rtctl explain` for a pod's namespace, overridden by --posture. Pure over texts.
import { parseAllDocuments } from 'yaml';
import type { SourceText } from '../lint.js';
import { isRecord } from '../model/json-value.js';
import { readDeclaredPostures, type DeclaredPostures } from '../model/posture.js';

/** Postures of one namespace and the file that declared them. */
export interface NamespacePostures {
  postures: DeclaredPostures;
  file: string;
}

/** The postures each Namespace object in the sources declares (valid values only: lint reports the rest). */
export function collectNamespacePostures(sources: readonly SourceText[]): Map<string, NamespacePostures> {
  const out = new Map<string, NamespacePostures>();
  for (const source of sources) {
    if (!/^\s*kind:\s*Namespace\s*$/m.test(source.text)) continue;
    for (const doc of parseAllDocuments(source.text)) {
      if (doc.errors.length > 0) continue;
      const object: unknown = doc.toJS();
      if (!isRecord(object) || object['kind'] !== 'Namespace' || !isRecord(object['metadata'])) continue;
      const name = object['metadata']['name'];
      const annotations = object['metadata']['annotations'];
      if (typeof name !== 'string' || !isRecord(annotations)) continue;
      out.set(name, { postures: readDeclaredPostures(annotations), file: source.file });
    }
  }
  return out;
}
