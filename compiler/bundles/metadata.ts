// The hardening metadata convention (docs/hardening.md): what a hardening policy implements and why, in
// annotations under one prefix, read by lint (the hardening-metadata check), `rtctl bundles` and the docs
// generator. Pure: an object in, the parsed metadata and findings out.
//
//   metadata:
//     labels:
//       hardening.security.runtime.com/profile: baseline        # or restricted
//     annotations:
//       hardening.security.runtime.com/cis: "kubernetes-4.1.9,docker-5.12"
//       hardening.security.runtime.com/mitre: "T1552.001,T1046"
//       hardening.security.runtime.com/nist: "CM-7(5),SI-7"
//       hardening.security.runtime.com/stig: "V-230487"
//       hardening.security.runtime.com/rationale: one line: why the control asks for this
//       hardening.security.runtime.com/attack: one line: the attack the policy stops
//       hardening.security.runtime.com/may-break: one line: what legitimate work it can break
import { Code } from '../diagnostics/codes/code.js';
import type { Finding } from '../diagnostics/finding.js';
import { EDITION_INFO, lookupControl } from './control-catalogue.js';

/** The annotation and label prefix of the convention. */
export const HARDENING_PREFIX = 'hardening.security.runtime.com/';

/** The catalogues, in reporting order. */
export const CATALOGUES = ['cis', 'mitre', 'nist', 'stig'] as const;
export type Catalogue = (typeof CATALOGUES)[number];

/** Display names of the catalogues. */
export const CATALOGUE_TITLES: Readonly<Record<Catalogue, string>> = {
  cis: 'CIS Benchmarks',
  mitre: 'MITRE ATT&CK',
  nist: 'NIST SP 800-53',
  stig: 'DISA STIG',
};

/** How a control id of each catalogue is written, and an example for messages. */
export const CONTROL_ID_FORMS: Readonly<Record<Catalogue, { pattern: RegExp; form: string }>> = {
  // CIS ids name their benchmark: the Docker, Kubernetes or distribution-independent Linux benchmark.
  cis: {
    pattern: /^(docker|kubernetes|linux)-\d{1,2}(\.\d{1,2}){1,3}$/,
    form: 'docker-5.12, kubernetes-4.1.9 or linux-6.1.1 (benchmark, then the section number)',
  },
  mitre: {
    pattern: /^T\d{4}(\.\d{3})?$/,
    form: 'an ATT&CK technique or sub-technique id such as T1552 or T1552.001',
  },
  nist: {
    pattern: /^(AC|AT|AU|CA|CM|CP|IA|IR|MA|MP|PE|PL|PM|PS|PT|RA|SA|SC|SI|SR)-\d{1,2}(\(\d{1,2}\))?$/,
    form: 'a family and number with an optional enhancement, such as CM-7 or AC-6(9)',
  },
  stig: { pattern: /^V-\d{5,6}$/, form: 'a STIG vulnerability id such as V-230487' },
};

/** The one-line text annotations; rationale and attack are required once a control is named. */
export const TEXT_KEYS = ['rationale', 'attack', 'may-break'] as const;
export type TextKey = (typeof TEXT_KEYS)[number];
const REQUIRED_TEXT: readonly TextKey[] = ['rationale', 'attack'];
/** Longest one-line text. */
export const TEXT_MAX = 300;

/** Profiles, from least to most restrictive: a profile includes the policies of those before it. */
export const PROFILES = ['baseline', 'restricted'] as const;
export type Profile = (typeof PROFILES)[number];
/** The label naming the least restrictive profile a policy belongs to. */
export const PROFILE_LABEL = `${HARDENING_PREFIX}profile`;

/** A policy's hardening metadata. */
export interface HardeningMetadata {
  controls: Record<Catalogue, string[]>;
  rationale?: string;
  attack?: string;
  mayBreak?: string;
  profile?: Profile;
}

/** True when the object carries any annotation or label of the convention. */
export function hasHardeningMetadata(metadata: {
  annotations?: Record<string, string>;
  labels?: Record<string, string>;
}): boolean {
  return [...Object.keys(metadata.annotations ?? {}), ...Object.keys(metadata.labels ?? {})].some((k) =>
    k.startsWith(HARDENING_PREFIX),
  );
}

