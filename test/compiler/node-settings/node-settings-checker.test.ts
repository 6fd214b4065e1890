// The IMDS rules over every kind in the node-kinds table: safe, unsafe, defaulted, annotated and wrong-typed
// options, each expectation naming the code and the JSON pointer.
import assert from 'node:assert/strict';
import { nodeSettingsChecker } from '../../../compiler/node-settings/node-settings-checker.js';
import { NODE_KINDS, type NodeKind } from '../../../compiler/node-settings/node-kinds.js';
import { findCheckers } from '../../../compiler/checks/index.js';
import type { Finding } from '../../../compiler/diagnostics/finding.js';

function namesOf(path: string): string[] {
  return path
    .replace(/^\$\.?/, '')
    .replace(/\[\*\]/g, '')
    .split('.')
    .filter((s) => s !== '');
}

/** Builds an object of the kind with `options` placed at the kind's first options path (absent when undefined). */
function buildObject(
  entry: NodeKind,
  options: Record<string, unknown> | undefined,
  annotations?: Record<string, unknown>,
) {
  const root: Record<string, unknown> = {
    apiVersion: `${entry.group}/${entry.versions[0] ?? ''}`,
    kind: entry.kind,
    metadata: { name: 'pool', ...(annotations === undefined ? {} : { annotations }) },
  };
  const unitPath = entry.units[0] ?? '$.spec';
  const optionsPath = entry.options[0] ?? '$';
  const unitIsList = unitPath.endsWith('[*]');
  const optionsIsList = optionsPath.endsWith('[*]');
  const unit: Record<string, unknown> = {};
  if (options !== undefined) {
    const names = namesOf(optionsPath);
    if (names.length === 0) Object.assign(unit, options);
    else {
      let at = unit;
      names.slice(0, -1).forEach((n) => {
        const next: Record<string, unknown> = {};
        at[n] = next;
        at = next;
      });
      at[names[names.length - 1] ?? ''] = optionsIsList ? [options] : options;
    }
  }
  const unitNames = namesOf(unitPath);
  let at = root;
  unitNames.slice(0, -1).forEach((n) => {
    const next: Record<string, unknown> = {};
    at[n] = next;
    at = next;
  });
  at[unitNames[unitNames.length - 1] ?? ''] = unitIsList ? [unit] : unit;
  const unitPointer = '/' + unitNames.join('/') + (unitIsList ? '/0' : '');
  const optionsPointer =
    unitPointer +
    namesOf(optionsPath)
      .map((n) => `/${n}`)
      .join('') +
    (optionsIsList && options !== undefined ? '/0' : '');
  return { object: root, optionsPointer };
}

function fieldOf(entry: NodeKind, option: 'tokens' | 'hopLimit' | 'endpoint' | 'tags'): string | undefined {
  return entry.fields[option]?.field;
}

/** A written value for an option in the kind's own spelling (eksctl maps booleans). */
function spell(entry: NodeKind, option: 'tokens' | 'hopLimit', value: string | number): unknown {
  const spec = entry.fields[option];
  const hit = spec?.map?.find(([, to]) => to === value);
  return hit === undefined ? value : hit[0];
}

/** True when the kind's safe hop-limit setting also forces required tokens (eksctl's disablePodIMDS). */
function impliedTokens(entry: NodeKind): boolean {
  const hop = entry.fields.hopLimit;
  const safeHop = hop?.map?.find(([, to]) => to === 1)?.[0] ?? 1;
  return (entry.implies ?? []).some(
    (i) => i.option === 'tokens' && i.value === 'required' && i.field === hop?.field && i.equals === safeHop,
  );
}

function summary(findings: Finding[]): string[] {
  return findings.map((f) => `${f.code} ${f.severity} ${f.pointer}`).sort();
}

interface Case {
  name: string;
  options: Record<string, unknown> | undefined;
  annotations?: Record<string, unknown>;
  expect: (ptr: string) => string[];
}

