// Output of `rtctl bundles` and docs/hardening.md: the catalogue as text, JSON, Markdown or YAML. Pure and
// deterministic (same catalogue, same bytes).
import { toYamlStream } from '../emit/yaml-text.js';
import {
  bundleNames,
  coverage,
  policyForApply,
  type BundlePolicy,
  type Catalog,
  type CoveredControl,
} from './catalog.js';
import { CONTROL_CATALOGUE, EDITION_INFO, EDITIONS, lookupControl } from './control-catalogue.js';
import {
  ADDED_BY_REVIEW,
  CHECKED_BEFORE_REVIEW,
  REVIEW_CHANGES,
  REVIEW_MOVES,
  REVIEW_RULES,
} from './control-review.js';
import {
  CATALOGUE_TITLES,
  CATALOGUES,
  HARDENING_PREFIX,
  PROFILE_LABEL,
  PROFILES,
  type Catalogue,
} from './metadata.js';

/** Shown instead of a title for an id the control catalogue does not list (lint warns, RT3032). */
export const UNLISTED_TITLE = '(not in the control catalogue)';

/** The title of a control as its catalogue names it, or UNLISTED_TITLE. */
export function controlTitle(catalogue: Catalogue, id: string): string {
  return lookupControl(catalogue, id)?.title ?? UNLISTED_TITLE;
}

function pad(s: string, n: number): string {
  return s + ' '.repeat(Math.max(0, n - s.length));
}

function table(rows: string[][]): string {
  const widths = rows[0]?.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? '').length))) ?? [];
  return (
    rows
      .map((r) =>
        r
          .map((c, i) => pad(c, widths[i] ?? 0))
          .join('  ')
          .trimEnd(),
      )
      .join('\n') + '\n'
  );
}

function cell(s: string): string {
  return s.replace(/\|/g, '\\|').replace(/\n/g, ' ');
}

function kindWord(p: BundlePolicy): string {
  return p.kind === 'RuntimeHostPolicy' ? 'node' : 'pod';
}

function controlsText(p: BundlePolicy): string {
  return CATALOGUES.filter((c) => p.meta.controls[c].length > 0)
    .map((c) => `${c.toUpperCase()} ${p.meta.controls[c].join(', ')}`)
    .join('; ');
}

/** JSON view of one policy. */
export function policySummary(p: BundlePolicy): Record<string, unknown> {
  return {
    name: p.name,
    bundle: p.bundle,
    file: p.file,
    kind: p.kind,
    profile: p.meta.profile ?? null,
    actions: p.actions,
    classes: p.classes,
    controls: p.meta.controls,
    titles: Object.fromEntries(
      CATALOGUES.map((c) => [
        c,
        Object.fromEntries(p.meta.controls[c].map((id) => [id, lookupControl(c, id)?.title ?? null])),
      ]),
    ),
    rationale: p.meta.rationale ?? null,
    attack: p.meta.attack ?? null,
    mayBreak: p.meta.mayBreak ?? null,
  };
}

/** `rtctl bundles list`. */
export function renderList(catalog: Catalog, format: 'text' | 'json'): string {
  if (format === 'json')
    return `${JSON.stringify(
      {
        bundles: bundleNames(catalog).map((b) => ({
          name: b,
          policies: catalog.policies.filter((p) => p.bundle === b).map(policySummary),
        })),
      },
      null,
      2,
    )}\n`;
  const rows = [['BUNDLE', 'POLICY', 'ON', 'ACTION', 'PROFILE', 'CONTROLS']];
  for (const p of catalog.policies)
    rows.push([
      p.bundle,
      p.name,
      kindWord(p),
      p.actions.join('/'),
      p.meta.profile ?? '-',
      controlsText(p) || '-',
    ]);
  const n = catalog.policies.length;
  return `${table(rows)}\n${n} ${n === 1 ? 'policy' : 'policies'} in ${bundleNames(catalog).length} bundles\n`;
}

