// The pure parts of install/uninstall: the plan's order and labels, the certificate check, workload readiness
// and node-report reading, the duration flag. Table-driven.
import assert from 'node:assert/strict';
import { NODE_STATUS_DATA_KEY } from '../../../compiler/model/node-status.js';
import { parseDuration } from '../../../install/cli.js';
import {
  InstallStep,
  MANAGED_BY_LABEL,
  planInstall,
  planUninstall,
  VERSION_LABEL,
} from '../../../install/cluster/install-plan.js';
import { readReport, workloadProblem } from '../../../install/cluster/readiness.js';
import {
  certificateProblem,
  issueCertificate,
  webhookDnsNames,
} from '../../../install/cluster/webhook-certificate.js';
import { readValues } from '../../../install/values.js';

const NOW = new Date('2026-06-01T00:00:00Z');
const DAY = 24 * 3600 * 1000;

describe('install plan and checks', function () {
  this.timeout(30_000);
  const values = readValues({ controller: { enabled: true } }).values;
  const material = issueCertificate('rtctl-system', NOW);

  it('steps in dependency order, the webhook configuration alone and last, every object labelled with the version', () => {
    const plan = planInstall({ values, certificate: { kind: 'secret', material }, ownNamespace: true });
    assert.deepEqual(
      plan.map((s) => s.step),
      Object.values(InstallStep),
    );
    assert.deepEqual(
      plan.at(-1)?.objects.map((o) => o['kind']),
      ['ValidatingWebhookConfiguration'],
    );
    for (const s of plan)
      for (const o of s.objects)
        assert.equal(o.metadata?.labels?.[VERSION_LABEL], '0.1.0', `${String(o['kind'])}`);
    const ns = plan.find((s) => s.step === InstallStep.Namespace)?.objects[0];
    assert.equal(ns?.metadata?.labels?.[MANAGED_BY_LABEL], 'rtctl');
    const foreign = planInstall({ values, certificate: { kind: 'secret', material }, ownNamespace: false });
    assert.equal(
      foreign.find((s) => s.step === InstallStep.Namespace)?.objects[0]?.metadata?.labels?.[MANAGED_BY_LABEL],
      undefined,
    );
  });

  it('the same inputs give byte-identical objects (no time in any pod template)', () => {
    const a = JSON.stringify(
      planInstall({ values, certificate: { kind: 'secret', material }, ownNamespace: true }),
    );
    const b = JSON.stringify(
      planInstall({ values, certificate: { kind: 'secret', material }, ownNamespace: true }),
    );
    assert.equal(a, b);
  });

  it('uninstall deletes in reverse order, every component and both certificate sources', () => {
    const plan = planUninstall(readValues({}).values);
    assert.deepEqual(
      plan.map((s) => s.step),
      [...Object.values(InstallStep)].reverse(),
    );
    const kinds = plan.flatMap((s) => s.objects.map((o) => `${String(o['kind'])} ${o.metadata?.name ?? ''}`));
    for (const k of [
      'Deployment rtctl-relay',
      'Deployment rtctl-controller',
      'Issuer rtctl-webhook',
      'Secret rtctl-webhook-tls',
    ])
      assert.ok(kinds.includes(k), k);
  });

  const other = issueCertificate('other-ns', NOW);
  const certCases: Array<[string, Parameters<typeof certificateProblem>[0], Date, RegExp | undefined]> = [
    ['valid', material, NOW, undefined],
    ['another namespace', other, NOW, /does not name rtctl-webhook\.rtctl-system\.svc/],
    ['key of another certificate', { ...material, tlsKey: other.tlsKey }, NOW, /tls\.key does not match/],
    ['signed by another CA', { ...material, caCert: other.caCert }, NOW, /not signed by ca\.crt/],
    [
      'expires within 30 days',
      material,
      new Date(NOW.getTime() + 340 * DAY),
      /expires .* \(renewed 30 days before\)/,
    ],
    ['not PEM', { ...material, tlsCert: 'garbage' }, NOW, /^unreadable/],
  ];
  for (const [name, m, at, expected] of certCases)
    it(`certificate check: ${name}`, () => {
      const problem = certificateProblem(m, webhookDnsNames('rtctl-system'), at);
      if (expected === undefined) assert.equal(problem, undefined);
      else assert.match(problem ?? '', expected);
    });

  const workloadCases: Array<[string, Record<string, unknown> | undefined, string | undefined]> = [
    ['absent', undefined, 'not found'],
    [
      'DaemonSet ready',
      {
        kind: 'DaemonSet',
        metadata: { generation: 2 },
        status: {
          observedGeneration: 2,
          desiredNumberScheduled: 3,
          numberReady: 3,
          updatedNumberScheduled: 3,
          numberAvailable: 3,
        },
      },
      undefined,
    ],
    [
      'DaemonSet generation not observed',
      {
        kind: 'DaemonSet',
        metadata: { generation: 3 },
        status: {
          observedGeneration: 2,
          desiredNumberScheduled: 3,
          numberReady: 3,
          updatedNumberScheduled: 3,
          numberAvailable: 3,
        },
      },
      'generation 3 not observed yet (observed 2)',
    ],
    [
      'DaemonSet rolling',
      {
        kind: 'DaemonSet',
        metadata: { generation: 1 },
        status: {
          observedGeneration: 1,
          desiredNumberScheduled: 3,
          numberReady: 3,
          updatedNumberScheduled: 1,
          numberAvailable: 2,
        },
      },
      '1/3 updated, 2/3 available (pods on 3 nodes)',
    ],
    [
      'Deployment short of ready',
      {
        kind: 'Deployment',
        metadata: { generation: 1 },
        spec: { replicas: 2 },
        status: { observedGeneration: 1, readyReplicas: 1, updatedReplicas: 2, availableReplicas: 1 },
      },
      '1/2 ready, 1/2 available',
    ],
  ];
  for (const [name, object, expected] of workloadCases)
    it(`workload readiness: ${name}`, () => assert.equal(workloadProblem(object), expected));

  const report = (data: unknown): Record<string, unknown> => ({
    metadata: { name: 'rtctl-node-a' },
    data: { [NODE_STATUS_DATA_KEY]: typeof data === 'string' ? data : JSON.stringify(data) },
  });
  const reportCases: Array<[string, Record<string, unknown>, RegExp]> = [
    ['no data key', { metadata: { name: 'rtctl-node-a' } }, /no status\.json/],
    ['not JSON', report('{'), /is not JSON/],
    ['another version', report({ version: 2 }), /report version 2/],
    ['fields missing', report({ version: 1, node: 'a' }), /lacks node, plane or updatedAt/],
  ];
  for (const [name, cm, expected] of reportCases)
    it(`node report: ${name} is named, not dropped`, () => {
      const r = readReport(cm);
      assert.ok('problem' in r);
      assert.equal(r.object, 'rtctl-node-a');
      assert.match(r.problem, expected);
    });

  it('durations', () => {
    assert.deepEqual(['90', '90s', '5m', '1h', '250ms', '', '5 m', '-1s', '1d'].map(parseDuration), [
      90_000,
      90_000,
      300_000,
      3_600_000,
      250,
      undefined,
      undefined,
      undefined,
      undefined,
    ]);
  });
});