for (const entry of NODE_KINDS) {
  const id = `${entry.group}/${entry.versions.join(',')} ${entry.kind}`;
  const tokens = fieldOf(entry, 'tokens') ?? 'httpTokens';
  const hop = fieldOf(entry, 'hopLimit') ?? 'httpPutResponseHopLimit';
  const endpoint = fieldOf(entry, 'endpoint');
  const tags = fieldOf(entry, 'tags');
  const safe = { [tokens]: spell(entry, 'tokens', 'required'), [hop]: spell(entry, 'hopLimit', 1) };
  const defaultedExpect = (ptr: string): string[] => {
    const out: string[] = [];
    if (entry.defaults.tokens !== 'required') out.push(`RT5001 error ${ptr}/${tokens}`);
    if (entry.defaults.hopLimit > 1) out.push(`RT5002 error ${ptr}/${hop}`);
    return out.sort();
  };
  const cases: Case[] = [
    { name: 'safe: tokens required, hop limit 1', options: safe, expect: () => [] },
    impliedTokens(entry)
      ? {
          name: `tokens optional, but ${hop} implies required tokens: no finding`,
          options: { ...safe, [tokens]: spell(entry, 'tokens', 'optional') },
          expect: () => [],
        }
      : {
          name: 'unsafe: tokens optional',
          options: { ...safe, [tokens]: spell(entry, 'tokens', 'optional') },
          expect: (p) => [`RT5001 error ${p}/${tokens}`],
        },
    {
      name: 'unsafe: hop limit 2',
      options: { ...safe, [hop]: spell(entry, 'hopLimit', 2) },
      expect: (p) => [`RT5002 error ${p}/${hop}`],
    },
    {
      name: 'annotated: hop limit 2 with a reason',
      options: { ...safe, [hop]: spell(entry, 'hopLimit', 2) },
      annotations: { 'security.runtime.com/allow-pod-imds': 'aws-load-balancer-controller reads the VPC id' },
      expect: (p) => [`RT5003 warning ${p}/${hop}`],
    },
    {
      name: 'annotated with an empty reason: still denied',
      options: { ...safe, [hop]: spell(entry, 'hopLimit', 2) },
      annotations: { 'security.runtime.com/allow-pod-imds': '  ' },
      expect: (p) =>
        [
          `RT5002 error ${p}/${hop}`,
          'RT5007 error /metadata/annotations/security.runtime.com~1allow-pod-imds',
        ].sort(),
    },
    { name: 'defaulted: no options at all', options: undefined, expect: defaultedExpect },
    { name: 'defaulted: empty options', options: {}, expect: defaultedExpect },
    {
      name: 'wrong type: tokens a number',
      options: { ...safe, [tokens]: 7 },
      expect: (p) => [`RT5006 error ${p}/${tokens}`],
    },
    {
      name: 'wrong type: hop limit a string',
      options: { ...safe, [hop]: '2' },
      expect: (p) => [`RT5006 error ${p}/${hop}`],
    },
  ];
  if (entry.fields.hopLimit?.map === undefined) {
    cases.push({
      name: 'out of range: hop limit 65',
      options: { ...safe, [hop]: 65 },
      expect: (p) => [`RT5006 error ${p}/${hop}`],
    });
  }
  if (endpoint !== undefined) {
    cases.push({
      name: 'endpoint disabled: warning',
      options: { ...safe, [endpoint]: 'disabled' },
      expect: (p) => [`RT5004 warning ${p}/${endpoint}`],
    });
  }
  if (endpoint !== undefined) {
    cases.push({
      name: 'endpoint disabled: tokens optional and hop limit 2 do not apply',
      options: {
        [tokens]: spell(entry, 'tokens', 'optional'),
        [hop]: spell(entry, 'hopLimit', 2),
        [endpoint]: 'disabled',
      },
      expect: (p) => [`RT5004 warning ${p}/${endpoint}`],
    });
  }
  if (tags !== undefined) {
    cases.push({
      name: 'instance metadata tags enabled: warning',
      options: { ...safe, [tags]: 'enabled' },
      expect: (p) => [`RT5005 warning ${p}/${tags}`],
    });
  }
  describe(`node-settings checker: ${id}`, () => {
    it('is selected by the checker registry', () => {
      for (const version of entry.versions) {
        const names = findCheckers({ apiVersion: `${entry.group}/${version}`, kind: entry.kind }).map(
          (c) => c.name,
        );
        assert.ok(names.includes('node-settings'), `${version}: ${names.join(',')}`);
      }
    });
    for (const c of cases) {
      it(c.name, () => {
        const { object, optionsPointer } = buildObject(entry, c.options, c.annotations);
        const findings = nodeSettingsChecker.check(object, {});
        assert.deepEqual(summary(findings), c.expect(optionsPointer));
        for (const f of findings) assert.match(f.message, /\S/);
      });
    }
  });
}

