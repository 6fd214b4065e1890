// Per-document semantic checks of a schema-valid policy: what JSON Schema cannot say. Each check is a small
// pure function from the object to findings; they are listed in one array.
import { Code } from '../../diagnostics/codes/code.js';
import type { Finding } from '../../diagnostics/finding.js';
import type { PolicyKind } from '../../ir/rule-set.js';
import { RULE_LISTS, resolveAction } from '../../lower/lower-policy.js';
import { checkEmptyFromSource } from './empty-from-source.js';
import { checkPtsFalse } from './pts-false.js';
import { checkAddressRules } from './address-rules.js';
import { checkHardeningMetadata } from './hardening-metadata.js';

/** A schema-valid policy object, read structurally. */
export type PolicyObject = {
  metadata: {
    name: string;
    namespace?: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
  };
  spec: Record<string, unknown> & { action?: string };
};

/** One per-document check. */
export type DocumentRule = (policy: PolicyObject, kind: PolicyKind) => Finding[];

const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const DNS1123_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

/** Preset names rtctl knows. */
export const KNOWN_PRESETS = ['filelessExec', 'anonMapExec', 'protectEnv', 'protectProc', 'exec'] as const;

function f(code: string, severity: Finding['severity'], pointer: string, message: string): Finding {
  return { code, severity, pointer, message };
}

type RuleLike = Record<string, unknown> & { action?: string };
type SectionLike = Record<string, unknown> & { action?: string };

function sectionOf(policy: PolicyObject, name: string): SectionLike | undefined {
  const s = policy.spec[name];
  return s !== null && typeof s === 'object' ? (s as SectionLike) : undefined;
}

/** The rules of an absent list (read only). */
const NO_RULES: readonly RuleLike[] = [];

function listOf(section: SectionLike | undefined, list: string): readonly RuleLike[] {
  const l = section?.[list];
  return Array.isArray(l) ? (l as RuleLike[]) : NO_RULES;
}

const checkNames: DocumentRule = (p) => {
  const out: Finding[] = [];
  const name = p.metadata.name;
  if (name.length > 253 || !DNS1123_SUBDOMAIN.test(name)) {
    out.push(
      f(
        Code.invalidName,
        'error',
        '/metadata/name',
        `metadata.name: ${JSON.stringify(name)} is not a DNS-1123 name (lower case letters, digits, "-" and ".", starting and ending with a letter or digit, at most 253 characters)`,
      ),
    );
  }
  const ns = p.metadata.namespace;
  if (ns !== undefined && (ns.length > 63 || !DNS1123_LABEL.test(ns))) {
    out.push(
      f(
        Code.invalidName,
        'error',
        '/metadata/namespace',
        `metadata.namespace: ${JSON.stringify(ns)} is not a DNS-1123 label (lower case letters, digits and "-", at most 63 characters)`,
      ),
    );
  }
  return out;
};

/** Every list of rules a spec can have, in order: its section, its list and its pointer (made once). */
const RULE_LIST_PLACES: ReadonlyArray<{ section: string; list: string; pointer: string }> = [
  ...RULE_LISTS.map((ls) => ({ section: ls.section, list: ls.list, pointer: ls.pointer })),
  ...['matchSyscalls', 'matchPaths'].map((list) => ({
    section: 'syscalls',
    list,
    pointer: `/spec/syscalls/${list}`,
  })),
  { section: 'network', list: 'matchDNSQueries', pointer: '/spec/network/matchDNSQueries' },
  { section: 'device', list: 'matchDevice', pointer: '/spec/device/matchDevice' },
];

