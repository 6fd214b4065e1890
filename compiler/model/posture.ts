// Namespace postures, the one home of the concept (DESIGN.md "Names" and "Policy semantics"): the annotation
// names, the two values and the default, which operation class follows which posture, and the one function
// that reads a Namespace's annotations. The lint and admission checker, the cross checks, the decision oracle,
// `rtctl explain` and the enforcer's policy sources all use these.
//
// The rule for values: exactly `audit` or `block` (lower case, no spaces, as the seed writes them). Any other
// value is invalid: lint and the webhook report it (RT5010, compiler/namespace-posture), and every reader
// treats it as absent, so the class keeps the default `audit`. An invalid value never turns on blocking.
import { Operation } from '../ir/rule-set.js';

/** A posture value. */
export const Posture = { Audit: 'audit', Block: 'block' } as const;
export type Posture = (typeof Posture)[keyof typeof Posture];

/** The posture of a class its Namespace does not annotate (or annotates with an invalid value). */
export const DEFAULT_POSTURE: Posture = Posture.Audit;

/** The classes a Namespace sets a posture for. Process has none of its own: it follows `file`. */
export const PostureClass = { File: 'file', Network: 'network', Capabilities: 'capabilities' } as const;
export type PostureClass = (typeof PostureClass)[keyof typeof PostureClass];

/** Every posture class, in annotation order. */
export const POSTURE_CLASSES: readonly PostureClass[] = [
  PostureClass.File,
  PostureClass.Network,
  PostureClass.Capabilities,
];

/** The Namespace annotation of each posture class. */
export const POSTURE_ANNOTATION = {
  file: 'runtime-file-posture',
  network: 'runtime-network-posture',
  capabilities: 'runtime-capabilities-posture',
} as const satisfies Record<PostureClass, string>;
export type PostureAnnotation = (typeof POSTURE_ANNOTATION)[PostureClass];

/** Every posture annotation key, in class order. */
export const POSTURE_ANNOTATIONS: readonly PostureAnnotation[] = POSTURE_CLASSES.map(
  (c) => POSTURE_ANNOTATION[c],
);

/** The posture of every class of a namespace. */
export interface Postures {
  file: Posture;
  network: Posture;
  capabilities: Posture;
}

/** Postures a Namespace declares (or a user gives): classes left out take the default. */
export type DeclaredPostures = Partial<Postures>;

/** The postures of a namespace that declares none. */
export const DEFAULT_POSTURES: Readonly<Postures> = Object.freeze({
  file: DEFAULT_POSTURE,
  network: DEFAULT_POSTURE,
  capabilities: DEFAULT_POSTURE,
});

/** True for the two valid posture values. */
export function isPosture(value: unknown): value is Posture {
  return value === Posture.Audit || value === Posture.Block;
}

/** True for the names of the posture classes. */
export function isPostureClass(value: unknown): value is PostureClass {
  return (POSTURE_CLASSES as readonly unknown[]).includes(value);
}

/** The posture class an operation class follows: Process follows the file posture. */
export function getPostureClass(operation: Operation): PostureClass {
  switch (operation) {
    case Operation.Process:
    case Operation.File:
      return PostureClass.File;
    case Operation.Network:
      return PostureClass.Network;
    case Operation.Capabilities:
      return PostureClass.Capabilities;
  }
}

/** The annotation that governs an operation class. */
export function getPostureAnnotation(operation: Operation): PostureAnnotation {
  return POSTURE_ANNOTATION[getPostureClass(operation)];
}

/** The posture that applies to an operation class; an undeclared class has the default. */
export function getPosture(postures: DeclaredPostures, operation: Operation): Posture {
  return postures[getPostureClass(operation)] ?? DEFAULT_POSTURE;
}

/** Every class with its declared posture or the default. */
export function resolvePostures(declared: DeclaredPostures): Postures {
  return {
    file: declared.file ?? DEFAULT_POSTURE,
    network: declared.network ?? DEFAULT_POSTURE,
    capabilities: declared.capabilities ?? DEFAULT_POSTURE,
  };
}

/**
 * The postures a Namespace's annotations declare: the classes annotated with a valid value. Invalid values
 * are left out (the class keeps the default; RT5010 reports them), as are annotations of other keys.
 */
export function readDeclaredPostures(
  annotations: Readonly<Record<string, unknown>> | undefined,
): DeclaredPostures {
  const declared: DeclaredPostures = {};
  if (annotations === undefined) return declared;
  for (const cls of POSTURE_CLASSES) {
    const value = annotations[POSTURE_ANNOTATION[cls]];
    if (isPosture(value)) declared[cls] = value;
  }
  return declared;
}

/** The postures of a namespace from its annotations: declared values, the default for every other class. */
export function readNamespacePostures(annotations: Readonly<Record<string, unknown>> | undefined): Postures {
  return resolvePostures(readDeclaredPostures(annotations));
}

/**
 * Postures set for a whole node by the enforcer's configuration (`/etc/rtctl/enforcer.yaml`, or the install's
 * values), below the Namespace annotations. Precedence, per class (docs/semantics.md "Postures"):
 * - a container: its Namespace's annotation, else `defaults`, else `audit`;
 * - the host workload (no Namespace): `host`, else `audit` (`defaults` are for namespaces, not the host).
 */
export interface PostureSettings {
  /** Postures of the host workload (host processes, RuntimeHostPolicy): the seed's "protect or audit mode". */
  host?: DeclaredPostures;
  /** Default postures of every namespace, per class; a Namespace annotation overrides them. */
  defaults?: DeclaredPostures;
}

/** No configured postures: every class `audit` unless a Namespace annotates it. */
export const NO_POSTURE_SETTINGS: Readonly<PostureSettings> = Object.freeze({});

/** Declared postures over defaults, per class: the first declared value, else `audit`. */
export function layerPostures(...layers: readonly (DeclaredPostures | undefined)[]): Postures {
  const pick = (cls: PostureClass): Posture => {
    for (const layer of layers) {
      const value = layer?.[cls];
      if (value !== undefined) return value;
    }
    return DEFAULT_POSTURE;
  };
  return { file: pick('file'), network: pick('network'), capabilities: pick('capabilities') };
}

/** The postures of a workload by the precedence of PostureSettings: the one rule every component follows. */
export function resolveWorkloadPostures(
  workload: { host: boolean; namespace?: DeclaredPostures | undefined },
  settings: Readonly<PostureSettings> = NO_POSTURE_SETTINGS,
): Postures {
  return workload.host ? layerPostures(settings.host) : layerPostures(workload.namespace, settings.defaults);
}

/**
 * Parses postures as a user writes them in a flag: one value for every class (`block`), or per class
 * (`file=block,network=audit`). Returns the message of the first mistake instead.
 */
export function parsePostureSpec(text: string): DeclaredPostures | string {
  const trimmed = text.trim();
  if (isPosture(trimmed)) return { file: trimmed, network: trimmed, capabilities: trimmed };
  const declared: DeclaredPostures = {};
  for (const raw of trimmed.split(',')) {
    const item = raw.trim();
    const eq = item.indexOf('=');
    const cls = item.slice(0, eq).trim();
    const value = item.slice(eq + 1).trim();
    if (eq <= 0 || !isPostureClass(cls)) {
      return `expected audit, block, or class=posture pairs separated by commas (classes: file, network, capabilities; process follows file), got ${JSON.stringify(item)}`;
    }
    if (!isPosture(value)) return `${cls} must be audit or block, got ${JSON.stringify(value)}`;
    declared[cls] = value;
  }
  return declared;
}