describe('node-settings checker: shapes and messages', () => {
  it('Upbound v1beta1: forProvider wins over initProvider, field by field', () => {
    const object = {
      apiVersion: 'ec2.aws.upbound.io/v1beta1',
      kind: 'Instance',
      metadata: { name: 'i' },
      spec: {
        forProvider: { metadataOptions: [{ httpPutResponseHopLimit: 1 }] },
        initProvider: { metadataOptions: [{ httpTokens: 'required', httpPutResponseHopLimit: 3 }] },
      },
    };
    assert.deepEqual(nodeSettingsChecker.check(object, {}), []);
  });
  it('Upbound v1beta2: options as a list is a type error at the list', () => {
    const object = {
      apiVersion: 'ec2.aws.upbound.io/v1beta2',
      kind: 'LaunchTemplate',
      spec: { forProvider: { metadataOptions: [{ httpTokens: 'required' }] } },
    };
    assert.deepEqual(summary(nodeSettingsChecker.check(object, {})), [
      'RT5001 error /spec/forProvider/metadataOptions/httpTokens',
      'RT5006 error /spec/forProvider/metadataOptions',
    ]);
  });
  it('eksctl: every node group is judged on its own', () => {
    const object = {
      apiVersion: 'eksctl.io/v1alpha5',
      kind: 'ClusterConfig',
      metadata: { name: 'c', region: 'eu-west-1' },
      nodeGroups: [{ name: 'a', disableIMDSv1: true, disablePodIMDS: true }, { name: 'b' }],
      managedNodeGroups: [{ name: 'm', disableIMDSv1: true, disablePodIMDS: false }],
    };
    assert.deepEqual(summary(nodeSettingsChecker.check(object, {})), [
      'RT5001 error /nodeGroups/1/disableIMDSv1',
      'RT5002 error /managedNodeGroups/0/disablePodIMDS',
      'RT5002 error /nodeGroups/1/disablePodIMDS',
    ]);
  });
  it('eksctl: disablePodIMDS: true makes tokens required even when disableIMDSv1 is unset or false (makeMetadataOptions)', () => {
    const object = {
      apiVersion: 'eksctl.io/v1alpha5',
      kind: 'ClusterConfig',
      metadata: { name: 'c', region: 'eu-west-1' },
      nodeGroups: [{ name: 'a', disablePodIMDS: true }],
      managedNodeGroups: [{ name: 'm', disableIMDSv1: false, disablePodIMDS: true }],
    };
    assert.deepEqual(summary(nodeSettingsChecker.check(object, {})), []);
  });
  it('every row cites the tool source file it was checked against (owner/repo path)', () => {
    for (const entry of NODE_KINDS)
      assert.match(entry.source, /^[\w.-]+\/[\w.-]+ [\w./|-]+\.go /, `${entry.group} ${entry.kind}`);
  });
  it('messages say what was found and that it was defaulted', () => {
    const findings = nodeSettingsChecker.check(
      {
        apiVersion: 'infrastructure.cluster.x-k8s.io/v1beta2',
        kind: 'AWSMachineTemplate',
        spec: { template: { spec: {} } },
      },
      {},
    );
    assert.equal(findings.length, 1);
    assert.match(
      findings[0]?.message ?? '',
      /httpTokens is not set and defaults to "optional" for AWSMachineTemplate/,
    );
  });
  it('a spec that is not an object is reported, not thrown', () => {
    assert.deepEqual(
      summary(
        nodeSettingsChecker.check(
          { apiVersion: 'karpenter.k8s.aws/v1', kind: 'EC2NodeClass', spec: 'x' },
          {},
        ),
      ),
      ['RT5006 error /spec'],
    );
  });
  it('unknown versions and kinds are not selected', () => {
    assert.equal(
      nodeSettingsChecker.appliesTo({ apiVersion: 'karpenter.k8s.aws/v9', kind: 'EC2NodeClass' }),
      false,
    );
    assert.equal(nodeSettingsChecker.appliesTo({ apiVersion: 'v1', kind: 'Pod' }), false);
  });
});