/** `rtctl bundles show <policy>` as text. */
export function renderPolicyText(p: BundlePolicy): string {
  const lines = [
    `${p.name} (${p.kind}, bundle ${p.bundle}, ${p.file}:${p.line})`,
    `  profile:    ${p.meta.profile ?? '-'}`,
    `  actions:    ${p.actions.join(', ') || '-'} on ${p.classes.join(', ') || '-'}`,
  ];
  for (const c of CATALOGUES)
    p.meta.controls[c].forEach((id, i) =>
      lines.push(`  ${pad(i === 0 ? `${c.toUpperCase()}:` : '', 11)} ${id}  ${controlTitle(c, id)}`),
    );
  lines.push(
    `  rationale:  ${p.meta.rationale ?? '-'}`,
    `  attack:     ${p.meta.attack ?? '-'}`,
    `  may break:  ${p.meta.mayBreak ?? '-'}`,
  );
  return `${lines.join('\n')}\n`;
}

/** Policies as a YAML stream ready for `kubectl apply` (namespace set on pod policies when given). */
export function renderPoliciesYaml(policies: readonly BundlePolicy[], namespace?: string): string {
  return toYamlStream(policies.map((p) => policyForApply(p, namespace)));
}

/** `rtctl bundles coverage`. */
export function renderCoverage(
  policies: readonly BundlePolicy[],
  format: 'text' | 'json' | 'markdown',
): string {
  const covered = coverage(policies);
  if (format === 'json')
    return `${JSON.stringify(
      {
        catalogues: CATALOGUES.map((c) => ({
          catalogue: c,
          title: CATALOGUE_TITLES[c],
          controls: covered
            .filter((k) => k.catalogue === c)
            .map((k) => ({
              id: k.id,
              title: k.title ?? null,
              edition: k.edition ?? null,
              policies: k.policies,
            })),
        })),
        editions: EDITIONS.map((e) => ({
          edition: e,
          catalogue: EDITION_INFO[e].catalogue,
          name: EDITION_INFO[e].name,
        })),
        policies: policies.length,
      },
      null,
      2,
    )}\n`;
  if (format === 'markdown') return coverageMarkdown(covered);
  // The title last: STIG titles are sentences.
  const rows = [['CATALOGUE', 'CONTROL', 'POLICIES', 'TITLE']];
  for (const k of covered)
    rows.push([k.catalogue.toUpperCase(), k.id, k.policies.join(', '), k.title ?? UNLISTED_TITLE]);
  const counts = CATALOGUES.map(
    (c) => `${c.toUpperCase()} ${covered.filter((k) => k.catalogue === c).length}`,
  ).join(', ');
  return `${table(rows)}\ncontrols covered: ${counts} (by ${policies.length} policies)\n`;
}

