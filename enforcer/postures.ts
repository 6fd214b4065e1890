// Namespace postures from the namespace annotations (DESIGN.md "Names"): `audit` unless annotated `block`.
import { Posture, type Postures } from './data-plane.js';

/** Annotation keys per class. */
export const PostureAnnotation = {
  file: 'runtime-file-posture',
  network: 'runtime-network-posture',
  capabilities: 'runtime-capabilities-posture',
} as const;
export type PostureAnnotation = (typeof PostureAnnotation)[keyof typeof PostureAnnotation];

/** The default postures (every class `audit`). */
export const DEFAULT_POSTURES: Postures = {
  file: Posture.Audit,
  network: Posture.Audit,
  capabilities: Posture.Audit,
};

function readPosture(value: string | undefined): Posture {
  return value?.trim().toLowerCase() === Posture.Block ? Posture.Block : Posture.Audit;
}

/** Postures of a namespace from its annotations. */
export function getPostures(annotations: Readonly<Record<string, string>> | undefined): Postures {
  if (annotations === undefined) return DEFAULT_POSTURES;
  return {
    file: readPosture(annotations[PostureAnnotation.file]),
    network: readPosture(annotations[PostureAnnotation.network]),
    capabilities: readPosture(annotations[PostureAnnotation.capabilities]),
  };
}
