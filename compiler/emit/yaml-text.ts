// Deterministic YAML text for emitted manifests: key order as built, no line folding, no anchors, and
// YAML 1.1 lookalikes (yes, on, 0123) quoted so every Kubernetes YAML reader sees strings.
import { dump } from 'js-yaml';

/** Serializes one object as a YAML document (no leading `---`). */
export function toYaml(value: unknown): string {
  return dump(value, { lineWidth: -1, noRefs: true, sortKeys: false, indent: 2 });
}

/** Serializes several objects as a multi-document YAML stream. */
export function toYamlStream(values: readonly unknown[]): string {
  return values.map((v) => `---\n${toYaml(v)}`).join('');
}
