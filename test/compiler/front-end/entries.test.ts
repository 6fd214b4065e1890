// The front end's named entries agree: API objects (lintObjects) give the same rule set and the same findings
// (by code and pointer) as the same objects written as YAML text (lintTexts), only without positions.
import assert from 'node:assert/strict';
import { stringify } from 'yaml';
import { checkAdmissionObject, lintObjects, lintTexts } from '../../../compiler/lint.js';

const OBJECTS: { file: string; object: unknown }[] = [
  {
    file: 'kubernetes:RuntimePolicy/shop/web',
    object: {
      apiVersion: 'security.runtime.com/v1',
      kind: 'RuntimePolicy',
      metadata: { name: 'web', namespace: 'shop' },
      spec: {
        selector: { matchLabels: { app: 'web' } },
        file: { matchDirectories: [{ dir: '/etc/', recursive: true }] },
        process: { matchPaths: [{ path: '/bin/sh' }], action: 'Allow' },
        action: 'Block',
      },
    },
  },
  {
    file: 'kubernetes:RuntimePolicy/shop/bad',
    object: {
      apiVersion: 'security.runtime.com/v1',
      kind: 'RuntimePolicy',
      metadata: { name: 'bad', namespace: 'shop' },
      spec: { selector: { matchLabels: { app: 'web' } }, process: { matchPaths: [{ path: 'rel' }] } },
    },
  },
  {
    file: 'kubernetes:Namespace/shop',
    object: {
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: { name: 'shop', annotations: { 'runtime-file-posture': 'block' } },
    },
  },
];

function withoutLocations(value: unknown): unknown {
  return JSON.parse(
    JSON.stringify(value, (key, v: unknown) => (key === 'location' || key === 'line' ? undefined : v)),
  );
}

describe('front-end entries', () => {
  it('lintObjects gives the rule set, findings and postures lintTexts gives for the same objects as YAML', () => {
    const fromObjects = lintObjects(OBJECTS);
    const fromTexts = lintTexts(OBJECTS.map((o) => ({ file: o.file, text: stringify(o.object) })));
    assert.deepEqual(withoutLocations(fromObjects.ruleSet), withoutLocations(fromTexts.ruleSet));
    const summary = (r: typeof fromObjects): string[] =>
      r.diagnostics.map((d) => `${d.file} ${d.code} ${d.pointer}`).sort();
    assert.deepEqual(summary(fromObjects), summary(fromTexts));
    assert.ok(
      fromObjects.diagnostics.some(
        (d) =>
          d.file === 'kubernetes:RuntimePolicy/shop/bad' && d.pointer === '/spec/process/matchPaths/0/path',
      ),
      'the relative path is reported by input name and pointer',
    );
    assert.ok(!fromObjects.ruleSet.policies.some((p) => p.name === 'bad'));
    assert.deepEqual(fromObjects.namespacePostures, fromTexts.namespacePostures);
    assert.deepEqual(fromObjects.stats, fromTexts.stats);
  });

  it('lintObjects findings carry no positions, and rules have line 0 (the pointer says where)', () => {
    const result = lintObjects(OBJECTS);
    assert.ok(result.diagnostics.length > 0);
    for (const d of result.diagnostics) assert.equal(d.start, undefined);
    const rule = result.ruleSet.policies[0]?.rules[0];
    assert.equal(rule?.location.line, 0);
    assert.match(rule?.location.pointer ?? '', /^\/spec\//);
  });

  it('a lone admission object is checked against itself; lint checks the same rules across inputs once', () => {
    const policy = {
      apiVersion: 'security.runtime.com/v1',
      kind: 'RuntimePolicy',
      metadata: { name: 'twice', namespace: 'shop' },
      spec: {
        selector: { matchLabels: { app: 'web' } },
        process: { matchPaths: [{ path: '/bin/sh' }, { path: '/bin/sh', action: 'Allow' }] },
        action: 'Block',
      },
    };
    const admission = checkAdmissionObject(policy).map((f) => f.code);
    const lint = lintObjects([{ file: 'p', object: policy }]).diagnostics.map((d) => d.code);
    assert.ok(admission.length > 0, 'the conflict is found under admission');
    assert.deepEqual([...admission].sort(), [...lint].sort());
  });
});
