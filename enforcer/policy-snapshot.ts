// Builds a policy snapshot (pure) from YAML texts: policies through the compiler's lint (parse, schema,
// checks, lowering), Namespace objects for their posture annotations.
import { parseAllDocuments } from 'yaml';
import { lintTexts, type SourceText } from '../compiler/lint.js';
import { Severity } from '../compiler/diagnostics/diagnostic.js';
import type { Postures } from './data-plane.js';
import type { PolicySnapshot } from './policy-source.js';
import { getPostures } from './postures.js';

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Namespace postures declared by `kind: Namespace` documents among the texts. */
export function readNamespacePostures(sources: readonly SourceText[]): Map<string, Postures> {
  const postures = new Map<string, Postures>();
  for (const s of sources) {
    for (const doc of parseAllDocuments(s.text)) {
      if (doc.errors.length > 0) continue;
      const v: unknown = doc.toJS();
      if (!isRecord(v) || v['kind'] !== 'Namespace' || !isRecord(v['metadata'])) continue;
      const name = v['metadata']['name'];
      const ann = v['metadata']['annotations'];
      if (typeof name !== 'string') continue;
      const strings: Record<string, string> = {};
      if (isRecord(ann)) for (const [k, a] of Object.entries(ann)) if (typeof a === 'string') strings[k] = a;
      postures.set(name, getPostures(strings));
    }
  }
  return postures;
}

/** A snapshot of policy texts: the rule set of the valid policies and every finding. */
export function buildSnapshot(sources: readonly SourceText[]): PolicySnapshot {
  const lint = lintTexts(sources);
  return {
    ruleSet: lint.ruleSet,
    diagnostics: lint.diagnostics.filter((d) => d.severity !== Severity.Info),
    postures: readNamespacePostures(sources),
  };
}
