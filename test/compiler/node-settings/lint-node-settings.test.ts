// `rtctl lint` (lintTexts) applies the IMDS rules to node-settings manifests in git, eksctl ClusterConfig
// included, with file positions; and the namespace posture rule to Namespaces.
import assert from 'node:assert/strict';
import { lintTexts } from '../../../compiler/lint.js';

const TEXT = `apiVersion: eksctl.io/v1alpha5
kind: ClusterConfig
metadata:
  name: c
  region: eu-west-1
nodeGroups:
  - name: ng-1
    disableIMDSv1: true
    disablePodIMDS: true
  - name: ng-2
managedNodeGroups:
  - name: mng-1
    disableIMDSv1: "yes"
    disablePodIMDS: true
---
apiVersion: karpenter.k8s.aws/v1
kind: EC2NodeClass
metadata:
  name: default
spec:
  metadataOptions:
    httpTokens: optional
---
apiVersion: v1
kind: Namespace
metadata:
  name: a
  annotations:
    runtime-file-posture: Block
`;

describe('lint applies node-settings and posture rules to files', () => {
  const { diagnostics } = lintTexts([{ file: 'cluster.yaml', text: TEXT }]);
  const got = diagnostics.map(
    (d) => `${d.document}:${d.start?.line ?? 0}:${d.start?.column ?? 0} ${d.code} ${d.pointer}`,
  );

  it('reports every finding with its document, line and column', () => {
    assert.deepEqual(got.sort(), [
      '0:10:5 RT5001 /nodeGroups/1/disableIMDSv1',
      '0:10:5 RT5002 /nodeGroups/1/disablePodIMDS',
      '0:13:5 RT5006 /managedNodeGroups/0/disableIMDSv1',
      '1:22:5 RT5001 /spec/metadataOptions/httpTokens',
      '2:29:5 RT5010 /metadata/annotations/runtime-file-posture',
    ]);
  });

  it('speaks each kind’s own field names in the remedy', () => {
    const eksctl = diagnostics.find((d) => d.code === 'RT5001' && d.document === 0);
    assert.match(
      eksctl?.message ?? '',
      /disableIMDSv1 is not set and defaults to "optional" for ClusterConfig.*set disableIMDSv1: true/,
    );
    const hop = diagnostics.find((d) => d.code === 'RT5002');
    assert.match(hop?.message ?? '', /set disablePodIMDS: true, or annotate/);
    const karpenter = diagnostics.find((d) => d.code === 'RT5001' && d.document === 1);
    assert.match(karpenter?.message ?? '', /httpTokens is "optional".*set httpTokens: required/);
  });
});