function escapePointer(s: string): string {
  return s.replace(/~/g, '~0').replace(/\//g, '~1');
}

function catalogueEditions(catalogue: Catalogue): string {
  return Object.values(EDITION_INFO)
    .filter((e) => e.catalogue === catalogue)
    .map((e) => e.name)
    .join(' or ');
}

/** Splits a comma-separated id list: entries trimmed, empty entries kept (they are findings). */
export function splitIds(value: string): string[] {
  return value.split(',').map((s) => s.trim());
}

/** Reads the convention from an object's metadata; findings for every bad id, key, text or profile. */
export function readHardeningMetadata(metadata: {
  annotations?: Record<string, string>;
  labels?: Record<string, string>;
}): { meta: HardeningMetadata; findings: Finding[] } {
  const findings: Finding[] = [];
  const meta: HardeningMetadata = { controls: { cis: [], mitre: [], nist: [], stig: [] } };
  const annotations = metadata.annotations ?? {};
  const bad = (pointer: string, message: string): void => {
    findings.push({ code: Code.hardeningMetadata, severity: 'error', pointer, message });
  };
  for (const [key, value] of Object.entries(annotations)) {
    if (!key.startsWith(HARDENING_PREFIX)) continue;
    const name = key.slice(HARDENING_PREFIX.length);
    const pointer = `/metadata/annotations/${escapePointer(key)}`;
    if ((CATALOGUES as readonly string[]).includes(name)) {
      const catalogue = name as Catalogue;
      const { pattern, form } = CONTROL_ID_FORMS[catalogue];
      const seen = new Set<string>();
      for (const id of splitIds(value)) {
        if (!pattern.test(id)) {
          findings.push({
            code: Code.hardeningControlId,
            severity: 'error',
            pointer,
            message: `metadata.annotations.${key}: ${JSON.stringify(id)} is not a ${CATALOGUE_TITLES[catalogue]} control id; write ${form}, separated by commas`,
          });
        } else if (seen.has(id)) {
          findings.push({
            code: Code.hardeningControlId,
            severity: 'error',
            pointer,
            message: `metadata.annotations.${key}: ${JSON.stringify(id)} is listed twice`,
          });
        } else {
          seen.add(id);
          meta.controls[catalogue].push(id);
          if (lookupControl(catalogue, id) === undefined)
            findings.push({
              code: Code.hardeningControlUnlisted,
              severity: 'warning',
              pointer,
              message: `metadata.annotations.${key}: ${JSON.stringify(id)} is not in the control catalogue (compiler/bundles/control-catalogue.ts), so it has not been checked against ${catalogueEditions(catalogue)}; check the id's title there against what the policy enforces and list it, or remove it`,
            });
        }
      }
    } else if ((TEXT_KEYS as readonly string[]).includes(name)) {
      const text = value.trim();
      if (text === '' || /[\r\n]/.test(text) || text.length > TEXT_MAX)
        bad(
          pointer,
          `metadata.annotations.${key}: write one non-empty line of at most ${TEXT_MAX} characters`,
        );
      else if (name === 'rationale') meta.rationale = text;
      else if (name === 'attack') meta.attack = text;
      else meta.mayBreak = text;
    } else {
      bad(
        pointer,
        `metadata.annotations.${key}: unknown hardening annotation; known: ${[...CATALOGUES, ...TEXT_KEYS].map((k) => HARDENING_PREFIX + k).join(', ')}`,
      );
    }
  }
  for (const [key, value] of Object.entries(metadata.labels ?? {})) {
    if (!key.startsWith(HARDENING_PREFIX)) continue;
    const pointer = `/metadata/labels/${escapePointer(key)}`;
    if (key !== PROFILE_LABEL)
      bad(pointer, `metadata.labels.${key}: unknown hardening label; known: ${PROFILE_LABEL}`);
    else if (!(PROFILES as readonly string[]).includes(value))
      bad(
        pointer,
        `metadata.labels.${key}: ${JSON.stringify(value)} is not a profile; write ${PROFILES.join(' or ')}`,
      );
    else meta.profile = value as Profile;
  }
  const anyId = CATALOGUES.some((c) => annotations[HARDENING_PREFIX + c] !== undefined);
  if (hasHardeningMetadata(metadata)) {
    if (!anyId)
      bad(
        '/metadata/annotations',
        `metadata.annotations: a hardening policy names the controls it implements in at least one of ${CATALOGUES.map((c) => HARDENING_PREFIX + c).join(', ')}`,
      );
    for (const k of REQUIRED_TEXT)
      if (annotations[HARDENING_PREFIX + k] === undefined)
        bad(
          '/metadata/annotations',
          `metadata.annotations: ${HARDENING_PREFIX}${k} is missing; a hardening policy says in one line ${k === 'rationale' ? 'why the control asks for it' : 'the attack it stops'}`,
        );
  }
  return { meta, findings };
}
