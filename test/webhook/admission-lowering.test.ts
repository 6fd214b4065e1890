// The admission path lowers a policy without lazy positions (an API object has no text): the result must be
// the lowering an object locator gives (file '', line 0, column 0 everywhere), and the findings of
// checkAdmissionObject must be those of the document checks and within-policy cross checks run with lazy
// positions. Over every policy of the admission fixtures and the example policies.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseAllDocuments } from 'yaml';
import { checkConflictingRules } from '../../compiler/checks/cross/conflicting-rules.js';
import { checkUnreachableSources } from '../../compiler/checks/cross/unreachable-sources.js';
import { checkAdmissionObject } from '../../compiler/front-end/check-admission-object.js';
import { checkObjectDocument } from '../../compiler/front-end/check-object.js';
import { lowerPolicy, lowerPolicyForChecks, lowerPolicyOnce } from '../../compiler/lower/lower-policy.js';
import type { PolicyDocument } from '../../compiler/model/policy-document.js';
import { isPolicyKind } from '../../compiler/checks/policy/policy-checker.js';
import type { Finding } from '../../compiler/diagnostics/finding.js';
import { findEnforcementGaps } from '../../compiler/enforcement/enforcement-findings.js';
import { ENFORCEMENT_TARGETS, isKindCarried } from '../../compiler/enforcement/enforcement-table.js';
import { summarizeEnforcement } from '../../compiler/enforcement/summarize-enforcement.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

function yamlFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true })
    .flatMap((e) =>
      e.isDirectory()
        ? yamlFiles(path.join(dir, e.name))
        : e.name.endsWith('.yaml')
          ? [path.join(dir, e.name)]
          : [],
    )
    .sort();
}

/** Every policy object: the fixtures' `object` fields and the documents of policies/. */
function policyObjects(): Array<{ name: string; object: Record<string, unknown> }> {
  const out: Array<{ name: string; object: Record<string, unknown> }> = [];
  const add = (name: string, v: unknown): void => {
    if (typeof v !== 'object' || v === null) return;
    const o = v as Record<string, unknown>;
    if (typeof o['kind'] === 'string' && isPolicyKind(o['kind'])) out.push({ name, object: o });
  };
  for (const file of yamlFiles(path.join(ROOT, 'test/fixtures/webhook/admission'))) {
    for (const doc of parseAllDocuments(readFileSync(file, 'utf8'))) {
      const c = doc.toJS() as { name?: string; object?: unknown };
      add(`${path.basename(file)}: ${c.name ?? ''}`, c.object);
    }
  }
  for (const file of yamlFiles(path.join(ROOT, 'policies'))) {
    for (const doc of parseAllDocuments(readFileSync(file, 'utf8'))) {
      if (doc.errors.length === 0) add(path.relative(ROOT, file), doc.toJS());
    }
  }
  return out;
}

/** The IR with every location read out into plain values (lazy locations are getters). */
function plain(value: unknown): unknown {
  return JSON.parse(JSON.stringify(value)) as unknown;
}

/** checkAdmissionObject as it was: document checks with lazy positions, then the within-policy cross checks. */
function checkWithLazyPositions(object: Record<string, unknown>): Finding[] {
  const { findings } = checkObjectDocument(object, { operation: 'CREATE' });
  if (findings.some((f) => f.severity === 'error') || object['apiVersion'] !== 'security.runtime.com/v1')
    return findings;
  const kind = String(object['kind']);
  const document = { kind, object, file: '', index: 0, line: 0 } as PolicyDocument;
  const policy = lowerPolicyOnce(document, () => ({ line: 0, column: 0 }));
  const located = [{ policy, file: '', document: 0 }];
  for (const rule of [checkConflictingRules, checkUnreachableSources]) {
    for (const { finding } of rule(located, { namespacePostures: new Map() })) {
      const { related, ...rest } = finding;
      findings.push(
        related === undefined
          ? rest
          : { ...rest, related: related.map((r) => ({ message: r.message, pointer: r.pointer })) },
      );
    }
  }
  return findings;
}

describe('admission lowering without lazy positions', () => {
  const objects = policyObjects();

  it('has policies to compare, with rules and with findings', () => {
    assert.ok(objects.length >= 20, `${objects.length} policies`);
    assert.ok(objects.some((o) => checkAdmissionObject(o.object, { operation: 'CREATE' }).length > 0));
  });

  it('lowers every policy to what an object locator gives (file "", line 0, column 0)', () => {
    let rules = 0;
    for (const { name, object } of objects) {
      if (checkObjectDocument(object).findings.some((f) => f.severity === 'error')) continue;
      const doc = { kind: String(object['kind']), object, file: '', index: 0, line: 0 } as PolicyDocument;
      const lazy = lowerPolicy(doc, () => ({ line: 0, column: 0 }));
      const fixed = lowerPolicyForChecks(doc, { withoutPositions: true });
      assert.deepEqual(plain(fixed), plain(lazy), name);
      // Taken over by the lowering stage of an object (same file), as it is.
      assert.equal(
        lowerPolicyOnce(doc, () => ({ line: 0, column: 0 })),
        fixed,
        name,
      );
      rules += lazy.rules.length;
    }
    assert.ok(rules > 50, `${rules} rules`);
  });

  it('lowers again when a policy lowered without positions is taken over for a file', () => {
    const object = objects[0]?.object ?? {};
    const doc = { kind: String(object['kind']), object, file: '', index: 0, line: 0 } as PolicyDocument;
    const fixed = lowerPolicyForChecks(doc, { withoutPositions: true });
    const inFile = lowerPolicyOnce({ ...doc, file: 'p.yaml' }, () => ({
      line: 7,
      column: 3,
    }));
    assert.notEqual(inFile, fixed);
    assert.equal(inFile.location.file, 'p.yaml');
    assert.equal(inFile.location.line, 7);
  });

  it('names in enforcement findings exactly the rules some carrying target does not enforce', () => {
    let flagged = 0;
    let clean = 0;
    for (const { name, object } of objects) {
      if (checkObjectDocument(object).findings.some((f) => f.severity === 'error')) continue;
      const doc = { kind: String(object['kind']), object, file: '', index: 0, line: 0 } as PolicyDocument;
      const policy = lowerPolicy(doc, () => ({ line: 0, column: 0 }));
      const carrying = ENFORCEMENT_TARGETS.map((t) => t.target).filter((t) => isKindCarried(t, policy.kind));
      const summaries = carrying.map((t) => summarizeEnforcement(policy, t));
      const all = [
        ...policy.rules,
        ...policy.syscallRules,
        ...policy.dnsQueryRules,
        ...policy.presets,
        ...policy.deviceRules,
      ].map((r) => r.location.pointer);
      const expected = all.filter((p) => !summaries.every((s) => s.enforced.includes(p))).sort();
      const found = [...new Set(findEnforcementGaps(policy).map((f) => f.pointer))].sort();
      assert.deepEqual(found, expected, name);
      flagged += expected.length;
      clean += all.length - expected.length;
    }
    assert.ok(flagged > 5 && clean > 50, `${flagged} rules flagged, ${clean} clean`);
  });

  it('finds for every policy what the checks with lazy positions find', () => {
    for (const { name, object } of objects) {
      assert.deepEqual(
        checkAdmissionObject(structuredClone(object), { operation: 'CREATE' }),
        checkWithLazyPositions(structuredClone(object)),
        name,
      );
    }
  });
});
