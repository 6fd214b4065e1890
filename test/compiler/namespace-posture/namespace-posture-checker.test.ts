// Namespace posture annotations: every key with valid, wrong-case, unknown and wrong-typed values.
import assert from 'node:assert/strict';
import { namespacePostureChecker } from '../../../compiler/namespace-posture/namespace-posture-checker.js';
import { POSTURE_ANNOTATIONS } from '../../../compiler/model/posture.js';
import { findCheckers } from '../../../compiler/checks/index.js';

function namespace(annotations: unknown): unknown {
  return { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'team-a', annotations } };
}

describe('namespace-posture checker', () => {
  it('is selected for core/v1 Namespace only', () => {
    assert.ok(
      findCheckers({ apiVersion: 'v1', kind: 'Namespace' }).some((c) => c.name === 'namespace-posture'),
    );
    assert.equal(namespacePostureChecker.appliesTo({ apiVersion: 'v1', kind: 'Pod' }), false);
  });
  const cases: { value: unknown; ok: boolean; message?: RegExp }[] = [
    { value: 'audit', ok: true },
    { value: 'block', ok: true },
    { value: 'Block', ok: false, message: /is "Block"; expected "audit" or "block" \(write it as "block"/ },
    { value: 'AUDIT', ok: false, message: /is "AUDIT"/ },
    { value: ' block', ok: false, message: /write it as "block"/ },
    { value: 'deny', ok: false, message: /is "deny"; expected "audit" or "block"$/ },
    { value: '', ok: false, message: /is ""/ },
    { value: 1, ok: false, message: /is 1;/ },
    { value: true, ok: false, message: /is true;/ },
    { value: null, ok: false, message: /is null;/ },
    { value: ['block'], ok: false, message: /is a list;/ },
  ];
  for (const key of POSTURE_ANNOTATIONS) {
    for (const c of cases) {
      it(`${key}: ${JSON.stringify(c.value)} → ${c.ok ? 'allowed' : 'RT5010'}`, () => {
        const findings = namespacePostureChecker.check(namespace({ [key]: c.value, other: 'x' }), {});
        if (c.ok) return assert.deepEqual(findings, []);
        assert.equal(findings.length, 1);
        assert.equal(findings[0]?.code, 'RT5010');
        assert.equal(findings[0]?.pointer, `/metadata/annotations/${key}`);
        assert.match(findings[0]?.message ?? '', c.message ?? /./);
      });
    }
  }
  it('reports every bad key, none when unset, nothing for malformed metadata', () => {
    assert.equal(
      namespacePostureChecker.check(
        namespace(Object.fromEntries(POSTURE_ANNOTATIONS.map((k) => [k, 'x']))),
        {},
      ).length,
      3,
    );
    assert.deepEqual(namespacePostureChecker.check(namespace({}), {}), []);
    assert.deepEqual(namespacePostureChecker.check(namespace('oops'), {}), []);
    assert.deepEqual(namespacePostureChecker.check({ kind: 'Namespace', metadata: 5 }, {}), []);
  });
});
