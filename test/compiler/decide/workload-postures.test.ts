// Table-driven tests of posture precedence (docs/semantics.md "Postures"): a container's Namespace annotation
// over the configured default postures over `audit`; the host's configured postures over `audit`, never the
// namespace defaults. Each case is decided by the oracle, so the precedence is checked on decisions, not only
// on the resolved values.
import assert from 'node:assert/strict';
import { decideOperation } from '../../../compiler/decide/decide.js';
import type { OperationRequest, Workload } from '../../../compiler/decide/decision-input.js';
import { getWorkloadPostures } from '../../../compiler/decide/workload-postures.js';
import type { RuleSet } from '../../../compiler/ir/rule-set.js';
import {
  layerPostures,
  resolveWorkloadPostures,
  type DeclaredPostures,
  type PostureSettings,
  type Postures,
} from '../../../compiler/model/posture.js';
import { Action, Operation, dir, makeHostPolicy, makePodPolicy, path, protocol } from './rule-set-builder.js';

const pod = (namespace: string): Workload => ({
  kind: 'container',
  namespace,
  labels: { app: 'web' },
  nodeLabels: {},
});
const host: Workload = { kind: 'host', namespace: '', labels: {}, nodeLabels: { role: 'edge' } };

/** Every class least-permissive for both kinds of workload: an Allow list of each class. */
const allowLists = (namespace: string): RuleSet => ({
  policies: [
    makePodPolicy(
      'allow-pod',
      [
        { operation: Operation.Process, matcher: path('/usr/bin/app'), action: Action.Allow },
        { matcher: dir('/app/', true), action: Action.Allow },
        { matcher: protocol('udp'), action: Action.Allow },
      ],
      { namespace },
    ),
    makeHostPolicy(
      'allow-host',
      [
        { operation: Operation.Process, matcher: path('/usr/sbin/sshd'), action: Action.Allow },
        { matcher: dir('/srv/', true), action: Action.Allow },
        { matcher: protocol('udp'), action: Action.Allow },
      ],
      { role: 'edge' },
    ),
  ],
});

const exec = (resource: string): OperationRequest => ({
  operation: Operation.Process,
  resource,
  parentExecutable: '/bin/sh',
  write: false,
  owner: false,
});
const open = (resource: string): OperationRequest => ({
  operation: Operation.File,
  resource,
  executable: '/bin/cat',
  write: false,
  owner: false,
});
const connect: OperationRequest = {
  operation: Operation.Network,
  resource: 'tcp',
  executable: '/usr/bin/curl',
  write: false,
  owner: false,
};

interface Case {
  name: string;
  workload: Workload;
  annotations?: Record<string, DeclaredPostures>;
  settings?: PostureSettings;
  /** Expected postures, and so the posture decisions of an unlisted exec, file and connection. */
  expect: Postures;
}

const A = 'audit';
const B = 'block';

