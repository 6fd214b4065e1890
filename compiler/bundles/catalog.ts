// The hardening catalogue: every policy of the bundle folders with its hardening metadata, the profiles that
// select from them, and the coverage of catalogue controls. Pure: source texts in (file names relative to the
// bundles root, so the first path segment names the bundle), data out.
import type { Diagnostic } from '../diagnostics/diagnostic.js';
import type { Action, PolicyIR } from '../ir/rule-set.js';
import { lintTexts, type SourceText } from '../lint.js';
import { lookupControl, type Edition } from './control-catalogue.js';
import {
  CATALOGUES,
  PROFILES,
  readHardeningMetadata,
  type Catalogue,
  type HardeningMetadata,
  type Profile,
} from './metadata.js';

/** One policy of a bundle. */
export interface BundlePolicy {
  bundle: string;
  file: string;
  line: number;
  name: string;
  kind: PolicyIR['kind'];
  /** Actions of the policy's rules, in Block, Audit, Allow order. */
  actions: Action[];
  /** Operation classes its rules decide (`process`, `file`, `network`, `capabilities`). */
  classes: string[];
  meta: HardeningMetadata;
  /** The policy object as written. */
  object: Record<string, unknown>;
}

/** The catalogue of all bundles. */
export interface Catalog {
  policies: BundlePolicy[];
  /** Lint's findings over all bundles together. */
  diagnostics: Diagnostic[];
}

const ACTION_ORDER: readonly Action[] = ['Block', 'Audit', 'Allow'];

function bundleOf(file: string): string {
  const first = file.split('/')[0] ?? '';
  return first === file ? '.' : first;
}

/** Lints the bundle sources together and reads each policy's metadata. */
export function buildCatalog(sources: readonly SourceText[]): Catalog {
  const lint = lintTexts([...sources]);
  const policies: BundlePolicy[] = lint.documents.map((d) => {
    const object = d.object as unknown as Record<string, unknown> & {
      metadata: { name: string; labels?: Record<string, string>; annotations?: Record<string, string> };
    };
    const ir = lint.ruleSet.policies.find(
      (p) => p.kind === d.kind && p.name === object.metadata.name && p.location.file === d.file,
    );
    const rules = ir?.rules ?? [];
    const actions = ACTION_ORDER.filter((a) => rules.some((r) => r.action === a));
    const classes = [...new Set(rules.map((r) => r.operation))].sort();
    return {
      bundle: bundleOf(d.file),
      file: d.file,
      line: d.line,
      name: object.metadata.name,
      kind: d.kind,
      actions,
      classes,
      meta: readHardeningMetadata(object.metadata).meta,
      object,
    };
  });
  policies.sort((a, b) =>
    a.bundle === b.bundle ? (a.name < b.name ? -1 : a.name > b.name ? 1 : 0) : a.bundle < b.bundle ? -1 : 1,
  );
  return { policies, diagnostics: lint.diagnostics };
}

/** The bundle names, sorted. */
export function bundleNames(catalog: Catalog): string[] {
  return [...new Set(catalog.policies.map((p) => p.bundle))].sort();
}

/** The policies a profile selects: those labelled with it or with a less restrictive profile. */
export function selectProfile(catalog: Catalog, profile: Profile): BundlePolicy[] {
  const rank = PROFILES.indexOf(profile);
  return catalog.policies.filter(
    (p) => p.meta.profile !== undefined && PROFILES.indexOf(p.meta.profile) <= rank,
  );
}

/** One covered control and the policies that implement it. */
export interface CoveredControl {
  catalogue: Catalogue;
  id: string;
  /** Title and edition from the control catalogue; absent for an id it does not list (lint warns, RT3032). */
  title?: string;
  edition?: Edition;
  policies: string[];
}

function compareIds(a: string, b: string): number {
  // Numeric parts compare as numbers (CM-7 before CM-11, 5.1.2 before 5.1.10).
  const pa = a.split(/(\d+)/);
  const pb = b.split(/(\d+)/);
  for (let i = 0; i < Math.min(pa.length, pb.length); i++) {
    const x = pa[i] ?? '';
    const y = pb[i] ?? '';
    if (x === y) continue;
    if (i % 2 === 1) return Number(x) - Number(y);
    return x < y ? -1 : 1;
  }
  return pa.length - pb.length;
}

/** Every control named by some policy, by catalogue then id, with its policies sorted. */
export function coverage(policies: readonly BundlePolicy[]): CoveredControl[] {
  const out: CoveredControl[] = [];
  for (const catalogue of CATALOGUES) {
    const byId = new Map<string, string[]>();
    for (const p of policies)
      for (const id of p.meta.controls[catalogue]) byId.set(id, [...(byId.get(id) ?? []), p.name]);
    for (const id of [...byId.keys()].sort(compareIds)) {
      const listed = lookupControl(catalogue, id);
      out.push({
        catalogue,
        id,
        ...(listed === undefined ? {} : { title: listed.title, edition: listed.edition }),
        policies: [...(byId.get(id) ?? [])].sort(),
      });
    }
  }
  return out;
}

/** The policy object for applying: hardening metadata kept, the namespace set for pod policies when given. */
export function policyForApply(p: BundlePolicy, namespace?: string): Record<string, unknown> {
  const metadata = { ...(p.object['metadata'] as Record<string, unknown>) };
  if (namespace !== undefined && p.kind === 'RuntimePolicy') {
    const { name, ...rest } = metadata;
    delete rest['namespace'];
    return { ...p.object, metadata: { name, namespace, ...rest } };
  }
  return { ...p.object, metadata };
}
