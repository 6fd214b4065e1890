// The crd backend and compile's collection of artifacts take any number of policies: 160 000 documents are more
// than one spread call can pass as arguments (about 100 000 overflow the stack), and every one is written.
import assert from 'node:assert/strict';
import { crdBackend } from '../../../../compiler/backends/crd/crd-backend.js';
import type { PolicyDocument } from '../../../../compiler/model/policy-document.js';

const COUNT = 160_000;

function policyDocument(i: number): PolicyDocument {
  const object = {
    apiVersion: 'security.runtime.com/v1',
    kind: 'RuntimeHostPolicy',
    metadata: { name: `host-${i}` },
    spec: {
      nodeSelector: { matchLabels: { pool: 'a' } },
      file: { matchPaths: [{ path: `/etc/f-${i}` }] },
      action: 'Block',
    },
  };
  return {
    kind: 'RuntimeHostPolicy',
    object,
    file: 'p.yaml',
    index: i,
    line: 1,
  } as unknown as PolicyDocument;
}

describe('crd backend: many policies', function () {
  // Emits 160 000 manifests: bounded by count; a loaded machine takes longer.
  this.timeout(120_000);

  it(`writes a manifest for each of ${COUNT} policies`, () => {
    const documents = Array.from({ length: COUNT }, (_, i) => policyDocument(i));
    const out = crdBackend.emit({ ruleSet: { policies: [] }, documents });
    const manifests = out.artifacts.filter((a) => a.path.startsWith('policies/'));
    assert.equal(manifests.length, COUNT);
    assert.ok(manifests.some((a) => a.path === `policies/runtimehostpolicy/host-${COUNT - 1}.yaml`));
  });
});