const cases: Case[] = [
  {
    name: 'container, nothing set: audit everywhere',
    workload: pod('ns-a'),
    expect: { file: A, network: A, capabilities: A },
  },
  {
    name: 'container, annotation only: the annotated class follows it',
    workload: pod('ns-a'),
    annotations: { 'ns-a': { file: B } },
    expect: { file: B, network: A, capabilities: A },
  },
  {
    name: 'container, defaults only: every unannotated class takes the configured default',
    workload: pod('ns-a'),
    settings: { defaults: { file: B, network: B } },
    expect: { file: B, network: B, capabilities: A },
  },
  {
    name: 'container, annotation audit overrides a default block (per class)',
    workload: pod('ns-a'),
    annotations: { 'ns-a': { file: A } },
    settings: { defaults: { file: B, network: B, capabilities: B } },
    expect: { file: A, network: B, capabilities: B },
  },
  {
    name: 'container, annotation block overrides a default audit',
    workload: pod('ns-a'),
    annotations: { 'ns-a': { network: B } },
    settings: { defaults: { file: A, network: A } },
    expect: { file: A, network: B, capabilities: A },
  },
  {
    name: "container, another namespace's annotation does not apply",
    workload: pod('ns-a'),
    annotations: { 'ns-b': { file: B } },
    settings: { defaults: { network: B } },
    expect: { file: A, network: B, capabilities: A },
  },
  {
    name: 'container, host postures do not apply to containers',
    workload: pod('ns-a'),
    settings: { host: { file: B, network: B, capabilities: B } },
    expect: { file: A, network: A, capabilities: A },
  },
  {
    name: 'host, nothing set: audit',
    workload: host,
    expect: { file: A, network: A, capabilities: A },
  },
  {
    name: 'host, host postures block: protect mode',
    workload: host,
    settings: { host: { file: B, network: B, capabilities: B } },
    expect: { file: B, network: B, capabilities: B },
  },
  {
    name: 'host, one class set: the others audit',
    workload: host,
    settings: { host: { network: B } },
    expect: { file: A, network: B, capabilities: A },
  },
  {
    name: 'host, namespace defaults do not apply to the host',
    workload: host,
    settings: { defaults: { file: B, network: B, capabilities: B } },
    expect: { file: A, network: A, capabilities: A },
  },
  {
    name: 'host, an annotation on the empty namespace name does not apply to the host',
    workload: host,
    annotations: { '': { file: B } },
    settings: { host: { file: A } },
    expect: { file: A, network: A, capabilities: A },
  },
];

describe('posture precedence (oracle, table-driven)', () => {
  for (const c of cases) {
    it(c.name, () => {
      const ns = c.workload.kind === 'host' ? 'ns-a' : c.workload.namespace;
      const postures = getWorkloadPostures(
        c.workload,
        new Map(Object.entries(c.annotations ?? {})),
        c.settings,
      );
      assert.deepEqual(postures, c.expect);
      const ruleSet = allowLists(ns);
      const checks: [OperationRequest, keyof Postures][] = [
        [exec('/tmp/unlisted'), 'file'],
        [open('/etc/shadow'), 'file'],
        [connect, 'network'],
      ];
      for (const [op, cls] of checks) {
        const d = decideOperation(ruleSet, c.workload, op, postures);
        const block = c.expect[cls] === B;
        assert.equal(d.basis, 'posture', `${op.operation} decided by the posture`);
        assert.equal(d.allowed, !block, `${op.operation} allowed`);
        assert.equal(d.alert?.PolicyName, 'DefaultPosture');
        assert.equal(d.alert?.Action, block ? 'Block' : 'Audit');
        assert.equal(
          d.alert?.Type,
          c.workload.kind === 'host' ? 'MatchedHostPolicy' : 'MatchedPolicy',
          'alert type',
        );
      }
      // A listed operation stays allowed whatever the posture.
      const listed = c.workload.kind === 'host' ? open('/srv/www/index.html') : open('/app/main.js');
      const d = decideOperation(ruleSet, c.workload, listed, postures);
      assert.equal(d.allowed, true);
      assert.equal(d.alert, null);
    });
  }

  it('layerPostures takes the first declared value per class and `audit` when none declares one', () => {
    assert.deepEqual(layerPostures(undefined, { file: B }, { file: A, network: B }), {
      file: B,
      network: B,
      capabilities: A,
    });
    assert.deepEqual(layerPostures(), { file: A, network: A, capabilities: A });
  });

  it('resolveWorkloadPostures without settings is the annotation rule of before (defaults audit)', () => {
    assert.deepEqual(resolveWorkloadPostures({ host: false, namespace: { capabilities: B } }), {
      file: A,
      network: A,
      capabilities: B,
    });
    assert.deepEqual(resolveWorkloadPostures({ host: true, namespace: { file: B } }), {
      file: A,
      network: A,
      capabilities: A,
    });
  });
});
