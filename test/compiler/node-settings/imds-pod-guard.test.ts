// `rtctl lint` relates node pools that let pods reach the metadata service (hop limit 2 with the
// security.runtime.com/allow-pod-imds annotation, RT5003) to the IMDS guard policies of the same input:
// RT5008 names the policy that keeps the other pods out, RT5009 warns when none does. Uses the shipped
// policies/hardening/imds/imds-guard.yaml, and checks the guard's decisions with the oracle.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { decideOperation } from '../../../compiler/decide/decide.js';
import { lintTexts } from '../../../compiler/lint.js';
import { REPO_ROOT } from '../../support/paths.js';

const GUARD = path.join(REPO_ROOT, 'policies', 'hardening', 'imds', 'imds-guard.yaml');

const NODE_CLASS = `apiVersion: karpenter.k8s.aws/v1
kind: EC2NodeClass
metadata:
  name: system
  annotations:
    security.runtime.com/allow-pod-imds: aws-load-balancer-controller reads the VPC id
spec:
  metadataOptions:
    httpTokens: required
    httpPutResponseHopLimit: 2
`;

function codes(texts: { file: string; text: string }[]): string[] {
  return lintTexts(texts)
    .diagnostics.filter((d) => d.code.startsWith('RT500'))
    .map((d) => `${d.file}:${d.start?.line ?? 0} ${d.code} ${d.severity}`);
}

describe('IMDS guard: node pools that let pods through and the policies that keep other pods out', () => {
  it('names the guard policy next to a node pool that allows pods (RT5008)', () => {
    const guard = {
      file: 'imds-guard.yaml',
      text: readFileSync(GUARD, 'utf8').replace('name: imds-guard', 'name: imds-guard\n  namespace: team-a'),
    };
    const got = codes([{ file: 'nodeclass.yaml', text: NODE_CLASS }, guard]);
    assert.deepEqual(got, ['nodeclass.yaml:10 RT5003 warning', 'nodeclass.yaml:10 RT5008 info']);
    const d = lintTexts([{ file: 'nodeclass.yaml', text: NODE_CLASS }, guard]).diagnostics.find(
      (x) => x.code === 'RT5008',
    );
    assert.match(
      d?.message ?? '',
      /kept out by team-a\/imds-guard \(pods with NotIn security\.runtime\.com\/imds-access=allowed; imds-guard\.yaml:\d+\)/,
    );
    assert.equal(d?.related?.[0]?.file, 'imds-guard.yaml');
  });

  it('warns when no policy of the input keeps pods out (RT5009)', () => {
    const other = [
      'apiVersion: security.runtime.com/v1',
      'kind: RuntimePolicy',
      'metadata: {name: other, namespace: team-a}',
      'spec:',
      '  selector: {matchLabels: {}}',
      '  process:',
      '    matchPaths:',
      '      - path: /usr/bin/nc',
      '  action: Block',
    ].join('\n');
    assert.deepEqual(
      codes([
        { file: 'nodeclass.yaml', text: NODE_CLASS },
        { file: 'other.yaml', text: other },
      ]),
      ['nodeclass.yaml:10 RT5003 warning', 'nodeclass.yaml:10 RT5009 warning'],
    );
  });

  it('says nothing of policies when the input has none (a node-pool file alone, as the webhook sees it)', () => {
    assert.deepEqual(codes([{ file: 'nodeclass.yaml', text: NODE_CLASS }]), [
      'nodeclass.yaml:10 RT5003 warning',
    ]);
  });

  it('an Audit rule, or a Block rule limited to some executables, is no guard', () => {
    for (const extra of ['action: Audit', 'action: Block\n        fromSource: [{path: /usr/bin/curl}]']) {
      const text = [
        'apiVersion: security.runtime.com/v1',
        'kind: RuntimePolicy',
        'metadata: {name: weak, namespace: team-a}',
        'spec:',
        '  selector: {matchLabels: {}}',
        '  network:',
        '    matchAddresses:',
        `      - cidr: 169.254.169.254/32\n        ${extra}`,
      ].join('\n');
      assert.ok(
        codes([
          { file: 'nodeclass.yaml', text: NODE_CLASS },
          { file: 'weak.yaml', text },
        ]).includes('nodeclass.yaml:10 RT5009 warning'),
        extra,
      );
    }
  });

  it('says nothing more for a node pool with hop limit 1', () => {
    const text = NODE_CLASS.replace('httpPutResponseHopLimit: 2', 'httpPutResponseHopLimit: 1');
    assert.deepEqual(codes([{ file: 'nodeclass.yaml', text }]), []);
  });

  it('the guard blocks unlabelled pods and lets labelled ones through (oracle)', () => {
    const { ruleSet } = lintTexts([{ file: 'imds-guard.yaml', text: readFileSync(GUARD, 'utf8') }]);
    const op = (address: string) => ({
      operation: 'Network' as const,
      resource: 'tcp',
      address,
      port: 80,
      write: false,
      owner: false,
    });
    const pod = (labels: Record<string, string>) => ({
      kind: 'container' as const,
      namespace: 'default',
      labels,
      nodeLabels: {},
    });
    for (const address of ['169.254.169.254', 'fd00:ec2::254', '::ffff:169.254.169.254'])
      assert.equal(decideOperation(ruleSet, pod({ app: 'web' }), op(address)).allowed, false, address);
    assert.equal(
      decideOperation(ruleSet, pod({ 'security.runtime.com/imds-access': 'allowed' }), op('169.254.169.254'))
        .allowed,
      true,
    );
    assert.equal(decideOperation(ruleSet, pod({ app: 'web' }), op('10.0.0.1')).allowed, true);
  });
});