function coverageMarkdown(covered: readonly CoveredControl[]): string {
  const out: string[] = [];
  for (const c of CATALOGUES) {
    const rows = covered.filter((k) => k.catalogue === c);
    out.push(
      `### ${CATALOGUE_TITLES[c]} (${rows.length} controls)`,
      '',
      '| control | title | policies |',
      '|---|---|---|',
    );
    for (const k of rows)
      out.push(
        `| ${cell(k.id)} | ${cell(k.title ?? UNLISTED_TITLE)} | ${k.policies.map((p) => `[${p}](#${p})`).join(', ')} |`,
      );
    out.push('');
  }
  return `${out.join('\n')}`;
}

/** The "How the ids were verified" section of docs/hardening.md, from the review record. */
function reviewSection(): string[] {
  const checked = CATALOGUES.map((c) => `${CATALOGUE_TITLES[c]} ${CHECKED_BEFORE_REVIEW[c]}`).join(', ');
  const removed = (c: Catalogue): number => REVIEW_CHANGES.filter((k) => k.catalogue === c).length;
  const out = [
    '## How the ids were verified',
    '',
    `A review on 2026-11-25 checked every id the policies named (distinct ids: ${checked}) against the`,
    'catalogue texts in the table above, by these rules:',
    '',
    ...REVIEW_RULES.map((r) => `- ${r}`),
    '',
    `It removed or replaced ${REVIEW_CHANGES.length} ids on policies (${CATALOGUES.map((c) => `${CATALOGUE_TITLES[c]} ${removed(c)}`).join(', ')}),`,
    `added ${CATALOGUES.flatMap((c) => ADDED_BY_REVIEW[c]).length} as replacements (${CATALOGUES.flatMap((c) => ADDED_BY_REVIEW[c]).join(', ') || 'none'}), and moved the policies whose first`,
    'catalogue had no control left to the bundle of one they still implement (their attack tests follow the names):',
    '',
    '| was | now | why |',
    '|---|---|---|',
    ...REVIEW_MOVES.map((m) => `| ${m.from} | [${m.to}](#${m.to}) | ${cell(m.reason)} |`),
    '',
    'The ids removed or replaced:',
    '',
    '| policy | id | now | why |',
    '|---|---|---|---|',
    ...REVIEW_CHANGES.map(
      (k) =>
        `| [${k.policy}](#${k.policy}) | ${cell(k.id)} | ${cell(k.replacement ?? 'removed')} | ${cell(k.reason)} |`,
    ),
    '',
  ];
  return out;
}

/** docs/hardening.md. */
export function renderHardeningDoc(catalog: Catalog): string {
  const out: string[] = [
    '# Hardening bundles',
    '',
    'Generated by `npm run gen` from `policies/hardening/`; do not edit by hand. `rtctl bundles list|show|coverage`',
    'prints the same data.',
    '',
    `${catalog.policies.length} policies in ${bundleNames(catalog).length} bundles (${bundleNames(catalog)
      .map((b) => `\`${b}/\``)
      .join(
        ', ',
      )}). Every policy selects every pod of the namespace it is applied in, or every Linux node, and`,
    'its attack is run in a real container (a real node process for node policies) by',
    '`test/hardening/attacks.test.ts`: denied and alerted for Block, passed and alerted for Audit.',
    '',
    '## The metadata convention',
    '',
    `Each policy says what it implements in annotations under \`${HARDENING_PREFIX}\`, checked by \`rtctl lint\``,
    '(RT3030 for a control id not written as its catalogue writes it, RT3032 for one the control catalogue',
    '`compiler/bundles/control-catalogue.ts` does not list, RT3031 for the rest):',
    '',
    '| key | value |',
    '|---|---|',
    `| \`${HARDENING_PREFIX}cis\` | CIS Benchmark sections, prefixed by the benchmark: \`docker-5.31\`, \`kubernetes-4.1.9\`, \`linux-5.1.2\` |`,
    `| \`${HARDENING_PREFIX}mitre\` | MITRE ATT&CK technique ids: \`T1496\`, \`T1552.001\` |`,
    `| \`${HARDENING_PREFIX}nist\` | NIST SP 800-53 controls, with an optional enhancement: \`CM-7\`, \`AC-6(9)\` |`,
    `| \`${HARDENING_PREFIX}stig\` | DISA STIG vulnerability ids: \`V-230487\` |`,
    `| \`${HARDENING_PREFIX}rationale\` | one line: why the control asks for this (required) |`,
    `| \`${HARDENING_PREFIX}attack\` | one line: the attack the policy stops (required) |`,
    `| \`${HARDENING_PREFIX}may-break\` | one line: what legitimate work it can break |`,
    `| label \`${PROFILE_LABEL}\` | the least restrictive profile that includes the policy: ${PROFILES.map((p) => `\`${p}\``).join(' or ')} |`,
    '',
    'Id lists are comma-separated. At least one catalogue annotation is required once any key of the convention is',
    'present.',
    '',
    '## Catalogue editions',
    '',
    'Section numbers move between editions of a benchmark; the ids of these policies refer to the editions below.',
    'Every id a policy names is listed, with its title and edition, in the control catalogue',
    '`compiler/bundles/control-catalogue.ts`; `rtctl lint` warns about any other id (RT3032).',
    '',
    '| ids | catalogue and edition | ids listed | titles checked against |',
    '|---|---|---|---|',
    ...EDITIONS.map((e) => {
      const info = EDITION_INFO[e];
      const listed = Object.values(CONTROL_CATALOGUE[info.catalogue]).filter((k) => k.edition === e).length;
      return `| ${info.ids} | ${cell(info.name)} | ${listed} | ${cell(info.checkedAgainst)} |`;
    }),
    '',
    ...reviewSection(),
    '## Profiles',
    '',
    'In the spirit of the Pod Security Standards: **baseline** blocks what no ordinary service does (package',
    'managers, compilers, miners, escape and persistence paths, credential stores) and stays quiet on nginx,',
    'redis and PostgreSQL; **restricted** adds what many services can live without (shells, interpreters,',
    'download and remote-copy tools, programs in temporary folders). Restricted includes baseline.',
    '',
    '    rtctl bundles show --profile baseline -o yaml --namespace shop | kubectl apply -f -',
    '',
    '| profile | policies |',
    '|---|---|',
  ];
  for (const profile of PROFILES) {
    const rank = PROFILES.indexOf(profile);
    const names = catalog.policies
      .filter((p) => p.meta.profile !== undefined && PROFILES.indexOf(p.meta.profile) <= rank)
      .map((p) => p.name);
    out.push(`| ${profile} | ${names.length} |`);
  }
  out.push(
    '',
    'Allow policies that let the services of the quiet-on-services test run under restricted are in',
    '`policies/hardening/allow/` (they carry no profile label).',
    '',
    '## Fanotify plane',
    '',
    'On kernels without BPF-LSM the fanotify plane enforces Process and File rules; network rules are enforced by',
    'the cgroup network plane that runs beside it when `RTCTL_NETWORK_PIN_DIR` names a bpffs directory (the miner',
    "policy's pool ports, which BPF-LSM cannot match: its connect hook does not read addresses). Capability rules",
    'are kept for defence in depth (lint warns with RT3018); every policy names an attack made of execs or opens,',
    'which both planes enforce. The fanotify plane does not mark `/proc`, `/sys` or `/dev`, so the file',
    'rules on those paths (nist-block-kernel-tuning) are enforced by BPF-LSM only; its attack is the `sysctl`',
    'exec.',
    '',
    '## Tests',
    '',
    "`test/hardening/attacks.test.ts` runs every policy's attack (the pool ports with the cgroup network plane on a",
    'bpffs it mounts), `test/hardening/services.test.ts` runs nginx, redis and PostgreSQL under both profiles, and',
    '`test/hardening/peer-scenarios.test.ts` runs the enforcement scenarios of the busybox end-to-end suite and of',
    'the reference project with real binaries. They need root, containerd, runc and mmdebstrap',
    '(`.ci/packages/hardening.txt`).',
    "The containers' root file system is built from the Debian packages in `test/hardening/rootfs-packages.txt` and",
    'cached under `/var/cache/rtctl-test/` (`RTCTL_TEST_CACHE`), keyed by a hash of that list; build it ahead with',
    '`node --import tsx test/hardening/support/rootfs.ts`.',
    '',
    '## Coverage',
    '',
    coverageMarkdown(coverage(catalog.policies)),
    '## Policies',
    '',
  );
  for (const b of bundleNames(catalog)) {
    out.push(`### Bundle \`${b}\``, '');
    for (const p of catalog.policies.filter((x) => x.bundle === b)) {
      out.push(
        `#### ${p.name}`,
        '',
        `\`${p.file}\` · ${p.kind} · ${p.actions.join('/') || 'no rules'} on ${p.classes.join(', ') || '-'} · profile ${p.meta.profile ?? '-'}`,
        '',
      );
      for (const c of CATALOGUES)
        if (p.meta.controls[c].length > 0)
          out.push(
            `- ${CATALOGUE_TITLES[c]}: ${p.meta.controls[c].map((id) => `${id} (${controlTitle(c, id)})`).join(', ')}`,
          );
      out.push(
        `- Rationale: ${p.meta.rationale ?? '-'}`,
        `- Attack: ${p.meta.attack ?? '-'}`,
        `- May break: ${p.meta.mayBreak ?? '-'}`,
        '',
      );
    }
  }
  return `${out.join('\n').replace(/\n+$/, '')}\n`;
}