const checkActions: DocumentRule = (p) => {
  const out: Finding[] = [];
  for (const place of RULE_LIST_PLACES) {
    const section = sectionOf(p, place.section);
    if (section === undefined) continue;
    const rules = listOf(section, place.list);
    for (let i = 0; i < rules.length; i++) {
      if (resolveAction(rules[i], section, p.spec) !== undefined) continue;
      const { pointer } = place;
      out.push(
        f(
          Code.missingAction,
          'error',
          `${pointer}/${i}`,
          `${pointer.slice(1).replace(/\//g, '.')}[${i}]: the rule has no action; set action (Block, Audit or Allow) on the rule, on its section or on spec`,
        ),
      );
    }
  }
  const presets = p.spec['presets'];
  if (Array.isArray(presets)) {
    presets.forEach((pr: RuleLike, i) => {
      if (resolveAction(pr, p.spec) === undefined) {
        out.push(
          f(
            Code.missingAction,
            'error',
            `/spec/presets/${i}`,
            `spec.presets[${i}]: the preset has no action; set action on it or on spec`,
          ),
        );
      }
    });
  }
  return out;
};

const checkPatterns: DocumentRule = (p) => {
  const out: Finding[] = [];
  for (const section of ['process', 'file']) {
    listOf(sectionOf(p, section), 'matchPatterns').forEach((r, i) => {
      const pat = String(r['pattern']);
      if (!pat.startsWith('/')) {
        out.push(
          f(
            Code.relativePath,
            'error',
            `/spec/${section}/matchPatterns/${i}/pattern`,
            `spec.${section}.matchPatterns[${i}].pattern: ${JSON.stringify(pat)} is relative; patterns match absolute paths (start it with / or /**/)`,
          ),
        );
      }
    });
  }
  return out;
};

const checkSyscallSources: DocumentRule = (p) => {
  const out: Finding[] = [];
  const sys = sectionOf(p, 'syscalls');
  for (const list of ['matchSyscalls', 'matchPaths']) {
    listOf(sys, list).forEach((r, i) => {
      const sources = Array.isArray(r['fromSource']) ? (r['fromSource'] as Array<{ dir?: string }>) : [];
      sources.forEach((s, j) => {
        if (s.dir === undefined) return;
        const pointer = `/spec/syscalls/${list}/${i}/fromSource/${j}/dir`;
        const path = `spec.syscalls.${list}[${i}].fromSource[${j}].dir`;
        if (!s.dir.startsWith('/')) {
          out.push(
            f(
              Code.relativePath,
              'error',
              pointer,
              `${path}: ${JSON.stringify(s.dir)} is a relative path; start it with /`,
            ),
          );
        } else if (!s.dir.endsWith('/')) {
          out.push(
            f(
              Code.syscallSourceDirWithoutSlash,
              'warning',
              pointer,
              `${path}: ${JSON.stringify(s.dir)} does not end in /; read as the directory ${JSON.stringify(`${s.dir}/`)}`,
            ),
          );
        }
      });
    });
  }
  return out;
};

const checkEmpty: DocumentRule = (p) => {
  let count = 0;
  for (const place of RULE_LIST_PLACES) count += listOf(sectionOf(p, place.section), place.list).length;
  const presets = p.spec['presets'];
  if (Array.isArray(presets)) count += presets.length;
  if (typeof p.spec['apparmor'] === 'string' && p.spec['apparmor'] !== '') count++;
  return count > 0
    ? []
    : [
        f(
          Code.emptyPolicy,
          'warning',
          '/spec',
          'spec: the policy has no rules (no process, file, network, capabilities, syscalls or presets entries); it changes nothing',
        ),
      ];
};

const checkPresets: DocumentRule = (p) => {
  const presets = p.spec['presets'];
  if (!Array.isArray(presets)) return [];
  return presets.flatMap((pr: { name?: string }, i) =>
    (KNOWN_PRESETS as readonly string[]).includes(pr.name ?? '')
      ? []
      : [
          f(
            Code.unknownPreset,
            'warning',
            `/spec/presets/${i}/name`,
            `spec.presets[${i}].name: unknown preset ${JSON.stringify(pr.name)}; known presets: ${KNOWN_PRESETS.join(', ')}`,
          ),
        ],
  );
};

/** Every per-document semantic check, in reporting order. */
export const DOCUMENT_RULES: readonly DocumentRule[] = [
  checkNames,
  checkActions,
  checkPatterns,
  checkSyscallSources,
  checkEmpty,
  checkPresets,
  checkEmptyFromSource,
  checkPtsFalse,
  checkAddressRules,
  checkHardeningMetadata,
];
