// The pure core of the webhook: findings to decisions, combining rules, rendering a response, reading reviews.
import assert from 'node:assert/strict';
import { createReviewParser } from '../../webhook/admission-review.js';
import { ALLOW, combineDecisions, decideFromFindings, renderDecision } from '../../webhook/decision.js';
import { decideByCheckers } from '../../webhook/rules/checker-rule.js';
import type { Finding } from '../../compiler/diagnostics/finding.js';

const findings: Finding[] = [
  {
    code: 'RT3001',
    severity: 'error',
    pointer: '/spec/process/matchPaths/0/path',
    message: 'spec.process.matchPaths[0].path: relative',
  },
  { code: 'RT5004', severity: 'warning', pointer: '/spec/metadataOptions/httpEndpoint', message: 'disabled' },
  { code: 'RT1011', severity: 'info', pointer: '', message: 'unknown kind' },
];

describe('webhook decisions (pure)', () => {
  it('errors deny; warnings and infos warn; paths are dotted; a leading path in the message is said once', () => {
    const d = decideFromFindings(findings);
    assert.equal(d.allowed, false);
    assert.deepEqual(d.errors, [
      { code: 'RT3001', path: 'spec.process.matchPaths[0].path', message: 'relative' },
    ]);
    assert.deepEqual(d.warnings, [
      { code: 'RT5004', path: 'spec.metadataOptions.httpEndpoint', message: 'disabled' },
      { code: 'RT1011', path: '.', message: 'unknown kind' },
    ]);
  });

  it('combining: denied when any denies, items kept in rule order', () => {
    const a = decideFromFindings([findings[1] as Finding]);
    const b = decideFromFindings([findings[0] as Finding]);
    const c = combineDecisions([ALLOW, a, b]);
    assert.equal(c.allowed, false);
    assert.deepEqual(
      c.warnings.map((w) => w.code),
      ['RT5004'],
    );
    assert.deepEqual(
      c.errors.map((e) => e.code),
      ['RT3001'],
    );
    assert.equal(combineDecisions([ALLOW, a]).allowed, true);
    assert.equal(combineDecisions([]).allowed, true);
  });

  it('renders the AdmissionResponse: uid, allowed, status code and message lines, warnings', () => {
    const r = renderDecision('u-1', decideFromFindings(findings));
    assert.deepEqual(r, {
      uid: 'u-1',
      allowed: false,
      status: { code: 403, reason: 'Forbidden', message: 'RT3001 spec.process.matchPaths[0].path: relative' },
      warnings: ['RT5004 spec.metadataOptions.httpEndpoint: disabled', 'RT1011 .: unknown kind'],
    });
    assert.deepEqual(renderDecision('u-2', ALLOW), {
      uid: 'u-2',
      allowed: true,
      status: { code: 200, message: 'allowed' },
    });
  });

  it('the checker rule checks CREATE and UPDATE only, passing the operation on', () => {
    const seen: string[] = [];
    const check = (_o: unknown, ctx: { operation?: string }): Finding[] => {
      seen.push(ctx.operation ?? '');
      return [findings[0] as Finding];
    };
    const request = { uid: 'u', kind: { group: '', version: 'v1', kind: 'Namespace' }, object: {} };
    assert.equal(decideByCheckers({ ...request, operation: 'CREATE' }, check).allowed, false);
    assert.equal(decideByCheckers({ ...request, operation: 'UPDATE' }, check).allowed, false);
    assert.equal(decideByCheckers({ ...request, operation: 'DELETE' }, check).allowed, true);
    assert.equal(decideByCheckers({ ...request, operation: 'CONNECT' }, check).allowed, true);
    assert.deepEqual(seen, ['CREATE', 'UPDATE']);
  });

  it('the review parser accepts v1 reviews and names what is wrong otherwise', () => {
    const parse = createReviewParser();
    const ok = parse({
      apiVersion: 'admission.k8s.io/v1',
      kind: 'AdmissionReview',
      request: {
        uid: 'u',
        kind: { group: '', version: 'v1', kind: 'Namespace' },
        operation: 'DELETE',
        object: null,
      },
    });
    assert.equal(ok.ok, true);
    const reasons = [
      parse(null),
      parse({ apiVersion: 'admission.k8s.io/v1beta1' }),
      parse({
        apiVersion: 'admission.k8s.io/v1',
        kind: 'AdmissionReview',
        request: { uid: '', kind: { group: '', version: 'v1', kind: 'K' }, operation: 'DELETE' },
      }),
      parse({
        apiVersion: 'admission.k8s.io/v1',
        kind: 'AdmissionReview',
        request: { uid: 'x'.repeat(300), kind: { group: '', version: 'v1', kind: 'K' }, operation: 'DELETE' },
      }),
    ].map((r) => (r.ok ? 'ok' : r.reason));
    assert.deepEqual(reasons, [
      'body: expected an AdmissionReview object',
      'apiVersion: "admission.k8s.io/v1beta1"; only admission.k8s.io/v1 is supported',
      'request.uid: must NOT have fewer than 1 characters',
      'request.uid: must NOT have more than 256 characters',
    ]);
  });
});
